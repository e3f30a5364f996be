//! The operator's users: the users table (search, filters, pages), one user's page, a
//! plan granted by an operator (the rule `chat-server users set-plan` shares), and a
//! day's usage given back. Each change is announced to the user's tabs as any other.

use std::collections::{BTreeMap, HashMap};

use chat_actors::quota::Used;
use chat_contract::admin::{AdminUsage, AdminUserDetail, AdminUserRow, ServiceCounts};
use chat_contract::states::{AccountStatus, AuditAction, BillingCycle, PlanType, Service};
use chat_contract::views::Usage;

use super::Admin;
use crate::clock::{iso, DAY_MS};
use crate::db::admin::{like_prefix, AdminUserDbRow, UserFilter};
use crate::db::audit::{Actor, AuditFilter, AuditRecord};
use crate::db::subscriptions::{Activation, SubscriptionRow};
use crate::db::users::UserRow;
use crate::db::Db;
use crate::error::{ApiError, ErrorCode, Result};
use crate::plans::Currency;

/// Rows of a page of the users table.
pub const PAGE: i64 = 50;
/// An operator's paid plan lasts this many days unless told otherwise, and at most this
/// many.
pub const DEFAULT_DAYS: i64 = chat_contract::limits::DEFAULT_PLAN_GRANT_DAYS as i64;
pub const MAX_DAYS: i64 = chat_contract::limits::MAX_PLAN_GRANT_DAYS as i64;
/// Audit rows shown on a user's page.
const AUDIT_ON_PAGE: i64 = 50;

/// The query of the users table, as sent (empty texts count as absent).
#[derive(Debug, Default)]
pub struct UsersQuery<'a> {
    pub q: Option<&'a str>,
    pub plan: Option<&'a str>,
    pub status: Option<&'a str>,
    pub cursor: Option<&'a str>,
}

/// A page of the users table and the cursor of the next, if any.
pub struct UsersPage {
    pub rows: Vec<AdminUserRow>,
    pub next_cursor: Option<String>,
}

/// A plan an operator grants: paid from now for some days (no payment, no renewal), or
/// free at once.
pub struct PlanGrant {
    pub plan: PlanType,
    /// `None` for free.
    pub activation: Option<Activation<'static>>,
}

/// The rule of an operator's plan (`PUT /api/admin/users/{id}/plan` and
/// `chat-server users set-plan`): a paid plan runs from `now` for `days` (default
/// [`DEFAULT_DAYS`], 1 to [`MAX_DAYS`]); `free` ends a paid plan at once (days ignored).
pub fn plan_grant(plan: Option<&str>, days: Option<i64>, now: i64) -> Result<PlanGrant> {
    let plan = PlanType::parse(plan.unwrap_or("").trim())
        .ok_or_else(|| ApiError::field(ErrorCode::ValidationError, "planType"))?;
    if plan == PlanType::Free {
        return Ok(PlanGrant {
            plan,
            activation: None,
        });
    }
    let days = days.unwrap_or(DEFAULT_DAYS);
    if !(1..=MAX_DAYS).contains(&days) {
        return Err(ApiError::field(ErrorCode::ValidationError, "days"));
    }
    Ok(PlanGrant {
        plan,
        activation: Some(operator_activation(plan, now, days)),
    })
}

/// A paid plan from `now` for `days` days, granted by an operator: no payment, no renewal.
pub fn operator_activation(plan: PlanType, now: i64, days: i64) -> Activation<'static> {
    Activation {
        plan_type: plan,
        billing_cycle: BillingCycle::OneTime,
        payment_method: "operator",
        currency: Currency::Eur,
        start_date: now,
        end_date: now + days * DAY_MS,
    }
}

