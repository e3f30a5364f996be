import { useTranslation } from 'react-i18next';
import { PlaceholderPage } from '@/components/placeholder-page';

/**
 * Placeholder for /chat and /chat/:id: the conversation list (into the layout's sidebar,
 * with <LayoutSidebar> from '@/components/layout/sidebar-slot') and the chat view over
 * the socket (useChatSocket, useSocketEvent, useOpenConversation) are built next.
 */
export function ChatPage() {
  const { t } = useTranslation('chat');
  return <PlaceholderPage title={t('title')} />;
}
