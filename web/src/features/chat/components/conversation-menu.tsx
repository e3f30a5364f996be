import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from '@/components/button';
import { Menu, MenuAnchor, MenuItem, useMenu } from '@/components/menu';
import type { Conversation } from '@/types/generated';
import { ArchiveIcon, FolderMoveIcon, MoreIcon, PencilIcon, PinIcon, ShareIcon, TrashIcon } from './chat-icons';
import styles from './conversation-menu.module.css';

export interface ConversationMenuActions {
  onRename?: () => void;
  onPin?: () => void;
  onArchive?: () => void;
  onShare?: () => void;
  /** Shown only when there is somewhere to move. */
  onMove?: (() => void) | undefined;
  onDelete: () => void;
}

/**
 * A conversation row's "⋯" menu: rename, pin or unpin, share, move to a project, archive
 * or unarchive, delete. Keyboard as in a menu button (components/menu).
 */
export function ConversationMenu({ conversation, actions }: { conversation: Conversation; actions: ConversationMenuActions }) {
  const { t } = useTranslation('chat');
  const menu = useMenu();
  const title = conversation.title ?? t('untitled');

  const item = (testId: string, icon: ReactNode, label: string, action: (() => void) | undefined, danger = false) =>
    action && (
      <MenuItem
        danger={danger}
        data-testid={testId}
        onClick={() => {
          // The focus goes back to the row's button; a dialog that opens takes it from there.
          menu.close(true);
          action();
        }}
      >
        {icon}
        {label}
      </MenuItem>
    );

  return (
    <MenuAnchor {...menu.anchorProps} className={styles.anchor}>
      <Button
        {...menu.buttonProps}
        variant="ghost"
        size="small"
        iconOnly
        aria-label={t('menu.button', { title })}
        data-testid="conversation-menu-button"
        onClick={menu.toggle}
        onKeyDown={menu.openOnKey('ArrowDown')}
      >
        <MoreIcon width={16} height={16} />
      </Button>
      {/* Under its button, right-aligned, so it stays within the sidebar at 360 px. */}
      <Menu {...menu.menuProps} label={t('menu.label', { title })} placement="below-end" className={styles.menu} data-testid="conversation-menu">
        {item('rename-conversation', <PencilIcon width={16} height={16} />, t('menu.rename'), actions.onRename)}
        {item(
          'pin-conversation',
          <PinIcon width={16} height={16} />,
          conversation.pinned ? t('menu.unpin') : t('menu.pin'),
          actions.onPin,
        )}
        {item('share-conversation', <ShareIcon width={16} height={16} />, t('menu.share'), actions.onShare)}
        {item('move-conversation', <FolderMoveIcon width={16} height={16} />, t('projects.moveDialog.title'), actions.onMove)}
        {item(
          'archive-conversation',
          <ArchiveIcon width={16} height={16} />,
          conversation.archived ? t('menu.unarchive') : t('menu.archive'),
          actions.onArchive,
        )}
        {item('delete-conversation', <TrashIcon width={16} height={16} />, t('menu.delete'), actions.onDelete, true)}
      </Menu>
    </MenuAnchor>
  );
}
