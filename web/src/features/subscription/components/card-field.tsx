import { useEffect, useId, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from '@/components/button';
import { Spinner } from '@/components/spinner';
import fieldStyles from '@/components/field.module.css';
import {
  loadStripeJs,
  type MountedCard,
  type StripeCardElement,
  type StripeElementStyle,
  type StripeError,
} from '../stripe/stripe-js';
import styles from './card-field.module.css';

export interface CardFieldProps {
  publishableKey: string;
  jsUrl: string;
  /** A translated message about the card, from typing or from the last payment attempt. */
  error: string | null;
  onChange: (error: StripeError | null) => void;
  /** The mounted card, or null once it is gone (or before it exists). */
  onReady: (card: MountedCard | null) => void;
}

/** Stripe's own locales; its placeholders and messages follow our language. */
const stripeLocale = (language: string) => (language.startsWith('hu') ? 'hu' : 'en');

/**
 * The card's text lives in Stripe's iframe, which cannot see our CSS variables: hand it
 * the current theme's colours (and again when the theme changes).
 */
function elementStyle(host: HTMLElement): StripeElementStyle {
  const css = getComputedStyle(host);
  const variable = (name: string) => css.getPropertyValue(name).trim();
  return {
    base: {
      color: css.color,
      fontFamily: css.fontFamily,
      fontSize: css.fontSize,
      iconColor: variable('--color-text-muted'),
      '::placeholder': { color: variable('--color-text-muted') },
    },
    invalid: { color: variable('--color-danger'), iconColor: variable('--color-danger') },
  };
}

/**
 * Stripe Elements' card field (number, expiry, security code), styled as our inputs.
 * Stripe.js is loaded the first time one is shown.
 */
export function CardField({ publishableKey, jsUrl, error, onChange, onReady }: CardFieldProps) {
  const { t, i18n } = useTranslation(['subscription', 'common']);
  const labelId = useId();
  const errorId = useId();
  const hostRef = useRef<HTMLDivElement>(null);
  const [loadState, setLoadState] = useState<'loading' | 'ready' | 'failed'>('loading');
  const [attempt, setAttempt] = useState(0);
  const callbacks = useRef({ onChange, onReady });
  useEffect(() => {
    callbacks.current = { onChange, onReady };
  });
  const locale = stripeLocale(i18n.language);

  useEffect(() => {
    let stopped = false;
    let element: StripeCardElement | null = null;
    let unfollowTheme = () => undefined as void;

    loadStripeJs(jsUrl).then(
      (Stripe) => {
        const host = hostRef.current;
        if (stopped || !host) return;
        const stripe = Stripe(publishableKey);
        const card = stripe.elements({ locale }).create('card', { style: elementStyle(host), hidePostalCode: true });
        element = card;
        card.on('change', (event) => callbacks.current.onChange(event?.error ?? null));
        card.mount(host);

        const restyle = () => card.update?.({ style: elementStyle(host) });
        const observer = new MutationObserver(restyle);
        observer.observe(document.documentElement, { attributes: true, attributeFilter: ['data-theme'] });
        const dark = window.matchMedia?.('(prefers-color-scheme: dark)');
        dark?.addEventListener('change', restyle);
        unfollowTheme = () => {
          observer.disconnect();
          dark?.removeEventListener('change', restyle);
        };

        setLoadState('ready');
        callbacks.current.onReady({ stripe, element: card });
      },
      () => {
        if (!stopped) setLoadState('failed');
      },
    );

    return () => {
      stopped = true;
      unfollowTheme();
      if (element) {
        element.destroy();
        callbacks.current.onReady(null);
      }
    };
  }, [jsUrl, publishableKey, locale, attempt]);

  return (
    <div className={fieldStyles.field}>
      <span id={labelId} className={fieldStyles.label}>
        {t('card.number')}
      </span>
      <div
        ref={hostRef}
        role="group"
        aria-labelledby={labelId}
        aria-describedby={error ? errorId : undefined}
        className={styles.card}
        data-invalid={error ? true : undefined}
        data-testid="card-element"
        hidden={loadState === 'failed'}
      />
      {loadState === 'loading' && (
        <span className={styles.loading}>
          <Spinner decorative /> {t('card.loading')}
        </span>
      )}
      {loadState === 'failed' && (
        <div className={styles.failed}>
          <span className={fieldStyles.error}>{t('card.loadError')}</span>
          <Button
            variant="secondary"
            onClick={() => {
              setLoadState('loading');
              setAttempt((n) => n + 1);
            }}
          >
            {t('common:actions.retry')}
          </Button>
        </div>
      )}
      <span id={errorId} className={fieldStyles.error} aria-live="polite" data-testid="card-error">
        {error}
      </span>
    </div>
  );
}
