import { useEffect } from 'react';
import { useTranslation } from 'react-i18next';
import { useLocation } from 'react-router';
import { PageSpinner } from '@/components/spinner';
import { selectUser, useAuthStore } from '@/features/auth';
import { SharedLinksList } from '@/features/chat';
import { useDocumentTitle } from '@/hooks/use-document-title';
import { AccountSection } from './account-section';
import { AiPersonalizationForm } from './ai-personalization-form';
import { AppSection } from './app-section';
import { PrivacySection } from './privacy-section';
import { SettingsSection } from './settings-section';
import styles from './settings-page.module.css';
import { SubscriptionSlot } from './subscription-slot';
import { UsageSection } from './usage-section';

/**
 * `/settings` (SPEC §2): account (with export and import), app, usage limits, AI
 * personalisation, privacy, shared links and the subscription (`/settings#subscription`). Server settings come from the auth store, which
 * `settings.updated` keeps current in every tab (wired in src/app/bootstrap.ts).
 */
export function SettingsPage() {
  const { t } = useTranslation('settings');
  useDocumentTitle(t('title'));
  useScrollToHash();
  const user = useAuthStore(selectUser);
  const settings = useAuthStore((s) => s.settings);
  if (!user) return <PageSpinner />;
  const ai = (settings ?? user.settings).aiPersonalization;

  return (
    <div className={styles.page}>
      <h1>{t('title')}</h1>
      <AccountSection user={user} />
      <AppSection />
      <UsageSection />
      <AiPersonalizationForm value={ai} />
      <PrivacySection />
      <SettingsSection id="shared-links" title={t('sharedLinks.title')}>
        <p className={styles.hint}>{t('sharedLinks.hint')}</p>
        <SharedLinksList />
      </SettingsSection>
      <SubscriptionSlot />
    </div>
  );
}

/**
 * The router does not scroll to a fragment, and this page loads lazily, after the browser
 * would have tried: scroll to `#section` once it is rendered.
 */
function useScrollToHash(): void {
  const { hash } = useLocation();
  useEffect(() => {
    if (!hash) return;
    const target = document.getElementById(decodeURIComponent(hash.slice(1)));
    target?.scrollIntoView?.({ block: 'start' });
  }, [hash]);
}
