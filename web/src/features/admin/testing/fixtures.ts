/** Console data for tests and for looking at the screens with the network mocked. */
import type {
  AdminStats,
  AdminUserDetail,
  AdminUserRow,
  AuditEntry,
  Invoice,
  Payment,
  StatsDay,
  Subscription,
  Usage,
  UsageCounter,
} from '@/types/generated';

export const ADMIN_ID = '0195a0000000700080000000000000a1';
export const USER_ID = '0195a0000000700080000000000000b2';

export function row(overrides: Partial<AdminUserRow> = {}): AdminUserRow {
  return {
    _id: USER_ID,
    email: 'bela.nagy@example.com',
    name: 'Nagy Béla',
    role: 'user',
    status: 'active',
    createdAt: '2025-01-10T08:00:00.000+00:00',
    lastActiveAt: '2025-03-20T14:00:00.000+00:00',
    planType: 'plus',
    planEndDate: '2025-04-14T10:03:40.912+00:00',
    usage: {
      today: { responses: 12, webSearches: 3, imageGenerations: 1 },
      month: { responses: 240, webSearches: 31, imageGenerations: 9 },
    },
    ...overrides,
  };
}

export const rows: AdminUserRow[] = [
  row(),
  row({
    _id: '0195a0000000700080000000000000c3',
    email: 'csilla.kiss-hosszunev@example-company.co.hu',
    name: 'Kiss Csilla',
    status: 'suspended',
    planType: 'free',
    planEndDate: null,
    lastActiveAt: null,
    usage: { today: { responses: 0, webSearches: 0, imageGenerations: 0 }, month: { responses: 5, webSearches: 0, imageGenerations: 0 } },
  }),
  row({
    _id: ADMIN_ID,
    email: 'admin@example.com',
    name: 'Operator',
    role: 'admin',
    planType: 'pro',
  }),
];

function counter(used: number, limit: number | null): UsageCounter {
  return {
    used,
    limit,
    remaining: limit === null ? null : Math.max(0, limit - used),
    unlimited: limit === null,
    resetsAt: '2025-03-21T00:00:00.000+00:00',
  };
}

export const usage: Usage = {
  hasActiveLimit: true,
  limitInfo: {
    limitType: 'plus',
    startDate: '2025-03-20T00:00:00.000+00:00',
    endDate: '2025-03-21T00:00:00.000+00:00',
    monthStartDate: '2025-03-14T00:00:00.000+00:00',
    monthEndDate: '2025-04-14T00:00:00.000+00:00',
    timezone: 'Europe/Budapest',
    services: {
      responses: { daily: counter(12, 100), monthly: counter(240, 2000) },
      searches: { daily: counter(3, 20), monthly: counter(31, 300) },
      images: { daily: counter(0, 10), monthly: counter(9, null) },
    },
  },
};

export const subscription: Subscription = {
  data: {
    _id: '0195a0000000700080000000000000d4',
    planType: 'plus',
    status: 'active',
    startDate: '2025-03-14T10:03:40.912+00:00',
    endDate: '2025-04-14T10:03:40.912+00:00',
    billingCycle: 'monthly',
    paymentMethod: 'credit_card',
    currency: 'EUR',
    autoRenew: true,
    cancelAtPeriodEnd: false,
  },
  // The console shows the plan by its type: the plan object is not read.
  subscriptionPlan: null as unknown as Subscription['subscriptionPlan'],
  pendingSubscription: { planType: 'base', activationDate: '2025-04-14T10:03:40.912+00:00', requestedAt: '2025-03-18T09:00:00.000+00:00' },
  pendingSubscriptionPlan: null,
};

export const payment: Payment = {
  _id: '0195a0000000700080000000000000e5',
  planType: 'plus',
  billingCycle: 'monthly',
  kind: 'checkout',
  status: 'succeeded',
  currency: 'EUR',
  netAmount: 10,
  vatRate: 0.27,
  vatAmount: 2.7,
  vatTreatment: 'standard',
  vatCheck: null,
  totalAmount: 12.7,
  refundedAmount: 5,
  paymentMethod: 'credit_card',
  provider: 'stripe',
  createdAt: '2025-03-14T10:02:11.480+00:00',
  completedAt: '2025-03-14T10:03:00.000+00:00',
};

export const failedPayment: Payment = {
  ...payment,
  _id: '0195a0000000700080000000000000f6',
  status: 'failed',
  refundedAmount: 0,
  createdAt: '2025-03-13T10:02:11.480+00:00',
  completedAt: null,
};

export const invoice: Invoice = {
  _id: '0195a000000070008000000000000107',
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
  buyer: {
    billingType: 'private',
    name: 'Nagy Béla',
    companyName: null,
    address: 'Fő utca 1.',
    city: 'Budapest',
    postalCode: '1011',
    country: 'HU',
    vatNumber: null,
  },
  pdfUrl: '/api/invoices/0195a000000070008000000000000107.pdf',
};

