import { useEffect } from 'react';
import { useTranslation } from 'react-i18next';
import { useParams, useSearchParams } from 'react-router';
import { LayoutSidebar } from '@/components/layout/sidebar-slot';
import { useProjectStore } from '@/features/projects';
import { useSubscriptionStore } from '@/features/subscription';
import { newChatKey, useChatStore } from '../stores/chat';
import styles from './chat-page.module.css';
import { ConversationSidebar } from './conversation-sidebar';
import { ConversationView } from './conversation-view';

/**
 * /chat and /chat/:id: the conversation list in the layout's sidebar (the drawer on
 * phones) and the conversation, or a new chat, beside it. `/chat?project=<id>` is a new
 * chat that starts its conversation in that project.
 */
export function ChatPage() {
  const { t } = useTranslation('chat');
  const { id } = useParams();
  const [search] = useSearchParams();
  const conversationId = id ?? null;
  const projectId = conversationId ? null : search.get('project') || null;

  useEffect(() => {
    const chat = useChatStore.getState();
    if (chat.listStatus === 'idle' || chat.listStatus === 'error') void chat.loadConversations();
    const projects = useProjectStore.getState();
    if (projects.status === 'idle' || projects.status === 'error') void projects.loadProjects();
    // The plan gates the composer, the counters show what is left: read fresh on arrival.
    const subscription = useSubscriptionStore.getState();
    void subscription.loadSubscription().catch(() => undefined);
    void subscription.loadUsage();
  }, []);

  // A new chat in a project shows that project in the sidebar.
  useEffect(() => {
    if (projectId) useProjectStore.getState().select(projectId);
  }, [projectId]);

  return (
    <div className={styles.page}>
      <h1 className="visually-hidden">{t('title')}</h1>
      <LayoutSidebar>
        <ConversationSidebar activeId={conversationId} />
      </LayoutSidebar>
      <ConversationView
        key={conversationId ?? newChatKey(projectId)}
        conversationId={conversationId}
        projectId={projectId}
      />
    </div>
  );
}
