import { useEffect, useState } from 'react';
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
 * - Its privacy-policy link steps aside for that page, so the policy can be read before
 *   choosing; any other page asks again.
 */
export function CookieConsent() {
  const { t } = useTranslation('cookies');
  const consent = useConsentStore((state) => state.consent);
  const settingsOpen = useConsentStore((state) => state.settingsOpen);
  const rejectOptional = useConsentStore((state) => state.rejectOptional);
  const closeSettings = useConsentStore((state) => state.closeSettings);
  const { pathname } = useLocation();
  // The page the visitor went to read from the dialog's policy link, without choosing yet.
  const [readingOn, setReadingOn] = useState<string | null>(null);

  useEffect(() => syncConsentAcrossTabs(), []);

  const undecided = consent === null;
  const open = settingsOpen || (undecided && readingOn !== pathname);

  return (
    <Dialog
      open={open}
      onClose={undecided ? rejectOptional : closeSettings}
      title={t('title')}
      className={styles.dialog}
    >
      {open && (
        <ConsentForm
          consent={consent}
          onReadPolicy={() => {
            setReadingOn(POLICY_PATH);
            closeSettings();
          }}
        />
      )}
    </Dialog>
  );
}

function ConsentForm({ consent, onReadPolicy }: { consent: StoredConsent | null; onReadPolicy: () => void }) {
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
      <p className={styles.note}>{t('notInUse')}</p>

      <fieldset className={styles.categories}>
        <legend className="visually-hidden">{t('legend')}</legend>
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
      </fieldset>

      <p className={styles.text}>
        <Trans
          t={t}
          i18nKey="policy"
          components={{ policyLink: <Link to={`${POLICY_PATH}#cookies`} onClick={onReadPolicy} /> }}
        />
      </p>
      <p className={styles.note}>{savedOn ? t('savedOn', { date: savedOn }) : t('closeNote')}</p>

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
