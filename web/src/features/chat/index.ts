/** The chat feature's public surface (its page is in routes.ts). */
export { answerNotificationFrames, startAnswerNotifications } from './lib/answer-notifications';
export { chatFrames, resetChatStores } from './stores/socket-frames';
export { SharedLinksList } from './components/shared-links-section';
export { newChatKey, refreshConversations, useChatStore } from './stores/chat';
export { useAttachmentStore } from './stores/attachments';
export { isDocumentFile } from './stores/attach-files';

// What the projects feature builds on: the conversation lists and their paging, the REST
// calls for files and conversation pages, the plan's gates (its look is in ui.ts).
export { chatApi } from './api/chat-api';
export {
  EMPTY_LIST,
  removeConversation,
  touchConversation,
  upsertConversation,
  type ConversationList,
} from './stores/conversation-list';
export { ConversationPager, listFieldsAccess, type LoadStatus, type PagedList } from './stores/conversation-paging';
export { DOCUMENT_ACCEPT, formatFileSize, newerFile } from './lib/files';
export { attachmentLimits, documentNotice, projectGate, type GateNoticeKind } from './lib/gating';
