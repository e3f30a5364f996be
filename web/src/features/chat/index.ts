/** The chat feature's public surface (its page is in routes.ts). */
export { startAnswerNotifications } from './lib/answer-notifications';
