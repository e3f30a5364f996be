import { useEffect } from 'react';
import { useTranslation } from 'react-i18next';
import { useParams } from 'react-router';
import { LayoutSidebar } from '@/components/layout/sidebar-slot';
import { useChatStore } from '../stores/chat-store';
import { startChatSync } from '../stores/chat-sync';
import { usePlanStore } from '../stores/plan-store';
import styles from './chat-page.module.css';
import { ConversationSidebar } from './conversation-sidebar';
import { ConversationView } from './conversation-view';

/**
 * /chat and /chat/:id: the conversation list in the layout's sidebar (the drawer on
 * phones) and the conversation, or a new chat, beside it.
 */
export function ChatPage() {
  const { t } = useTranslation('chat');
  const { id } = useParams();
  const conversationId = id ?? null;

  useEffect(() => {
    startChatSync();
    const chat = useChatStore.getState();
    if (chat.listStatus === 'idle' || chat.listStatus === 'error') void chat.loadConversations();
    const plan = usePlanStore.getState();
    void plan.loadPlan();
    void plan.loadUsage();
  }, []);

  return (
    <div className={styles.page}>
      <h1 className="visually-hidden">{t('title')}</h1>
      <LayoutSidebar>
        <ConversationSidebar activeId={conversationId} />
      </LayoutSidebar>
      <ConversationView key={conversationId ?? 'new'} conversationId={conversationId} />
    </div>
  );
}
