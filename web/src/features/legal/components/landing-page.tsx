import type { ReactNode } from 'react';
import { Trans, useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { Button } from '@/components/button';
import { buttonClassName } from '@/components/button-class-name';
import { ChatIcon, GlobeIcon, UserIcon } from '@/components/icons';
import { openAuthDialog, selectIsAuthenticated, useAuthStore } from '@/features/auth';
import { useDocumentTitle } from '@/hooks/use-document-title';
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

/** SPEC §9: net monthly list prices; VAT comes on top. Hungarian pages show forints. */
const PLANS = [
  { id: 'free', eur: 0, huf: 0 },
  { id: 'base', eur: 5, huf: 1500 },
  { id: 'plus', eur: 10, huf: 3000 },
  { id: 'pro', eur: 20, huf: 6000 },
] as const;
const PLAN_POINTS = ['messages', 'extras'] as const;

function formatPrice(language: string, plan: (typeof PLANS)[number]): string {
  const hungarian = language.toLowerCase().startsWith('hu');
  return new Intl.NumberFormat(language, {
    style: 'currency',
    currency: hungarian ? 'HUF' : 'EUR',
    minimumFractionDigits: 0,
    maximumFractionDigits: 0,
  }).format(hungarian ? plan.huf : plan.eur);
}

/** `/`: the one page besides the privacy policy that guests may open. */
export function LandingPage() {
  const { t, i18n } = useTranslation('legal');
  useDocumentTitle();
  const isAuthenticated = useAuthStore(selectIsAuthenticated);

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
          {PLANS.map((plan) => (
            <li key={plan.id} className={styles.card} data-plan={plan.id}>
              <h3 className={styles.cardTitle}>{t(`landing.plans.${plan.id}.name`)}</h3>
              <p className={styles.price}>
                <span className={styles.amount}>{formatPrice(i18n.language, plan)}</span>{' '}
                <span className={styles.period}>{t('landing.plans.perMonth')}</span>
              </p>
              <ul className={styles.points}>
                {PLAN_POINTS.map((point) => (
                  <li key={point}>{t(`landing.plans.${plan.id}.points.${point}`)}</li>
                ))}
              </ul>
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
