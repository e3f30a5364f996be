import type { ReactNode } from 'react';
import { Trans, useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { Button } from '@/components/button';
import { buttonClassName } from '@/components/button-class-name';
import { ChatIcon, GlobeIcon, UserIcon } from '@/components/icons';
import { openAuthDialog, selectIsAuthenticated, useAuthStore } from '@/features/auth';
import { PlanSummary, usePublicPlans } from '@/features/subscription';
import { useDocumentTitle } from '@/hooks/use-document-title';
import type { Plan } from '@/types/generated';
import { GaugeIcon, ListIcon, ShieldIcon } from './landing-icons';
import styles from './landing-page.module.css';

const FEATURES: { id: 'live' | 'conversations' | 'quotas' | 'personal' | 'languages' | 'privacy'; icon: ReactNode }[] = [
  { id: 'live', icon: <ChatIcon /> },
  { id: 'conversations', icon: <ListIcon /> },
  { id: 'quotas', icon: <GaugeIcon /> },
  { id: 'personal', icon: <UserIcon /> },
  { id: 'languages', icon: <GlobeIcon /> },
  { id: 'privacy', icon: <ShieldIcon /> },
];

/** SPEC §9: the net monthly list price; VAT comes on top. Hungarian pages show forints. */
function formatPrice(language: string, plan: Plan): string {
  const currency = language.toLowerCase().startsWith('hu') ? 'HUF' : 'EUR';
  return new Intl.NumberFormat(language, {
    style: 'currency',
    currency,
    minimumFractionDigits: 0,
    maximumFractionDigits: 2,
  }).format(plan.prices[currency].net);
}

/** `/`: the one page besides the privacy policy that guests may open. */
export function LandingPage() {
  const { t, i18n } = useTranslation('legal');
  useDocumentTitle();
  const isAuthenticated = useAuthStore(selectIsAuthenticated);
  // From the server's catalogue, so the page offers only what works (web/README.md).
  const plans = usePublicPlans();

  return (
    <div className={styles.page}>
      <section className={styles.hero} aria-labelledby="landing-title">
        <h1 id="landing-title" className={styles.title}>
          {t('landing.title')}
        </h1>
        <p className={styles.subtitle}>{t('landing.subtitle')}</p>
        {isAuthenticated ? (
          <>
            <p className={styles.note}>{t('landing.signedInText')}</p>
            <div className={styles.actions}>
              <Link to="/chat" className={buttonClassName()} data-testid="landing-chat">
                {t('landing.openChat')}
              </Link>
            </div>
          </>
        ) : (
          <>
            <div className={styles.actions}>
              <Button data-testid="landing-register" onClick={() => openAuthDialog('register')}>
                {t('landing.getStarted')}
              </Button>
              <Button variant="secondary" data-testid="landing-login" onClick={() => openAuthDialog('login')}>
                {t('landing.login')}
              </Button>
            </div>
            <p className={styles.note}>{t('landing.freePlan')}</p>
          </>
        )}
      </section>

      <section className={styles.section} aria-labelledby="landing-features">
        <h2 id="landing-features" className={styles.sectionTitle}>
          {t('landing.features.title')}
        </h2>
        <ul className={styles.features}>
          {FEATURES.map(({ id, icon }) => (
            <li key={id} className={styles.card}>
              <span className={styles.icon}>{icon}</span>
              <h3 className={styles.cardTitle}>{t(`landing.features.${id}.title`)}</h3>
              <p className={styles.cardText}>{t(`landing.features.${id}.text`)}</p>
            </li>
          ))}
        </ul>
      </section>

      <section className={styles.section} aria-labelledby="landing-plans">
        <h2 id="landing-plans" className={styles.sectionTitle}>
          {t('landing.plans.title')}
        </h2>
        <p className={styles.sectionIntro}>{t('landing.plans.intro')}</p>
        <ul className={styles.plans}>
          {plans.map((plan) => (
            <li key={plan.planType} className={styles.card} data-plan={plan.planType}>
              <h3 className={styles.cardTitle}>{plan.name}</h3>
              <p className={styles.price}>
                <span className={styles.amount}>{formatPrice(i18n.language, plan)}</span>{' '}
                <span className={styles.period}>{t('landing.plans.perMonth')}</span>
              </p>
              <div className={styles.points}>
                <PlanSummary plan={plan} />
              </div>
            </li>
          ))}
        </ul>
        <p className={styles.fineprint}>
          {t('landing.plans.vatNote')} {t('landing.plans.limitsNote')}
        </p>
        <div className={styles.actions}>
          {isAuthenticated ? (
            <p className={styles.note}>
              <Trans t={t} i18nKey="landing.plans.signedIn" components={{ settingsLink: <Link to="/settings" /> }} />
            </p>
          ) : (
            <Button data-testid="landing-plans-register" onClick={() => openAuthDialog('register')}>
              {t('landing.plans.cta')}
            </Button>
          )}
        </div>
      </section>

      <footer className={styles.footer}>
        <Trans t={t} i18nKey="landing.privacy" components={{ policyLink: <Link to="/privacy-policy" /> }} />
      </footer>
    </div>
  );
}
