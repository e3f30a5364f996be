/** The chat feature's public surface (its page is in routes.ts). */
export { startAnswerNotifications } from './lib/answer-notifications';
export { SharedLinksList } from './components/shared-links-section';
export { refreshConversations } from './stores/chat';
