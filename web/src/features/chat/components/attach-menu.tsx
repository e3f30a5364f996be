import { useTranslation } from 'react-i18next';
import { Button } from '@/components/button';
import { Menu, MenuAnchor, MenuItem, useMenu } from '@/components/menu';
import type { AttachButtonGate, DocumentGate } from '../lib/gating';
import styles from './attach-menu.module.css';
import { CameraIcon, DocumentIcon, ImageIcon, LockIcon, PaperclipIcon } from './chat-icons';

export interface AttachMenuProps {
  gate: AttachButtonGate;
  /** Whether images can be attached (photos and camera are offered). */
  images: boolean;
  documents: DocumentGate;
  onPhotos: () => void;
  onCamera: () => void;
  /** Opens the document picker, or shows the premium or "coming soon" notice. */
  onDocument: () => void;
  /** The trigger's look in the toolbar. */
  className?: string;
  lockClassName?: string;
}

/**
 * The paperclip: a small menu (photos, camera, document) once images or documents can be
 * attached; before that, or while the plan is unknown, it answers at once with the
 * document notice.
 * Keyboard as in a menu button: arrows move, Escape closes back to the button.
 */
export function AttachMenu({ gate, images, documents, onPhotos, onCamera, onDocument, className, lockClassName }: AttachMenuProps) {
  const { t } = useTranslation('chat');
  const isMenu = gate === 'menu';
  const menu = useMenu({ enabled: isMenu });

  const choose = (action: () => void) => {
    // Synchronously in the click: a file picker opens only from a user's gesture.
    menu.close(false);
    action();
  };

  return (
    <MenuAnchor {...menu.anchorProps}>
      <Button
        {...menu.buttonProps}
        variant="ghost"
        iconOnly
        className={className}
        aria-label={t('composer.attach')}
        data-testid="attach-button"
        data-gate={gate}
        disabled={gate === 'unknown'}
        onClick={() => (isMenu ? menu.toggle() : onDocument())}
        onKeyDown={menu.openOnKey('ArrowUp')}
      >
        <PaperclipIcon />
        {gate === 'premium' && <LockIcon className={lockClassName} width={12} height={12} />}
      </Button>
      {/* Opens upwards: the composer sits at the bottom of the screen. */}
      <Menu {...menu.menuProps} label={t('attach.menu')} placement="above-start" className={styles.menu} data-testid="attach-menu">
        {images && (
          <>
            <MenuItem data-testid="attach-photos" onClick={() => choose(onPhotos)}>
              <ImageIcon width={18} height={18} />
              {t('attach.photos')}
            </MenuItem>
            <MenuItem data-testid="attach-camera" onClick={() => choose(onCamera)}>
              <CameraIcon width={18} height={18} />
              {t('attach.camera')}
            </MenuItem>
          </>
        )}
        <MenuItem data-testid="attach-document" data-gate={documents} onClick={() => choose(onDocument)}>
          <DocumentIcon width={18} height={18} />
          {t('attach.document')}
          {documents === 'premium' && <LockIcon className={styles.itemLock} width={14} height={14} />}
        </MenuItem>
      </Menu>
    </MenuAnchor>
  );
}
