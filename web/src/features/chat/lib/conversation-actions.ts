import { createContext, useContext } from 'react';

/**
 * What a message's actions need of the conversation view around them: the conversation,
 * and how an edited question is sent (with the composer's model and web search, which
 * the view knows).
 */
export interface ConversationActions {
  conversationId: string;
  /** Sends `text` as a new version of the question `messageId`; false when it was not sent. */
  sendEdit: (messageId: string, text: string) => boolean;
}

export const ConversationActionsContext = createContext<ConversationActions | null>(null);

export function useConversationActions(): ConversationActions | null {
  return useContext(ConversationActionsContext);
}
