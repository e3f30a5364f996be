//! The operator console's answers: `/api/admin/*` (docs/api.md, "Operator console").
//! Only admins reach these; what they show of a user is what support needs to answer
//! them, and every change an admin makes is an [`AuditEntry`].

use std::collections::BTreeMap;

use serde::Serialize;
use ts_rs::TS;

use crate::states::{AccountStatus, AuditAction, BillingCycle, Currency, PlanType, UserRole};
use crate::views::{Invoice, Payment, Subscription, Usage};

/// A row of the users table: `GET /api/admin/users` (paged).
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AdminUserRow {
    /// The user's id; for an unverified registration, `null` (it has no account yet).
    #[serde(rename = "_id")]
    pub id: Option<String>,
    pub email: String,
    pub name: String,
    pub role: UserRole,
    pub status: AccountStatus,
    pub created_at: String,
    /// The last login or socket connection (kept to the hour), `null` if never.
    pub last_active_at: Option<String>,
    pub plan_type: PlanType,
    /// When the paid plan ends; `null` on free.
    pub plan_end_date: Option<String>,
    pub usage: AdminUsage,
}

/// What a user used today and this month (the quota day and month of their plan).
#[derive(Debug, Clone, Serialize, TS)]
pub struct AdminUsage {
    pub today: ServiceCounts,
    pub month: ServiceCounts,
}

#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ServiceCounts {
    pub responses: u32,
    pub web_searches: u32,
    pub image_generations: u32,
}

/// One user as the operator sees them: `GET /api/admin/users/{id}`.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AdminUserDetail {
    pub user: AdminUserRow,
    /// When an admin suspended the account, `null` when it is not suspended.
    pub suspended_at: Option<String>,
    /// The subscription with its pending change, as the user's own Settings show it.
    pub subscription: Subscription,
    /// The plan's limits and the counters, as the user's own usage call shows them.
    pub usage: Usage,
    /// Newest first.
    pub payments: Vec<Payment>,
    /// Invoices and credit notes, newest first.
    pub invoices: Vec<Invoice>,
    /// The admin actions on this user, newest first (the latest 50).
    pub audit: Vec<AuditEntry>,
}

/// One row of the audit log: `GET /api/admin/audit` (paged) and a user's page.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AuditEntry {
    #[serde(rename = "_id")]
    pub id: String,
    pub at: String,
    /// The admin who acted; `null` for the command line, or an admin since deleted.
    pub actor_id: Option<String>,
    /// The admin's e-mail then, or `command line`.
    pub actor: String,
    pub action: AuditAction,
    /// The user acted on; `null` once their account is deleted.
    pub target_user_id: Option<String>,
    /// The user's e-mail then.
    pub target: String,
    pub reason: String,
    /// What changed, before and after (e.g. `planType`, `endDate`, `suspended`).
    pub before: BTreeMap<String, String>,
    pub after: BTreeMap<String, String>,
}

/// Whether a user is suspended: `PUT /api/admin/users/{id}/suspension` answers it.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AdminSuspension {
    pub suspended: bool,
    /// When an admin suspended the account, `null` when it is not suspended.
    pub suspended_at: Option<String>,
}

/// A refund and its credit note: `POST /api/admin/payments/{id}/refund`. Amounts in
/// major units, like the payment's.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Refund {
    #[serde(rename = "_id")]
    pub id: String,
    pub payment_id: String,
    pub amount: f64,
    pub currency: Currency,
    pub reason: String,
    /// `demo` (recorded only: no money moved) or `stripe`.
    pub provider: String,
    /// Stripe's refund id (`re_…`); `null` for a demo refund.
    pub provider_ref: Option<String>,
    /// The admin who refunded; `null` for a refund made in Stripe's dashboard.
    pub actor_id: Option<String>,
    /// The admin's e-mail then, or `stripe`.
    pub actor: String,
    pub created_at: String,
    /// The credit note the refund issued (kind `credit_note`, negative amounts).
    pub credit_note: Invoice,
    /// The payment now, its `refundedAmount` included.
    pub payment: Payment,
}

/// The operator's figures for a range of days: `GET /api/admin/stats?from=&to=&by=day&tz=`
/// (docs/api.md, "Stats"). Money is net of VAT, in major units; model cost is in euros at
/// the catalogue's prices (`models.toml`) when each call was made.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AdminStats {
    /// The first and last day of the range (YYYY-MM-DD, in `timeZone`), both included.
    pub from: String,
    pub to: String,
    /// The IANA zone the days are cut in (the operator's browser sends its own).
    pub time_zone: String,
    /// One row a day, oldest first; every day of the range, zeros included.
    pub days: Vec<StatsDay>,
    /// Users who sent a message on the range's last day, in its last 7 and its last 30
    /// days.
    pub active_users: ActiveUsers,
    /// The range's answers and model calls by model, most costly first.
    pub by_model: Vec<ModelFigures>,
    /// The same by the user's plan at the call, with what the plan brought in.
    pub by_plan: Vec<PlanFigures>,
    /// The users whose calls cost most in the range (at most 10), most costly first.
    pub top_users: Vec<TopUser>,
    /// Paid subscriptions active now, by plan and billing cycle.
    pub subscriptions: Vec<ActiveSubscriptions>,
    /// Monthly recurring revenue now: the net monthly price of every renewing plan, in
    /// each currency apart.
    pub mrr: Amounts,
}

/// Euros and forints, kept apart (net).
#[derive(Debug, Clone, Default, Serialize, TS)]
pub struct Amounts {
    pub eur: f64,
    pub huf: f64,
}

#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct StatsDay {
    /// YYYY-MM-DD in the stats' time zone.
    pub date: String,
    pub sign_ups: u32,
    /// Users who sent a message that day.
    pub active_users: u32,
    /// Answers asked for (each counts once, whatever its outcome).
    pub messages: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// What every model call cost, in euros.
    pub cost: f64,
    /// Checkouts paid (a first payment for a plan).
    pub new_subscriptions: u32,
    /// Renewing plans set to cancel that day.
    pub cancelled: u32,
    /// Renewal payments that failed.
    pub failed_renewals: u32,
    /// Payments that succeeded, net.
    pub revenue: Amounts,
    /// Refunds made, net.
    pub refunds: Amounts,
}

#[derive(Debug, Clone, Serialize, TS)]
pub struct ActiveUsers {
    pub daily: u32,
    pub weekly: u32,
    pub monthly: u32,
}

#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ModelFigures {
    pub model: String,
    /// Answers.
    pub messages: u32,
    /// Every call: answers, titles, search steps, embeddings, images.
    pub calls: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub images: u32,
    /// Euros.
    pub cost: f64,
}

#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PlanFigures {
    pub plan_type: PlanType,
    pub messages: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Euros.
    pub cost: f64,
    /// Payments for the plan in the range less its refunds, net.
    pub revenue: Amounts,
    /// Revenue less model cost, in euros (forints converted at the rate docs/api.md
    /// names).
    pub gross_margin: f64,
}

#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TopUser {
    /// `null` for a deleted account (its costs stay).
    #[serde(rename = "_id")]
    pub id: Option<String>,
    pub email: Option<String>,
    pub plan_type: PlanType,
    pub messages: u32,
    pub tokens: u64,
    pub cost: f64,
}

#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ActiveSubscriptions {
    pub plan_type: PlanType,
    pub billing_cycle: BillingCycle,
    pub count: u32,
}