/// Grants `grant` to `user` with its `plan.changed` audit row (plan and end date, before
/// and after) in one transaction.
pub async fn grant_plan(
    db: &Db,
    user: &UserRow,
    grant: &PlanGrant,
    actor: Actor,
    reason: &str,
    now: i64,
) -> Result<()> {
    let before = db.subscription(&user.id, now).await?;
    let end = |end: Option<i64>| end.map(iso).unwrap_or_default();
    let fields = |plan: PlanType, end_date: Option<i64>| -> BTreeMap<String, String> {
        [
            ("planType".to_owned(), plan.as_str().to_owned()),
            ("endDate".to_owned(), end(end_date)),
        ]
        .into()
    };
    let record = AuditRecord {
        at: now,
        actor,
        action: AuditAction::PlanChanged,
        target_user_id: Some(user.id.clone()),
        target: user.email.clone(),
        reason: reason.to_owned(),
        before: fields(before.plan_type, before.end_date),
        after: fields(grant.plan, grant.activation.as_ref().map(|a| a.end_date)),
    };
    db.grant_plan(&user.id, grant.activation.as_ref(), &record, now)
        .await?;
    Ok(())
}

fn nonempty(text: Option<&str>) -> Option<&str> {
    text.map(str::trim).filter(|t| !t.is_empty())
}

/// `{created_at}.{key}` of a page's last row.
fn cursor_of(row: &AdminUserDbRow) -> String {
    format!("{}.{}", row.created_at, row.sort_key)
}

fn parse_cursor(text: &str) -> Result<(i64, String)> {
    text.split_once('.')
        .and_then(|(at, key)| Some((at.parse().ok()?, key.to_owned())))
        .ok_or_else(|| ApiError::field(ErrorCode::ValidationError, "cursor"))
}

fn counts(used: &HashMap<Service, Used>) -> AdminUsage {
    let of = |s: Service| used.get(&s).copied().unwrap_or_default();
    let pick = |f: fn(Used) -> u32| ServiceCounts {
        responses: f(of(Service::Responses)),
        web_searches: f(of(Service::WebSearches)),
        image_generations: f(of(Service::ImageGenerations)),
    };
    AdminUsage {
        today: pick(|u| u.day),
        month: pick(|u| u.month),
    }
}

/// A user's row, from the account, its subscription and its counters.
fn user_row(user: &UserRow, sub: &SubscriptionRow, used: &HashMap<Service, Used>) -> AdminUserRow {
    AdminUserRow {
        id: Some(user.id.clone()),
        email: user.email.clone(),
        name: user.name.clone(),
        role: user.role,
        status: match user.suspended_at {
            Some(_) => AccountStatus::Suspended,
            None => AccountStatus::Active,
        },
        created_at: iso(user.created_at),
        last_active_at: user.last_active_at.map(iso),
        plan_type: sub.plan_type,
        plan_end_date: sub.end_date.map(iso),
        usage: counts(used),
    }
}

impl Admin {
    /// A page of the users table, newest first. `q` is the start of an e-mail or name
    /// (any case); `plan` one of the plans; `status` one of the states, by default active
    /// and suspended accounts; unknown values are `validation_error` about their field.
    pub async fn users(&self, query: &UsersQuery<'_>) -> Result<UsersPage> {
        let plan = nonempty(query.plan)
            .map(|p| PlanType::parse(p).ok_or_else(|| ApiError::field(ErrorCode::ValidationError, "plan")))
            .transpose()?;
        let status = nonempty(query.status)
            .map(|s| {
                AccountStatus::parse(s).ok_or_else(|| ApiError::field(ErrorCode::ValidationError, "status"))
            })
            .transpose()?;
        let filter = UserFilter {
            prefix: nonempty(query.q).map(like_prefix),
            plan,
            status,
            after: nonempty(query.cursor).map(parse_cursor).transpose()?,
        };
        let mut rows = self.db.admin_users(&filter, PAGE + 1).await?;
        let next_cursor = if rows.len() as i64 > PAGE {
            rows.truncate(PAGE as usize);
            rows.last().map(cursor_of)
        } else {
            None
        };
        // Only accounts have counters: one read per user, all asked at once.
        let ids: Vec<&str> = rows.iter().filter_map(|r| r.id.as_deref()).collect();
        let used = match status {
            Some(AccountStatus::Unverified | AccountStatus::Deleted) => Vec::new(),
            _ => self.quotas.used_of_many(&ids).await?,
        };
        let mut used = used.into_iter();
        let rows = rows
            .into_iter()
            .map(|row| {
                let counters = match status {
                    Some(AccountStatus::Unverified | AccountStatus::Deleted) => HashMap::new(),
                    _ => used.next().unwrap_or_default(),
                };
                AdminUserRow {
                    id: row.id,
                    email: row.email,
                    name: row.name,
                    role: row.role,
                    status: status.unwrap_or(if row.suspended_at.is_some() {
                        AccountStatus::Suspended
                    } else {
                        AccountStatus::Active
                    }),
                    created_at: iso(row.created_at),
                    last_active_at: row.last_active_at.map(iso),
                    plan_type: row.plan_type,
                    plan_end_date: row.end_date.map(iso),
                    usage: counts(&counters),
                }
            })
            .collect();
        Ok(UsersPage { rows, next_cursor })
    }

