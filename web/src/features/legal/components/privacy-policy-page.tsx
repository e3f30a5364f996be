import { Fragment, useEffect, useId, type ReactNode } from 'react';
import { Trans, useTranslation } from 'react-i18next';
import { Link, useLocation } from 'react-router';
import { CookieSettingsButton } from '@/features/cookies';
import { useDocumentTitle } from '@/hooks/use-document-title';
import { POLICY_DETAILS } from '../policy-details';
import styles from './privacy-policy-page.module.css';

const SECTIONS = [
  'controller',
  'data',
  'cookies',
  'bases',
  'retention',
  'rights',
  'children',
  'processors',
  'transfers',
  'security',
  'changes',
] as const;
type SectionId = (typeof SECTIONS)[number];

const DATA_ITEMS = ['account', 'settings', 'conversations', 'usage', 'billing', 'image', 'technical', 'cookies'] as const;
/** What the browser keeps (see src/lib/token.ts, src/lib/i18n.ts, the settings and cookies features). */
const STORAGE_ITEMS = [
  { id: 'token', keys: ['token'], kind: 'cookie' },
  { id: 'tokenCopy', keys: ['token', 'token.remember'], kind: 'localStorage' },
  { id: 'language', keys: ['language'], kind: 'localStorage' },
  { id: 'settings', keys: ['local-settings'], kind: 'localStorage' },
  { id: 'consent', keys: ['cookie-consent'], kind: 'localStorage' },
] as const;
const BASES = ['contract', 'consent', 'legalObligation', 'legitimateInterest'] as const;
const RETENTION = ['account', 'conversations', 'usage', 'codes', 'invoices', 'technical'] as const;
const RIGHTS = [
  'access',
  'rectification',
  'erasure',
  'restriction',
  'portability',
  'objection',
  'withdraw',
  'complaint',
] as const;
const PROCESSORS = ['ai', 'payment', 'hosting'] as const;

