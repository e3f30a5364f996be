/** The operator console's calls (docs/api.md "Operator console"), typed. */
import { api, apiBlob } from '@/lib/api-client';
import type {
  AccountStatus,
  AdminStats,
  AdminUserDetail,
  AdminUserRow,
  AuditEntry,
  Data,
  Invoice,
  Payment,
  PlanType,
  Usage,
} from '@/types/generated';

/** The dashboard's range: calendar days (YYYY-MM-DD, both included) cut in the IANA zone `tz`. */
export interface StatsQuery {
  from: string;
  to: string;
  tz: string;
}

/** A page of a paged list: `nextCursor` is null on the last one. */
export interface Page<T> {
  data: T[];
  nextCursor: string | null;
}

export interface UserFilters {
  /** A prefix of the e-mail or the name. */
  q: string;
  plan: PlanType | '';
  /** Empty: active and suspended accounts (the server's default). */
  status: AccountStatus | '';
}

export interface AuditFilters {
  userId?: string | undefined;
  actor?: string | undefined;
}

/** The services whose day an admin can give back, as the reset call names them. */
export type ResetService = 'responses' | 'webSearches' | 'imageGenerations';
export const RESET_SERVICES: readonly ResetService[] = ['responses', 'webSearches', 'imageGenerations'];

/** The plans, cheapest first, as the filters and the plan dialog offer them. */
export const PLANS: readonly PlanType[] = ['free', 'base', 'plus', 'pro'];

export interface RefundRequest {
  /** Omitted: what remains of the payment. */
  amount?: number;
  reason: string;
  endPlan: boolean;
}

export interface RefundAnswer {
  creditNote: Invoice;
  payment: Payment;
}

/** `?a=1&b=2` of the parameters that have a value, or '' when none has. */
export function queryString(params: Record<string, string | null | undefined>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value) search.set(name, value);
  const text = search.toString();
  return text ? `?${text}` : '';
}

const userPath = (id: string) => `/admin/users/${encodeURIComponent(id)}`;

export const adminApi = {
  listUsers: ({ q, plan, status }: UserFilters, cursor: string | null) =>
    api
      .get<Page<AdminUserRow>>(`/admin/users${queryString({ q: q.trim(), plan, status, cursor })}`)
      .then(({ data, nextCursor }) => ({ data, nextCursor })),

  getUser: (id: string) => api.get<Data<AdminUserDetail>>(userPath(id)).then((answer) => answer.data),

  /** `days` only for a paid plan (the server's default is 30). */
  setPlan: (id: string, body: { planType: PlanType; days?: number; reason: string }) =>
    api.put<Data<AdminUserDetail>>(`${userPath(id)}/plan`, body).then((answer) => answer.data),

  setSuspended: (id: string, body: { suspended: boolean; reason: string }) =>
    api
      .put<Data<{ suspended: boolean; suspendedAt: string | null }>>(`${userPath(id)}/suspension`, body)
      .then((answer) => answer.data),

  resetUsage: (id: string, body: { service: ResetService; reason: string }) =>
    api.post<Data<Usage>>(`${userPath(id)}/usage-reset`, body).then((answer) => answer.data),

  /** The same `idempotencyKey` never refunds twice (a double click, a retried request). */
  refund: (paymentId: string, body: RefundRequest, idempotencyKey: string) =>
    api
      .post<Data<RefundAnswer>>(`/admin/payments/${encodeURIComponent(paymentId)}/refund`, body, {
        headers: { 'Idempotency-Key': idempotencyKey },
      })
      .then((answer) => answer.data),

  /** Any user's invoice or credit note as a PDF (`GET /api/admin/invoices/{id}.pdf`). */
  getInvoicePdf: (invoice: Invoice) => apiBlob(`/admin/invoices/${encodeURIComponent(invoice._id)}.pdf`),

  /** The dashboard's figures, one row a day. */
  getStats: ({ from, to, tz }: StatsQuery) =>
    api.get<Data<AdminStats>>(`/admin/stats${queryString({ from, to, by: 'day', tz })}`).then((answer) => answer.data),

  listAudit: ({ userId, actor }: AuditFilters, cursor: string | null) =>
    api
      .get<Page<AuditEntry>>(`/admin/audit${queryString({ userId, actor, cursor })}`)
      .then(({ data, nextCursor }) => ({ data, nextCursor })),
};
