/**
 * The chat's UI pieces other features render (the projects' section and dialogs): kept
 * apart from index.ts, which the app loads at start-up, so they load with the pages that
 * show them.
 */
export { GateNotice, UpgradeLink } from './components/composer-notices';
export {
  AlertIcon,
  DocumentIcon,
  FolderIcon,
  LockIcon,
  PencilIcon,
  PlusIcon,
  TrashIcon,
} from './components/chat-icons';
export { default as dialogStyles } from './components/conversation-dialogs.module.css';
