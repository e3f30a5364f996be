/** Pages loaded lazily by the router; kept apart from index.ts so they split into their own chunk. */
export { PaymentCancelPage, PaymentStatusPage, PaymentSuccessPage } from './components/payment-pages';
