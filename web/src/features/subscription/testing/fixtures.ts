/** The default catalogue (config/plans.toml) and subscriptions as the server answers them, for tests. */
import { jsonResponse } from '@/test/fixtures';
import type { BillingInfo, Invoice, Payment, Plan, PlanType, Subscription } from '@/types/generated';

function plan(
  planType: PlanType,
  rank: number,
  eur: number,
  huf: number,
  limits: Plan['limits'],
  features: Partial<Plan['features']> = {},
): Plan {
  const vat = (net: number) => Math.round(net * 27) / 100;
  return {
    planType,
    name: planType[0]!.toUpperCase() + planType.slice(1),
    rank,
    features: {
      googleWebSearch: false,
      openaiWebSearch: false,
      documentProcessing: false,
      projectManagement: false,
      imageGeneration: false,
      ...features,
    },
    // As in this build: no feature works yet (server/src/plans.rs AVAILABLE).
    available: {
      googleWebSearch: false,
      openaiWebSearch: false,
      documentProcessing: false,
      projectManagement: false,
      imageGeneration: false,
      imageUpload: false,
    },
    deepSearchSearches: 6,
    limits,
    maxImagesPerMessage: [1, 2, 3, 5][rank]!,
    fileLimits: { imageMaxMb: 10, documentMaxMb: 20, storageMb: 100 },
    chatModels: ['gpt-4o-mini'],
    models: {
      baseChatModel: 'gpt-4o-mini',
      webPreprocessingModel: null,
      webContentProcessingModel: null,
      webSearchModel: null,
      documentProcessingModel: null,
      embeddingModel: null,
      imageGenerationPreprocessingModel: null,
      imageAnalysisModel: null,
    },
    prices: {
      EUR: { net: eur, vat: vat(eur), total: eur + vat(eur) },
      HUF: { net: huf, vat: vat(huf), total: huf + vat(huf) },
    },
  };
}

const all = { googleWebSearch: true, openaiWebSearch: true, documentProcessing: true, projectManagement: true, imageGeneration: true };

export const plans: Record<PlanType, Plan> = {
  free: plan('free', 0, 0, 0, {
    responseLimit: { daily: 50, monthly: null },
    webSearchLimit: { daily: 0, monthly: 0 },
    imageGenerationLimit: { daily: 0, monthly: 0 },
  }),
  base: plan(
    'base',
    1,
    5,
    1500,
    {
      responseLimit: { daily: 300, monthly: 6000 },
      webSearchLimit: { daily: 20, monthly: 300 },
      imageGenerationLimit: { daily: 5, monthly: 50 },
    },
    { openaiWebSearch: true, documentProcessing: true, imageGeneration: true },
  ),
  plus: plan(
    'plus',
    2,
    10,
    3000,
    {
      responseLimit: { daily: 1000, monthly: 20000 },
      webSearchLimit: { daily: 100, monthly: 2000 },
      imageGenerationLimit: { daily: 20, monthly: 300 },
    },
    all,
  ),
  pro: plan(
    'pro',
    3,
    20,
    6000,
    {
      responseLimit: { daily: null, monthly: null },
      webSearchLimit: { daily: 300, monthly: 6000 },
      imageGenerationLimit: { daily: 50, monthly: 1000 },
    },
    all,
  ),
};

export const plansAnswer = {
  success: true,
  data: Object.values(plans),
  vatRate: 0.27,
  vat: { rate: 0.27, treatment: 'standard', basis: 'seller', country: 'HU' },
};

export const END_DATE = '2025-04-14T10:03:40.912+00:00';

export function subscriptionOn(
  planType: PlanType,
  overrides: Partial<Subscription['data']> = {},
  pending: PlanType | null = null,
): Subscription {
  const paid = planType !== 'free';
  return {
    data: {
      _id: '019593fe-2a10-7b4c-8d21-5e6f7a8b9c0d',
      planType,
      status: 'active',
      startDate: '2025-03-14T10:03:40.912+00:00',
      endDate: paid ? END_DATE : null,
      billingCycle: paid ? 'monthly' : null,
      paymentMethod: paid ? 'credit_card' : null,
      currency: paid ? 'EUR' : null,
      autoRenew: paid && !pending,
      cancelAtPeriodEnd: pending === 'free',
      ...overrides,
    },
    subscriptionPlan: plans[planType],
    pendingSubscription: pending
      ? { planType: pending, activationDate: END_DATE, requestedAt: '2025-03-20T08:15:00.250+00:00' }
      : null,
    pendingSubscriptionPlan: pending ? plans[pending] : null,
  };
}

export const payment: Payment = {
  _id: '0195941aae987c1d9e2f3a4b5c6d7e8f',
  planType: 'plus',
  billingCycle: 'monthly',
  kind: 'checkout',
  status: 'pending',
  currency: 'EUR',
  netAmount: 10,
  vatRate: 0.27,
  vatAmount: 2.7,
  vatTreatment: 'standard',
  vatCheck: null,
  totalAmount: 12.7,
  refundedAmount: 0,
  paymentMethod: 'credit_card',
  provider: 'demo',
  createdAt: '2025-03-14T10:02:11.480+00:00',
  completedAt: null,
};

export const billingInfo: BillingInfo = {
  billingType: 'private',
  name: 'Anna Kovács',
  companyName: null,
  address: 'Fő utca 1.',
  city: 'Budapest',
  postalCode: '1011',
  country: 'HU',
  vatNumber: null,
};

export const invoice: Invoice = {
  _id: '0195941aae987c1d9e2f3a4b5c6d7e90',
  kind: 'invoice',
  number: '2025-000042',
  creditNoteOf: null,
  issuedAt: '2025-03-14T10:03:00.000+00:00',
  paymentId: payment._id,
  transactionId: 'pi_3QbX2yDemo000001',
  planType: 'plus',
  planName: 'Plus',
  billingCycle: 'monthly',
  periodStart: '2025-03-14T10:03:00.000+00:00',
  periodEnd: '2025-04-14T10:03:00.000+00:00',
  currency: 'EUR',
  netAmount: 10,
  vatRate: 0.27,
  vatAmount: 2.7,
  totalAmount: 12.7,
  vatTreatment: 'standard',
  vatCheck: null,
  hufVat: null,
  seller: { name: 'Chat Kft.', address: 'Váci út 1., 1062 Budapest', vatNumber: 'HU12345678', country: 'HU' },
  buyer: billingInfo,
  pdfUrl: '/api/invoices/0195941aae987c1d9e2f3a4b5c6d7e90.pdf',
};

type Handler = (init: RequestInit | undefined) => Response | Promise<Response>;

/**
 * A fetch stand-in answering by "METHOD /api/path"; anything else is a 404. Each handler
 * may be a Response maker or a plain body (answered 200 as JSON).
 */
export function fakeServer(routes: Record<string, Handler | object>) {
  return (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const path = new URL(url, 'http://localhost').pathname;
    const route = routes[`${init?.method ?? 'GET'} ${path}`];
    if (typeof route === 'function') return Promise.resolve((route as Handler)(init));
    if (route) return Promise.resolve(jsonResponse(200, route));
    return Promise.resolve(jsonResponse(404, { success: false, code: 'not_found', message: 'Not found' }));
  };
}
