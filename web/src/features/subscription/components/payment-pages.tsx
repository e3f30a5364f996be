import { useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { Button } from '@/components/button';
import { buttonClassName } from '@/components/button-class-name';
import { Spinner } from '@/components/spinner';
import { useSocketEvent } from '@/hooks/use-chat-socket';
import { useDocumentTitle } from '@/hooks/use-document-title';
import { isApiError } from '@/lib/api-client';
import type { PaymentStatus, Subscription } from '@/types/generated';
import { subscriptionApi } from '../api/subscription-api';
import { useSubscriptionStore } from '../stores/subscription-store';
import { formatDate } from '../utils/format';
import { useLocale } from '@/hooks/use-locale';
import styles from './payment-pages.module.css';

/** How often a pending payment is asked about, and when to say it is taking long. */
export const POLL_INTERVAL_MS = 2000;
export const SLOW_AFTER_MS = 60_000;

/** Where the payment pages send the user back to choose a plan. */
const PLANS_PATH = '/settings#subscription';

/**
 * The page that shows a payment in `status`: the status page while it is pending, the
 * success page once it succeeded, the cancel page when it failed or was cancelled.
 */
function pageOf(paymentId: string, status: PaymentStatus): string {
  const query = `?paymentId=${encodeURIComponent(paymentId)}`;
  if (status === 'pending') return `/payment/status${query}`;
  if (status === 'succeeded') return `/payment-success${query}`;
  return `/payment-cancel${query}${status === 'failed' ? '&status=failed' : ''}`;
}

type StatusView =
  /** Before the first answer. */
  | 'processing'
  /** The payment is still pending: asking again every few seconds. */
  | 'checking'
  /** Still pending after SLOW_AFTER_MS: polling stops until the user asks again. */
  | 'slow'
  | 'missing'
  | 'notFound'
  | 'error';

/**
 * SPEC §2 /payment/status: the demo checkout returns here with `?paymentId=…`. The page
 * asks `GET /api/payments/{id}` until the payment leaves `pending`, then goes to the
 * success or the cancel page. A `subscription.updated` frame makes it ask at once.
 */
export function PaymentStatusPage() {
  const { t } = useTranslation('subscription');
  useDocumentTitle(t('paymentStatus.title'));
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const paymentId = params.get('paymentId');
  const [view, setView] = useState<StatusView>('processing');
  const [round, setRound] = useState(0);
  const checkNow = useRef<() => void>(() => undefined);

  useEffect(() => {
    if (!paymentId) return;
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const startedAt = Date.now();

    const check = async () => {
      clearTimeout(timer);
      try {
        const payment = await subscriptionApi.getPayment(paymentId);
        if (stopped) return;
        if (payment.status !== 'pending') {
          void navigate(pageOf(paymentId, payment.status), { replace: true });
        } else if (Date.now() - startedAt >= SLOW_AFTER_MS) {
          setView('slow');
        } else {
          setView('checking');
          timer = setTimeout(() => void check(), POLL_INTERVAL_MS);
        }
      } catch (error) {
        if (!stopped) setView(isApiError(error) && error.status === 404 ? 'notFound' : 'error');
      }
    };

    checkNow.current = () => void check();
    void check();
    return () => {
      stopped = true;
      clearTimeout(timer);
      checkNow.current = () => undefined;
    };
  }, [paymentId, round, navigate]);

  useSocketEvent('subscription.updated', () => checkNow.current());

  const current: StatusView = paymentId ? view : 'missing';
  const busy = current === 'processing' || current === 'checking';
  const message = {
    processing: t('paymentStatus.processing'),
    checking: t('paymentStatus.checking'),
    slow: t('paymentStatus.slow'),
    missing: t('paymentStatus.missing'),
    notFound: t('paymentStatus.notFound'),
    error: t('paymentStatus.error'),
  }[current];

  return (
    <section className={styles.page}>
      <h1>{t('paymentStatus.title')}</h1>
      <div className={styles.status} role="status" data-testid="payment-status" data-state={current}>
        {busy && <Spinner size="large" decorative />}
        <p className={styles.lead}>{message}</p>
        {busy && <p className={styles.muted}>{t('paymentStatus.hint')}</p>}
      </div>
      <div className={styles.actions}>
        {(current === 'slow' || current === 'error') && (
          <Button
            onClick={() => {
              setView('processing');
              setRound((n) => n + 1);
            }}
          >
            {t('paymentStatus.checkAgain')}
          </Button>
        )}
        {!busy && (
          <Link to={PLANS_PATH} className={buttonClassName({ variant: 'secondary' })}>
            {t('paymentStatus.backToPlans')}
          </Link>
        )}
      </div>
    </section>
  );
}

type SuccessView = 'checking' | 'succeeded' | 'missing' | 'notFound' | 'error';

/**
 * SPEC §2 /payment-success: the new plan is active. Only a payment the server says has
 * succeeded is called a success: without `?paymentId=…` the page says there is nothing to
 * confirm, for one that is not the user's that it was not found; a payment still pending
 * goes to the status page, a cancelled or failed one to the cancel page.
 */
export function PaymentSuccessPage() {
  const { t } = useTranslation('subscription');
  const locale = useLocale();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const paymentId = params.get('paymentId');
  const loadSubscription = useSubscriptionStore((s) => s.loadSubscription);
  const [view, setView] = useState<SuccessView>('checking');
  const [round, setRound] = useState(0);
  const [subscription, setSubscription] = useState<Subscription | null>(null);
  const current: SuccessView = paymentId ? view : 'missing';
  const title = {
    checking: t('paymentStatus.title'),
    succeeded: t('paymentSuccess.title'),
    missing: t('paymentMissing.title'),
    notFound: t('paymentStatus.title'),
    error: t('paymentStatus.title'),
  }[current];
  useDocumentTitle(title);

  useEffect(() => {
    if (!paymentId) return;
    let stopped = false;
    subscriptionApi.getPayment(paymentId).then(
      (payment) => {
        if (stopped) return;
        if (payment.status === 'succeeded') setView('succeeded');
        else void navigate(pageOf(paymentId, payment.status), { replace: true });
      },
      (error: unknown) => {
        if (!stopped) setView(isApiError(error) && error.status === 404 ? 'notFound' : 'error');
      },
    );
    return () => {
      stopped = true;
    };
  }, [paymentId, round, navigate]);

  const succeeded = current === 'succeeded';
  useEffect(() => {
    if (!succeeded) return;
    let stopped = false;
    loadSubscription().then(
      (loaded) => {
        if (!stopped) setSubscription(loaded);
      },
      () => undefined, // The page still says the payment went through; the plan name is extra.
    );
    return () => {
      stopped = true;
    };
  }, [succeeded, loadSubscription]);

  if (!succeeded) {
    const message = {
      checking: t('paymentStatus.checking'),
      missing: t('paymentMissing.body'),
      notFound: t('paymentStatus.notFound'),
      error: t('paymentStatus.error'),
    }[current];
    return (
      <section className={styles.page}>
        <h1>{title}</h1>
        <div className={styles.status} role="status" data-testid="payment-success-state" data-state={current}>
          {current === 'checking' && <Spinner size="large" decorative />}
          <p className={styles.lead}>{message}</p>
        </div>
        {current !== 'checking' && (
          <div className={styles.actions}>
            {current === 'error' && (
              <Button
                onClick={() => {
                  setView('checking');
                  setRound((n) => n + 1);
                }}
              >
                {t('paymentStatus.checkAgain')}
              </Button>
            )}
            <Link to={PLANS_PATH} className={buttonClassName({ variant: current === 'error' ? 'secondary' : 'primary' })}>
              {t('paymentMissing.toPlans')}
            </Link>
          </div>
        )}
      </section>
    );
  }

  const data = subscription?.data;
  const date = data?.endDate ? formatDate(data.endDate, locale) : null;

  return (
    <section className={styles.page}>
      <div className={styles.icon} data-tone="positive" aria-hidden="true">
        ✓
      </div>
      <h1>{title}</h1>
      {subscription && (
        <div className={styles.status}>
          <p className={styles.lead} data-testid="payment-success-plan">
            {t('paymentSuccess.body', { plan: subscription.subscriptionPlan.name })}
          </p>
          {date && (
            <p className={styles.muted}>
              {data?.autoRenew ? t('paymentSuccess.renews', { date }) : t('paymentSuccess.until', { date })}
            </p>
          )}
        </div>
      )}
      <div className={styles.actions}>
        <Link to="/chat" className={buttonClassName()}>
          {t('paymentSuccess.toChat')}
        </Link>
        <Link to={PLANS_PATH} className={buttonClassName({ variant: 'secondary' })}>
          {t('paymentSuccess.toPlans')}
        </Link>
      </div>
    </section>
  );
}

/** SPEC §2 /payment-cancel: the checkout was cancelled (or failed); nothing was charged. */
export function PaymentCancelPage() {
  const { t } = useTranslation('subscription');
  const [params] = useSearchParams();
  const failed = params.get('status') === 'failed';
  const title = failed ? t('paymentCancel.failedTitle') : t('paymentCancel.title');
  useDocumentTitle(title);

  return (
    <section className={styles.page}>
      <div className={styles.icon} data-tone="neutral" aria-hidden="true">
        ✕
      </div>
      <h1>{title}</h1>
      <p className={styles.lead}>{failed ? t('paymentCancel.failedBody') : t('paymentCancel.body')}</p>
      <div className={styles.actions}>
        <Link to={PLANS_PATH} className={buttonClassName()}>
          {t('paymentCancel.backToPlans')}
        </Link>
      </div>
    </section>
  );
}
