import { useEffect, useId, useRef, useState, type ReactNode } from 'react';
import { Trans, useTranslation } from 'react-i18next';
import { Link, useLocation } from 'react-router';
import { Button } from '@/components/button';
import { Dialog } from '@/components/dialog';
import {
  syncConsentAcrossTabs,
  useConsentStore,
  type OptionalCookieChoices,
  type StoredConsent,
} from '../stores/consent-store';
import styles from './cookie-consent.module.css';
import { ConsentSwitch } from './consent-switch';

const POLICY_PATH = '/privacy-policy';

/**
 * The cookie consent dialog (SPEC §1). Mounted once at the root, so it appears on any page
 * until a choice is made, and again whenever `openCookieSettings()` reopens it.
 *
 * - Escape or the close button before any choice keeps only the necessary storage (the
 *   dialog says so); after a choice they just close it.
 * - On the privacy policy, which the dialog points to, a visitor who has not chosen yet
 *   gets the same choices as a banner at the bottom instead: the policy stays readable,
 *   scrollable and its links work. A reopened settings dialog is modal there too.
 */
export function CookieConsent() {
  const { t } = useTranslation('cookies');
  const consent = useConsentStore((state) => state.consent);
  const settingsOpen = useConsentStore((state) => state.settingsOpen);
  const rejectOptional = useConsentStore((state) => state.rejectOptional);
  const closeSettings = useConsentStore((state) => state.closeSettings);
  const { pathname } = useLocation();

  useEffect(() => syncConsentAcrossTabs(), []);

  const undecided = consent === null;
  const onPolicy = pathname === POLICY_PATH;
  const open = settingsOpen || (undecided && !onPolicy);
  const banner = undecided && !settingsOpen && onPolicy;

  return (
    <>
      <Dialog
        open={open}
        onClose={undecided ? rejectOptional : closeSettings}
        title={t('title')}
        className={styles.dialog}
      >
        {/* Its policy link leads to the banner: the reopened settings close for the reading. */}
        {open && <ConsentForm consent={consent} onReadPolicy={closeSettings} />}
      </Dialog>
      {banner && <ConsentBanner />}
    </>
  );
}

/**
 * The choices as a region fixed to the bottom of the policy page. A spacer as tall as the
 * banner follows the page in the flow, so the end of the policy scrolls above it.
 */
function ConsentBanner() {
  const { t } = useTranslation('cookies');
  const titleId = useId();
  const ref = useRef<HTMLElement>(null);
  const [height, setHeight] = useState(0);

  useEffect(() => {
    const banner = ref.current;
    if (!banner) return;
    const root = document.documentElement;
    const measure = () => {
      const px = Math.ceil(banner.getBoundingClientRect().height);
      setHeight(px);
      // Anchors and focused fields scroll into view above the banner.
      root.style.scrollPaddingBottom = `${px}px`;
    };
    measure();
    const observer = typeof ResizeObserver === 'undefined' ? null : new ResizeObserver(measure);
    observer?.observe(banner);
    return () => {
      observer?.disconnect();
      root.style.scrollPaddingBottom = '';
    };
  }, []);

  return (
    <>
      <div className={styles.bannerSpacer} style={{ height }} aria-hidden="true" data-testid="cookie-banner-spacer" />
      <section ref={ref} className={styles.banner} aria-labelledby={titleId} data-testid="cookie-banner">
        <div className={styles.bannerInner}>
          <h2 id={titleId} className={styles.bannerTitle}>
            {t('title')}
          </h2>
          <ConsentForm consent={null} onReadPolicy={() => undefined} banner />
        </div>
      </section>
    </>
  );
}

function ConsentForm({
  consent,
  onReadPolicy,
  banner = false,
}: {
  consent: StoredConsent | null;
  onReadPolicy: () => void;
  /** Folds the categories away, so the banner leaves most of the page to read. */
  banner?: boolean;
}) {
  const { t, i18n } = useTranslation('cookies');
  const save = useConsentStore((state) => state.save);
  const acceptAll = useConsentStore((state) => state.acceptAll);
  const rejectOptional = useConsentStore((state) => state.rejectOptional);
  // Starts from the current choice each time the dialog opens (the form mounts with it).
  const [draft, setDraft] = useState<OptionalCookieChoices>(() => ({
    functional: consent?.choices.functional ?? false,
    analytics: consent?.choices.analytics ?? false,
  }));

  const savedOn = consent
    ? new Intl.DateTimeFormat(i18n.language, { dateStyle: 'medium', timeStyle: 'short' }).format(
        new Date(consent.updatedAt),
      )
    : null;

  return (
    <form
      className={styles.form}
      onSubmit={(event) => {
        event.preventDefault();
        save(draft);
      }}
    >
      <p className={styles.text}>{t('intro')}</p>
      {!banner && <p className={styles.note}>{t('notInUse')}</p>}

      <Categories banner={banner} legend={t('legend')} note={banner ? t('notInUse') : null}>
        <ConsentSwitch
          label={t('categories.necessary.label')}
          description={t('categories.necessary.description')}
          badge={t('alwaysOn')}
          checked
          disabled
        />
        <ConsentSwitch
          label={t('categories.functional.label')}
          description={t('categories.functional.description')}
          checked={draft.functional}
          onChange={(functional) => setDraft((d) => ({ ...d, functional }))}
        />
        <ConsentSwitch
          label={t('categories.analytics.label')}
          description={t('categories.analytics.description')}
          checked={draft.analytics}
          onChange={(analytics) => setDraft((d) => ({ ...d, analytics }))}
        />
      </Categories>

      <p className={styles.text}>
        <Trans
          t={t}
          i18nKey="policy"
          components={{ policyLink: <Link to={`${POLICY_PATH}#cookies`} onClick={onReadPolicy} /> }}
        />
      </p>
      {/* The banner has no close button: nothing to say about closing it. */}
      {(savedOn || !banner) && (
        <p className={styles.note}>{savedOn ? t('savedOn', { date: savedOn }) : t('closeNote')}</p>
      )}

      {/* Rejecting is as easy and as prominent as accepting. */}
      <div className={styles.actions}>
        <Button data-testid="cookie-reject" onClick={rejectOptional}>
          {t('reject')}
        </Button>
        <Button type="submit" variant="secondary" data-testid="cookie-save">
          {t('save')}
        </Button>
        <Button data-testid="cookie-accept-all" onClick={acceptAll}>
          {t('acceptAll')}
        </Button>
      </div>
    </form>
  );
}

function Categories({
  banner,
  legend,
  note,
  children,
}: {
  banner: boolean;
  legend: string;
  note: string | null;
  children: ReactNode;
}) {
  const fieldset = (
    <fieldset className={styles.categories}>
      <legend className="visually-hidden">{legend}</legend>
      {children}
    </fieldset>
  );
  if (!banner) return fieldset;
  return (
    <details className={styles.details}>
      <summary>{legend}</summary>
      {note && <p className={styles.note}>{note}</p>}
      {fieldset}
    </details>
  );
}
