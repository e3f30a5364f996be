import { useEffect, useId, useRef, useState, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from '@/components/button';
import type { Conversation } from '@/types/generated';
import { onMenuKeyDown } from '../lib/menu-keys';
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
 * or unarchive, delete. Keyboard as in a menu button (lib/menu-keys.ts).
 */
export function ConversationMenu({ conversation, actions }: { conversation: Conversation; actions: ConversationMenuActions }) {
  const { t } = useTranslation('chat');
  const menuId = useId();
  const [open, setOpen] = useState(false);
  const anchorRef = useRef<HTMLDivElement>(null);
  const buttonRef = useRef<HTMLButtonElement>(null);
  const menuRef = useRef<HTMLDivElement>(null);
  const title = conversation.title ?? t('untitled');

  useEffect(() => {
    if (!open) return;
    menuRef.current?.querySelector<HTMLElement>('[role="menuitem"]')?.focus();
    const onPointerDown = (event: PointerEvent) => {
      if (!anchorRef.current?.contains(event.target as Node)) setOpen(false);
    };
    document.addEventListener('pointerdown', onPointerDown);
    return () => document.removeEventListener('pointerdown', onPointerDown);
  }, [open]);

  const close = (refocus: boolean) => {
    setOpen(false);
    if (refocus) buttonRef.current?.focus();
  };

  const item = (testId: string, icon: ReactNode, label: string, action: (() => void) | undefined, danger = false) =>
    action && (
      <button
        type="button"
        role="menuitem"
        tabIndex={-1}
        className={styles.item}
        data-danger={danger || undefined}
        data-testid={testId}
        onClick={() => {
          // The focus goes back to the row's button; a dialog that opens takes it from there.
          close(true);
          action();
        }}
      >
        {icon}
        {label}
      </button>
    );

  return (
    <div ref={anchorRef} className={styles.anchor}>
      <Button
        ref={buttonRef}
        variant="ghost"
        size="small"
        iconOnly
        aria-label={t('menu.button', { title })}
        aria-haspopup="menu"
        aria-expanded={open}
        aria-controls={open ? menuId : undefined}
        data-testid="conversation-menu-button"
        onClick={() => setOpen(!open)}
        onKeyDown={(event) => {
          if (!open && event.key === 'ArrowDown') {
            event.preventDefault();
            setOpen(true);
          }
        }}
      >
        <MoreIcon width={16} height={16} />
      </Button>
      {open && (
        <div
          ref={menuRef}
          id={menuId}
          role="menu"
          aria-label={t('menu.label', { title })}
          className={styles.menu}
          data-testid="conversation-menu"
          onKeyDown={(event) => onMenuKeyDown(event, menuRef.current, close)}
        >
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
        </div>
      )}
    </div>
  );
}
