import { useTranslation } from 'react-i18next';
import { PlaceholderPage } from '@/components/placeholder-page';

/** Placeholder for /payment/status: processing and checking a payment. */
export function PaymentStatusPage() {
  const { t } = useTranslation('subscription');
  return <PlaceholderPage title={t('paymentStatus.title')} />;
}

/** Placeholder for /payment-success. */
export function PaymentSuccessPage() {
  const { t } = useTranslation('subscription');
  return <PlaceholderPage title={t('paymentSuccess.title')} />;
}

/** Placeholder for /payment-cancel. */
export function PaymentCancelPage() {
  const { t } = useTranslation('subscription');
  return <PlaceholderPage title={t('paymentCancel.title')} />;
}
