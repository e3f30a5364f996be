/**
 * Every translation, one file per namespace and language, so features can fill their own
 * namespace in parallel. en-US is the reference: its shape types `t()` keys
 * (src/types/i18next.d.ts), and `satisfies` makes a hu-HU file missing a key a type error
 * (locales.test.ts also checks extra keys, which `satisfies` cannot see in JSON).
 */
import type { Language } from '@/types/generated';
import enAdmin from './en-US/admin.json';
import enAuth from './en-US/auth.json';
import enChat from './en-US/chat.json';
import enCommon from './en-US/common.json';
import enCookies from './en-US/cookies.json';
import enErrors from './en-US/errors.json';
import enLegal from './en-US/legal.json';
import enProfile from './en-US/profile.json';
import enSettings from './en-US/settings.json';
import enSubscription from './en-US/subscription.json';
import enValidation from './en-US/validation.json';
import huAdmin from './hu-HU/admin.json';
import huAuth from './hu-HU/auth.json';
import huChat from './hu-HU/chat.json';
import huCommon from './hu-HU/common.json';
import huCookies from './hu-HU/cookies.json';
import huErrors from './hu-HU/errors.json';
import huLegal from './hu-HU/legal.json';
import huProfile from './hu-HU/profile.json';
import huSettings from './hu-HU/settings.json';
import huSubscription from './hu-HU/subscription.json';
import huValidation from './hu-HU/validation.json';

export const enUS = {
  common: enCommon,
  auth: enAuth,
  validation: enValidation,
  errors: enErrors,
  chat: enChat,
  profile: enProfile,
  settings: enSettings,
  subscription: enSubscription,
  legal: enLegal,
  cookies: enCookies,
  admin: enAdmin,
};

export type Resources = typeof enUS;
export type Namespace = keyof Resources;

export const huHU = {
  common: huCommon,
  auth: huAuth,
  validation: huValidation,
  errors: huErrors,
  chat: huChat,
  profile: huProfile,
  settings: huSettings,
  subscription: huSubscription,
  legal: huLegal,
  cookies: huCookies,
  admin: huAdmin,
} satisfies Resources;

// Every language the server speaks (the generated `Language`) needs its texts here.
export const resources = { 'en-US': enUS, 'hu-HU': huHU } as const satisfies Record<Language, Resources>;

export const namespaces = Object.keys(enUS) as Namespace[];
export const defaultNS = 'common' satisfies Namespace;