    async fn account(&self, id: &str) -> Result<UserRow> {
        Ok(self.db.user_by_id(id).await?.ok_or(ErrorCode::NotFound)?)
    }

    /// One user's page; an unknown id is `not_found`.
    pub async fn user(&self, id: &str) -> Result<AdminUserDetail> {
        let user = self.account(id).await?;
        let sub = self.db.subscription(id, self.clock.now_ms()).await?;
        let usage = self.quotas.usage_on(id, sub.plan_type).await?;
        let used = self.quotas.used_of_many(&[id]).await?.pop().unwrap_or_default();
        let payments = self.billing.payments_of(id).await?;
        let invoices = self.billing.invoices_of(id).await?;
        let filter = AuditFilter {
            target_user_id: Some(id.to_owned()),
            ..AuditFilter::default()
        };
        let audit = self.db.audit_page(&filter, AUDIT_ON_PAGE).await?;
        Ok(AdminUserDetail {
            user: user_row(&user, &sub, &used),
            suspended_at: user.suspended_at.map(iso),
            subscription: self.plans.subscription(&sub),
            usage,
            payments: payments.iter().map(crate::views::payment).collect(),
            invoices: invoices.iter().map(crate::views::invoice).collect(),
            audit: audit.iter().map(crate::views::audit_entry).collect(),
        })
    }

    /// Grants a plan ([`plan_grant`]'s rule) with its audit row, and tells the user's tabs
    /// (`subscription.updated`, then `usage.updated`) as any plan change does. Answers
    /// the user's page as it now is.
    pub async fn set_plan(
        &self,
        actor: Actor,
        id: &str,
        plan: Option<&str>,
        days: Option<i64>,
        why: Option<&str>,
    ) -> Result<AdminUserDetail> {
        let now = self.clock.now_ms();
        let grant = plan_grant(plan, days, now)?;
        let why = crate::domain::admin_reason(why)?;
        let user = self.account(id).await?;
        grant_plan(&self.db, &user, &grant, actor, &why, now).await?;
        self.announce.subscription(id).await;
        self.user(id).await
    }

    /// Gives back today's count of one service (`responses`, `webSearches`,
    /// `imageGenerations`); see [`crate::quota::Quotas::reset_today`] for the order that
    /// keeps the counters and the `usage.reset` row together. Tells the user's tabs
    /// (`usage.updated`) and answers the usage as it now is.
    pub async fn reset_usage(
        &self,
        actor: Actor,
        id: &str,
        service: Option<&str>,
        why: Option<&str>,
    ) -> Result<Usage> {
        let service = Service::parse(service.unwrap_or("").trim())
            .ok_or_else(|| ApiError::field(ErrorCode::ValidationError, "service"))?;
        let why = crate::domain::admin_reason(why)?;
        let user = self.account(id).await?;
        let fields = |used: u32| -> BTreeMap<String, String> {
            [
                ("service".to_owned(), service.as_str().to_owned()),
                ("used".to_owned(), used.to_string()),
            ]
            .into()
        };
        let keep = |taken: u32| async move {
            let record = AuditRecord {
                at: self.clock.now_ms(),
                actor,
                action: AuditAction::UsageReset,
                target_user_id: Some(user.id.clone()),
                target: user.email.clone(),
                reason: why,
                before: fields(taken),
                after: fields(0),
            };
            Ok(self.db.append_audit(&record).await?)
        };
        self.quotas.reset_today(id, service, keep).await?;
        self.announce.usage(id).await;
        self.quotas.usage(id).await
    }
}