export const creditNote: Invoice = {
  ...invoice,
  _id: '0195a000000070008000000000000108',
  kind: 'credit_note',
  number: '2025-000057',
  creditNoteOf: '2025-000042',
  issuedAt: '2025-03-20T15:00:00.000+00:00',
  netAmount: -3.94,
  vatAmount: -1.06,
  totalAmount: -5,
  pdfUrl: '/api/invoices/0195a000000070008000000000000108.pdf',
};

export const auditEntry: AuditEntry = {
  _id: '0195a000000070008000000000000201',
  at: '2025-03-20T15:00:00.000+00:00',
  actorId: ADMIN_ID,
  actor: 'admin@example.com',
  action: 'payment.refunded',
  targetUserId: USER_ID,
  target: 'bela.nagy@example.com',
  reason: 'Double charge reported by e-mail',
  before: { refundedAmount: '0' },
  after: { refundedAmount: '5' },
};

export const auditEntries: AuditEntry[] = [
  auditEntry,
  {
    ...auditEntry,
    _id: '0195a000000070008000000000000202',
    at: '2025-03-19T11:00:00.000+00:00',
    action: 'plan.changed',
    reason: 'Support gesture after an outage',
    before: { planType: 'base', endDate: '2025-04-01T00:00:00.000+00:00' },
    after: { planType: 'plus', endDate: '2025-04-14T10:03:40.912+00:00' },
  },
  {
    ...auditEntry,
    _id: '0195a000000070008000000000000203',
    at: '2025-03-01T09:00:00.000+00:00',
    actorId: null,
    actor: 'command line',
    action: 'admin.granted',
    targetUserId: ADMIN_ID,
    target: 'admin@example.com',
    reason: 'granted with chat-server users grant-admin',
    before: { role: 'user' },
    after: { role: 'admin' },
  },
];

export function detail(overrides: Partial<AdminUserDetail> = {}): AdminUserDetail {
  return {
    user: row(),
    suspendedAt: null,
    subscription,
    usage,
    payments: [payment, failedPayment],
    invoices: [creditNote, invoice],
    audit: auditEntries.slice(0, 2),
    ...overrides,
  };
}

/** A day of the stats with nothing in it, or with the figures given. */
export function statsDay(date: string, overrides: Partial<StatsDay> = {}): StatsDay {
  return {
    date,
    signUps: 0,
    activeUsers: 0,
    messages: 0,
    inputTokens: 0,
    outputTokens: 0,
    cost: 0,
    newSubscriptions: 0,
    cancelled: 0,
    failedRenewals: 0,
    revenue: { eur: 0, huf: 0 },
    refunds: { eur: 0, huf: 0 },
    ...overrides,
  };
}

/** Three days of a small service: two paying users, one deleted account among the costliest. */
export function stats(overrides: Partial<AdminStats> = {}): AdminStats {
  return {
    from: '2025-03-12',
    to: '2025-03-14',
    timeZone: 'Europe/Budapest',
    days: [
      statsDay('2025-03-12', { signUps: 2, activeUsers: 3, messages: 40, inputTokens: 12000, outputTokens: 8000, cost: 0.0425 }),
      statsDay('2025-03-13', {
        signUps: 1,
        activeUsers: 5,
        messages: 75,
        inputTokens: 30000,
        outputTokens: 21000,
        cost: 1.25,
        newSubscriptions: 1,
        revenue: { eur: 6.35, huf: 0 },
      }),
      statsDay('2025-03-14', {
        activeUsers: 4,
        messages: 12,
        inputTokens: 3000,
        outputTokens: 1500,
        cost: 0.3,
        cancelled: 1,
        failedRenewals: 1,
        revenue: { eur: 0, huf: 2540 },
        refunds: { eur: 6.35, huf: 0 },
      }),
    ],
    activeUsers: { daily: 4, weekly: 7, monthly: 9 },
    byModel: [
      { model: 'gpt-4o', messages: 100, calls: 110, inputTokens: 40000, outputTokens: 28000, images: 0, cost: 1.5 },
      { model: 'gpt-image-1', messages: 0, calls: 2, inputTokens: 0, outputTokens: 0, images: 2, cost: 0.0925 },
    ],
    byPlan: [
      { planType: 'plus', messages: 90, inputTokens: 35000, outputTokens: 25000, cost: 1.4, revenue: { eur: 0, huf: 2540 }, grossMargin: 5.1 },
      { planType: 'base', messages: 37, inputTokens: 10000, outputTokens: 5500, cost: 0.1925, revenue: { eur: 6.35, huf: 0 }, grossMargin: 6.16 },
    ],
    topUsers: [
      { _id: USER_ID, email: 'bela.nagy@example.com', planType: 'plus', messages: 90, tokens: 60000, cost: 1.4 },
      { _id: null, email: null, planType: 'free', messages: 20, tokens: 9000, cost: 0.15 },
    ],
    subscriptions: [
      { planType: 'base', billingCycle: 'monthly', count: 3 },
      { planType: 'plus', billingCycle: 'one_time', count: 1 },
    ],
    mrr: { eur: 19.05, huf: 2540 },
    ...overrides,
  };
}
