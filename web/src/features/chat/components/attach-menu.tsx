import { useEffect, useId, useRef, useState, type KeyboardEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from '@/components/button';
import type { AttachButtonGate, DocumentGate } from '../lib/gating';
import styles from './attach-menu.module.css';
import { CameraIcon, DocumentIcon, ImageIcon, LockIcon, PaperclipIcon } from './chat-icons';
import { onMenuKeyDown } from '../lib/menu-keys';

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
  const menuId = useId();
  const [open, setOpen] = useState(false);
  const anchorRef = useRef<HTMLDivElement>(null);
  const buttonRef = useRef<HTMLButtonElement>(null);
  const menuRef = useRef<HTMLDivElement>(null);
  const isMenu = gate === 'menu';
  const shown = open && isMenu;

  // Opened: the first item takes the focus. A press anywhere else closes it.
  useEffect(() => {
    if (!shown) return;
    menuRef.current?.querySelector<HTMLElement>('[role="menuitem"]')?.focus();
    const onPointerDown = (event: PointerEvent) => {
      if (!anchorRef.current?.contains(event.target as Node)) setOpen(false);
    };
    document.addEventListener('pointerdown', onPointerDown);
    return () => document.removeEventListener('pointerdown', onPointerDown);
  }, [shown]);

  const close = (refocus: boolean) => {
    setOpen(false);
    if (refocus) buttonRef.current?.focus();
  };

  const choose = (action: () => void) => {
    // Synchronously in the click: a file picker opens only from a user's gesture.
    close(false);
    action();
  };

  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => onMenuKeyDown(event, menuRef.current, close);

  return (
    <div ref={anchorRef} className={styles.anchor}>
      <Button
        ref={buttonRef}
        variant="ghost"
        iconOnly
        className={className}
        aria-label={t('composer.attach')}
        aria-haspopup={isMenu ? 'menu' : undefined}
        aria-expanded={isMenu ? shown : undefined}
        aria-controls={shown ? menuId : undefined}
        data-testid="attach-button"
        data-gate={gate}
        disabled={gate === 'unknown'}
        onClick={() => (isMenu ? setOpen(!open) : onDocument())}
        onKeyDown={(event) => {
          if (isMenu && !shown && event.key === 'ArrowUp') {
            event.preventDefault();
            setOpen(true);
          }
        }}
      >
        <PaperclipIcon />
        {gate === 'premium' && <LockIcon className={lockClassName} width={12} height={12} />}
      </Button>
      {shown && (
        <div
          ref={menuRef}
          id={menuId}
          role="menu"
          aria-label={t('attach.menu')}
          className={styles.menu}
          data-testid="attach-menu"
          onKeyDown={onKeyDown}
        >
          {images && (
            <>
              <button type="button" role="menuitem" tabIndex={-1} className={styles.item} data-testid="attach-photos" onClick={() => choose(onPhotos)}>
                <ImageIcon width={18} height={18} />
                {t('attach.photos')}
              </button>
              <button type="button" role="menuitem" tabIndex={-1} className={styles.item} data-testid="attach-camera" onClick={() => choose(onCamera)}>
                <CameraIcon width={18} height={18} />
                {t('attach.camera')}
              </button>
            </>
          )}
          <button
            type="button"
            role="menuitem"
            tabIndex={-1}
            className={styles.item}
            data-testid="attach-document"
            data-gate={documents}
            onClick={() => choose(onDocument)}
          >
            <DocumentIcon width={18} height={18} />
            {t('attach.document')}
            {documents === 'premium' && <LockIcon className={styles.itemLock} width={14} height={14} />}
          </button>
        </div>
      )}
    </div>
  );
}
