import 'i18next';
import type { Resources } from '@/locales/resources';

// Typed keys: `t('auth:login.title')` or `useTranslation('auth')` + `t('login.title')` are
// checked against the en-US resources at compile time.
declare module 'i18next' {
  interface CustomTypeOptions {
    defaultNS: 'common';
    resources: Resources;
  }
}
