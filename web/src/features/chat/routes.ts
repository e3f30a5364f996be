/** Pages loaded lazily by the router; kept apart from index.ts so they split into their own chunk. */
export { ChatPage } from './components/chat-page';
export { SharedPage } from './components/shared-page';
