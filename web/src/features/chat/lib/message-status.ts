import type { ChatMessage } from '../stores/thread';

/** The `data-status` of an answer's bubble. */
export type AssistantStatus = 'streaming' | 'complete' | 'cancelled' | 'error';

/** What an answer shows: an answer whose server was lost counts as an error. */
export function assistantStatus(message: ChatMessage, stale: boolean): AssistantStatus {
  if (message.status === 'streaming') return stale ? 'error' : 'streaming';
  return message.status;
}