/** `/privacy-policy` (SPEC §1, §2): the GDPR privacy policy, open to guests. */
export function PrivacyPolicyPage() {
  const { t, i18n } = useTranslation('legal');
  useDocumentTitle(t('privacy.title'));
  const titleId = useId();
  const contentsId = useId();
  useScrollToHash();

  const lastUpdated = new Intl.DateTimeFormat(i18n.language, { dateStyle: 'long', timeZone: 'UTC' }).format(
    new Date(`${POLICY_DETAILS.lastUpdated}T00:00:00Z`),
  );
  const { controller } = POLICY_DETAILS;
  const placeholder = (what: string) => <span className={styles.placeholder}>{t('privacy.placeholder', { what })}</span>;

  return (
    <article className={styles.policy} aria-labelledby={titleId} data-testid="privacy-policy">
      <header className={styles.header}>
        <h1 id={titleId}>{t('privacy.title')}</h1>
        <p className={styles.meta}>
          <time dateTime={POLICY_DETAILS.lastUpdated}>{t('privacy.lastUpdated', { date: lastUpdated })}</time>
        </p>
        <p>{t('privacy.intro')}</p>
      </header>

      <nav className={styles.contents} aria-labelledby={contentsId}>
        <h2 id={contentsId} className={styles.contentsTitle}>
          {t('privacy.contents')}
        </h2>
        <ol>
          {SECTIONS.map((id) => (
            <li key={id}>
              <a href={`#${id}`}>{t(`privacy.${id}.title`)}</a>
            </li>
          ))}
        </ol>
      </nav>

      <Section id="controller">
        <p className={styles.note}>{t('privacy.controller.operatorNote')}</p>
        <dl className={styles.details}>
          <dt>{t('privacy.controller.name')}</dt>
          <dd>{controller.name || placeholder(t('privacy.controller.namePlaceholder'))}</dd>
          <dt>{t('privacy.controller.address')}</dt>
          <dd>{controller.address || placeholder(t('privacy.controller.addressPlaceholder'))}</dd>
          <dt>{t('privacy.controller.email')}</dt>
          <dd>
            {controller.email ? (
              <a href={`mailto:${controller.email}`}>{controller.email}</a>
            ) : (
              placeholder(t('privacy.controller.emailPlaceholder'))
            )}
          </dd>
        </dl>
        <p>{t('privacy.controller.contactText')}</p>
      </Section>

      <Section id="data">
        <p>{t('privacy.data.intro')}</p>
        <dl className={styles.terms}>
          {DATA_ITEMS.map((item) => (
            <div key={item}>
              <dt>{t(`privacy.data.items.${item}.title`)}</dt>
              <dd>
                {item === 'cookies' ? (
                  <a href="#cookies">{t('privacy.data.items.cookies.text')}</a>
                ) : (
                  t(`privacy.data.items.${item}.text`)
                )}
              </dd>
            </div>
          ))}
        </dl>
      </Section>

      <Section id="cookies">
        <p>{t('privacy.cookies.intro')}</p>
        <dl className={styles.terms}>
          {STORAGE_ITEMS.map(({ id, keys, kind }) => (
            <div key={id}>
              <dt>
                {keys.map((key, index) => (
                  <Fragment key={key}>
                    {index > 0 && ', '}
                    <code>{key}</code>
                  </Fragment>
                ))}{' '}
                <span className={styles.kind}>({t(`privacy.cookies.kinds.${kind}`)})</span>
              </dt>
              <dd>{t(`privacy.cookies.items.${id}.text`)}</dd>
            </div>
          ))}
        </dl>
        <p>{t('privacy.cookies.optional')}</p>
        <div className={styles.manage}>
          <p>{t('privacy.cookies.manage')}</p>
          <CookieSettingsButton />
        </div>
      </Section>

      <Section id="bases">
        <dl className={styles.terms}>
          {BASES.map((item) => (
            <div key={item}>
              <dt>{t(`privacy.bases.items.${item}.title`)}</dt>
              <dd>{t(`privacy.bases.items.${item}.text`)}</dd>
            </div>
          ))}
        </dl>
      </Section>

      <Section id="retention">
        <ul className={styles.list}>
          {RETENTION.map((item) => (
            <li key={item}>{t(`privacy.retention.items.${item}`)}</li>
          ))}
        </ul>
      </Section>

      <Section id="rights">
        <p>{t('privacy.rights.intro')}</p>
        <ul className={styles.list}>
          {RIGHTS.map((item) =>
            item === 'erasure' ? (
              <li key={item}>
                <Trans t={t} i18nKey="privacy.rights.items.erasure" components={{ profileLink: <Link to="/profile" /> }} />
              </li>
            ) : (
              <li key={item}>{t(`privacy.rights.items.${item}`)}</li>
            ),
          )}
        </ul>
        <p>{t('privacy.rights.howTo')}</p>
      </Section>

      <Section id="children">
        <p>{t('privacy.children.text')}</p>
      </Section>

      <Section id="processors">
        <p>{t('privacy.processors.intro')}</p>
        <dl className={styles.terms}>
          {PROCESSORS.map((item) => (
            <div key={item}>
              <dt>{t(`privacy.processors.items.${item}.title`)}</dt>
              <dd>{t(`privacy.processors.items.${item}.text`)}</dd>
            </div>
          ))}
        </dl>
        <dl className={styles.details}>
          <dt>{t('privacy.processors.listLabel')}</dt>
          <dd>{POLICY_DETAILS.processors || placeholder(t('privacy.processors.listPlaceholder'))}</dd>
        </dl>
      </Section>

      <Section id="transfers">
        <p>{t('privacy.transfers.text')}</p>
      </Section>

      <Section id="security">
        <p>{t('privacy.security.text')}</p>
      </Section>

      <Section id="changes">
        <p>{t('privacy.changes.text')}</p>
      </Section>
    </article>
  );
}

function Section({ id, children }: { id: SectionId; children: ReactNode }) {
  const { t } = useTranslation('legal');
  return (
    <section id={id} className={styles.section} aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>{t(`privacy.${id}.title`)}</h2>
      {children}
    </section>
  );
}

/**
 * The page loads lazily, so a link to `/privacy-policy#cookies` (the cookie dialog's)
 * arrives before the section exists: scroll to it once it is rendered.
 */
function useScrollToHash() {
  const { hash } = useLocation();
  useEffect(() => {
    if (!hash) return;
    const target = document.getElementById(decodeURIComponent(hash.slice(1)));
    // jsdom has no scrollIntoView.
    if (typeof target?.scrollIntoView === 'function') target.scrollIntoView();
  }, [hash]);
}
