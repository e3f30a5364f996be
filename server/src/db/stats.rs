//! The operator's stats (issue 35): sums of the model calls, sign-ups, payments, refunds
//! and cancellations, by day and over a range. `admin::stats` decides what the days are
//! and what the figures mean; this file only sums.
//!
//! Model calls are read from their sums by UTC hour (`stats_hours`, `stats_user_hours`),
//! which [`Db::stats_roll_up`] keeps up to date from `model_calls` before each read: a
//! year is some 9,000 hours instead of millions of calls. Their days are spans of hours;
//! the rest are spans of unix milliseconds `[lo, hi)`, cut by the caller at local
//! midnight. The days of a call are a `WITH days (i, lo, hi) AS (VALUES …)` table of
//! integers written into the SQL (numbers computed by the server, never text from the
//! request), so both backends group by day with an index range scan per day.

use std::fmt::Write;

use chat_contract::states::{BillingCycle, Currency, PaymentKind, PaymentStatus, PlanType};

use super::{on_pool, Db};

/// An answer: the row of a message's answer, or of the image that was its answer (titles,
/// search steps and embeddings are other rows of the same message, or of none).
const IS_ANSWER: &str = "(c.kind IN ('answer', 'image') AND c.message_id IS NOT NULL)";

/// What the model calls of one day came to.
#[derive(Debug, Clone, Default, sqlx::FromRow)]
pub struct CallsDay {
    pub day: i64,
    pub messages: i64,
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub cost_nanos: i64,
}

/// The model calls of a range, grouped by one column (a model, or a plan).
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct CallsGroup {
    pub grp: String,
    pub messages: i64,
    pub calls: i64,
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub images: i64,
    pub cost_nanos: i64,
}

/// One user's calls in a range; `user_id` `None` for deleted accounts, together.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct UserCalls {
    pub user_id: Option<String>,
    pub email: Option<String>,
    pub messages: i64,
    pub tokens: i64,
    pub cost_nanos: i64,
}

/// Payments closed on a day, by kind, outcome and currency; net amounts in minor units.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct PaymentsDay {
    pub day: i64,
    pub kind: PaymentKind,
    pub status: PaymentStatus,
    pub currency: Currency,
    pub count: i64,
    pub net: i64,
}

/// Net minor units of one currency on a day.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct DayMoney {
    pub day: i64,
    pub currency: Currency,
    pub net: i64,
}

/// Net minor units of one currency for a plan.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct PlanMoney {
    pub plan_type: PlanType,
    pub currency: Currency,
    pub net: i64,
}

/// Paid plans now, by plan and cycle.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct PlansNow {
    pub plan_type: PlanType,
    pub billing_cycle: BillingCycle,
    pub count: i64,
}

/// Monthly plans that will renew, by the plan they renew as and their currency.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Renewing {
    pub plan_type: PlanType,
    pub currency: Currency,
    pub count: i64,
}

/// What [`Db::stats_calls_by`] groups by.
#[derive(Debug, Clone, Copy)]
pub enum GroupBy {
    Model,
    Plan,
}

/// `WITH days (i, lo, hi) AS (VALUES (0, lo, hi), …)`: the days of a call, numbered.
fn days_table(days: &[(i64, i64)]) -> String {
    let mut sql = String::from("WITH days (i, lo, hi) AS (VALUES ");
    for (i, (lo, hi)) in days.iter().enumerate() {
        let sep = if i == 0 { "" } else { ", " };
        write!(sql, "{sep}({i}, {lo}, {hi})").expect("writing to a String");
    }
    sql.push_str(") ");
    sql
}

/// Whole sums on both backends (Postgres sums BIGINT as NUMERIC).
fn sum(expr: &str) -> String {
    format!("CAST(COALESCE(SUM({expr}), 0) AS BIGINT)")
}

/// Hours finished in one transaction when catching up: short write locks, even on a
/// first read over years of calls.
const ROLL_UP_CHUNK_HOURS: i64 = 7 * 24;
const HOUR_MS: i64 = 3_600_000;

/// `INSERT … SELECT` of the hour sums of the calls with `$1 <= at < $2`.
fn roll_up_sql() -> [String; 2] {
    let answers = sum(&format!("CASE WHEN {IS_ANSWER} THEN 1 ELSE 0 END"));
    [
        format!(
            "INSERT INTO stats_hours (hour, model, plan_type, messages, calls, input_tokens, output_tokens, \
             images, cost_nanos) SELECT c.at / {HOUR_MS}, c.model, c.plan_type, {answers}, COUNT(*), {input}, \
             {output}, {images}, {cost} FROM model_calls c WHERE c.at >= $1 AND c.at < $2 \
             GROUP BY c.at / {HOUR_MS}, c.model, c.plan_type",
            input = sum("c.input_tokens"),
            output = sum("c.output_tokens"),
            images = sum("c.images"),
            cost = sum("c.cost_nanos"),
        ),
        format!(
            "INSERT INTO stats_user_hours (hour, user_id, messages, tokens, cost_nanos) \
             SELECT c.at / {HOUR_MS}, c.user_id, {answers}, {tokens}, {cost} FROM model_calls c \
             WHERE c.at >= $1 AND c.at < $2 GROUP BY c.at / {HOUR_MS}, c.user_id",
            tokens = sum("c.input_tokens + c.output_tokens"),
            cost = sum("c.cost_nanos"),
        ),
    ]
}

impl Db {
    /// Brings the hour sums up to `now`: the hours before `finished` (an hour number) are
    /// summed once and kept; the later ones are summed again on every call, as calls may
    /// still come for them. Several instances may call at once: the update of
    /// `stats_rollup` that opens each transaction makes them take turns.
    pub async fn stats_roll_up(&self, finished: i64, now: i64) -> sqlx::Result<()> {
        if self.stats_rolled_up(finished).await? {
            return Ok(());
        }
        let [hours, users] = roll_up_sql();
        loop {
            let caught_up = on_pool!(self, pool => {
                let mut tx = pool.begin().await?;
                sqlx::query("UPDATE stats_rollup SET updated_at = $1 WHERE id = 1")
                    .bind(now)
                    .execute(&mut *tx)
                    .await?;
                let done: Option<i64> = sqlx::query_scalar("SELECT done_until FROM stats_rollup WHERE id = 1")
                    .fetch_one(&mut *tx)
                    .await?;
                let start = match done {
                    Some(done) => Some(done),
                    None => sqlx::query_scalar::<_, Option<i64>>("SELECT MIN(at) FROM model_calls")
                        .fetch_one(&mut *tx)
                        .await?
                        .map(|at| (at / HOUR_MS).min(finished)),
                };
                let Some(start) = start else {
                    // No call yet: nothing to sum.
                    return tx.commit().await.map(|()| true);
                };
                // Finished hours a chunk at a time; then the unfinished ones, to the end.
                let end = (start + ROLL_UP_CHUNK_HOURS).min(finished);
                let (until_ms, caught_up) = if start < finished {
                    (end * HOUR_MS, false)
                } else {
                    (i64::MAX, true)
                };
                for table in ["stats_hours", "stats_user_hours"] {
                    sqlx::query(&format!("DELETE FROM {table} WHERE hour >= $1"))
                        .bind(start)
                        .execute(&mut *tx)
                        .await?;
                }
                for insert in [&hours, &users] {
                    sqlx::query(insert)
                        .bind(start * HOUR_MS)
                        .bind(until_ms)
                        .execute(&mut *tx)
                        .await?;
                }
                let done = if caught_up { start } else { end };
                sqlx::query("UPDATE stats_rollup SET done_until = $1 WHERE id = 1")
                    .bind(done)
                    .execute(&mut *tx)
                    .await?;
                tx.commit().await.map(|()| caught_up)
            })?;
            if caught_up {
                return Ok(());
            }
        }
    }

    /// Whether the hour sums are up to date without writing: every finished hour is, and
    /// the unfinished ones count as many calls as `model_calls` holds for them (rows are
    /// only ever added, so no new one came). A read, where a refresh would be a write.
    async fn stats_rolled_up(&self, finished: i64) -> sqlx::Result<bool> {
        let sql = format!(
            "SELECT r.done_until, \
             (SELECT COUNT(*) FROM model_calls c WHERE c.at >= r.done_until * {HOUR_MS}), \
             (SELECT {calls} FROM stats_hours h WHERE h.hour >= r.done_until) \
             FROM stats_rollup r WHERE r.id = 1",
            calls = sum("h.calls"),
        );
        let (done, stored, summed): (Option<i64>, i64, i64) =
            on_pool!(self, pool => sqlx::query_as(&sql).fetch_one(pool).await)?;
        Ok(done.is_some_and(|done| done >= finished) && stored == summed)
    }

    /// Each day's answers, tokens and cost (days in hours); days without calls are left out.
    pub async fn stats_calls_by_day(&self, days: &[(i64, i64)]) -> sqlx::Result<Vec<CallsDay>> {
        let sql = format!(
            "{days} SELECT CAST(d.i AS BIGINT) AS day, {messages} AS messages, {input} AS input_tokens, \
             {output} AS output_tokens, {cost} AS cost_nanos \
             FROM days d JOIN stats_hours h ON h.hour >= d.lo AND h.hour < d.hi GROUP BY d.i",
            days = days_table(days),
            messages = sum("h.messages"),
            input = sum("h.input_tokens"),
            output = sum("h.output_tokens"),
            cost = sum("h.cost_nanos"),
        );
        on_pool!(self, pool => sqlx::query_as(&sql).fetch_all(pool).await)
    }

    /// Each day's users with an answer (days in hours; deleted accounts are not counted).
    pub async fn stats_active_by_day(&self, days: &[(i64, i64)]) -> sqlx::Result<Vec<(i64, i64)>> {
        let sql = format!(
            "{days} SELECT CAST(d.i AS BIGINT), COUNT(DISTINCT u.user_id) FROM days d JOIN stats_user_hours u \
             ON u.hour >= d.lo AND u.hour < d.hi AND u.messages > 0 GROUP BY d.i",
            days = days_table(days),
        );
        on_pool!(self, pool => sqlx::query_as(&sql).fetch_all(pool).await)
    }

    /// The calls of the hours `[from, to)` grouped by a column.
    pub async fn stats_calls_by(&self, column: GroupBy, from: i64, to: i64) -> sqlx::Result<Vec<CallsGroup>> {
        let column = match column {
            GroupBy::Model => "model",
            GroupBy::Plan => "plan_type",
        };
        let sql = format!(
            "SELECT h.{column} AS grp, {messages} AS messages, {calls} AS calls, {input} AS input_tokens, \
             {output} AS output_tokens, {images} AS images, {cost} AS cost_nanos \
             FROM stats_hours h WHERE h.hour >= $1 AND h.hour < $2 GROUP BY h.{column}",
            messages = sum("h.messages"),
            calls = sum("h.calls"),
            input = sum("h.input_tokens"),
            output = sum("h.output_tokens"),
            images = sum("h.images"),
            cost = sum("h.cost_nanos"),
        );
        on_pool!(self, pool => sqlx::query_as(&sql).bind(from).bind(to).fetch_all(pool).await)
    }

    /// Distinct users with an answer in the hours `[from, to)` (deleted accounts are not
    /// counted).
    pub async fn stats_active_users(&self, from: i64, to: i64) -> sqlx::Result<i64> {
        let sql = "SELECT COUNT(DISTINCT user_id) FROM stats_user_hours WHERE hour >= $1 AND hour < $2 AND messages > 0";
        on_pool!(self, pool => sqlx::query_scalar(sql).bind(from).bind(to).fetch_one(pool).await)
    }

    /// The `limit` users whose calls in the hours `[from, to)` cost most, most costly
    /// first (deleted accounts together as one, `user_id` `None`).
    pub async fn stats_top_users(&self, from: i64, to: i64, limit: i64) -> sqlx::Result<Vec<UserCalls>> {
        let sql = format!(
            "SELECT t.user_id, u.email, t.messages, t.tokens, t.spent AS cost_nanos FROM \
             (SELECT h.user_id AS user_id, {messages} AS messages, {tokens} AS tokens, {cost} AS spent \
              FROM stats_user_hours h WHERE h.hour >= $1 AND h.hour < $2 GROUP BY h.user_id \
              ORDER BY spent DESC, COALESCE(h.user_id, '') LIMIT $3) t \
             LEFT JOIN users u ON u.id = t.user_id ORDER BY t.spent DESC, COALESCE(t.user_id, '')",
            messages = sum("h.messages"),
            tokens = sum("h.tokens"),
            cost = sum("h.cost_nanos"),
        );
        on_pool!(self, pool => sqlx::query_as(&sql).bind(from).bind(to).bind(limit).fetch_all(pool).await)
    }

    /// The plan of the user's latest call in `[from, to)` (`None`: of deleted accounts).
    pub async fn stats_latest_plan(
        &self,
        user_id: Option<&str>,
        from: i64,
        to: i64,
    ) -> sqlx::Result<Option<PlanType>> {
        let who = match user_id {
            Some(_) => "user_id = $3",
            None => "user_id IS NULL AND $3 IS NULL",
        };
        let sql = format!(
            "SELECT plan_type FROM model_calls WHERE {who} AND at >= $1 AND at < $2 ORDER BY at DESC LIMIT 1"
        );
        on_pool!(self, pool => sqlx::query_scalar(&sql).bind(from).bind(to).bind(user_id).fetch_optional(pool).await)
    }

    /// Each day's sign-ups: accounts created that day, deleted ones included.
    pub async fn stats_sign_ups(&self, days: &[(i64, i64)]) -> sqlx::Result<Vec<(i64, i64)>> {
        let sql = format!(
            "{days} SELECT CAST(d.i AS BIGINT), \
             (SELECT COUNT(*) FROM users u WHERE u.created_at >= d.lo AND u.created_at < d.hi) + \
             (SELECT COUNT(*) FROM deleted_accounts a WHERE a.created_at >= d.lo AND a.created_at < d.hi) \
             FROM days d",
            days = days_table(days),
        );
        on_pool!(self, pool => sqlx::query_as(&sql).fetch_all(pool).await)
    }

    /// Payments that succeeded or failed each day (by when they closed).
    pub async fn stats_payments_by_day(&self, days: &[(i64, i64)]) -> sqlx::Result<Vec<PaymentsDay>> {
        let sql = format!(
            "{days} SELECT CAST(d.i AS BIGINT) AS day, p.kind AS kind, p.status AS status, p.currency AS currency, \
             COUNT(*) AS count, {net} AS net \
             FROM days d JOIN payments p ON p.status IN ('succeeded', 'failed') \
             AND p.completed_at >= d.lo AND p.completed_at < d.hi \
             GROUP BY d.i, p.kind, p.status, p.currency",
            days = days_table(days),
            net = sum("p.net_amount"),
        );
        on_pool!(self, pool => sqlx::query_as(&sql).fetch_all(pool).await)
    }

    /// Refunds made each day, net (their credit notes' net, which are negative).
    pub async fn stats_refunds_by_day(&self, days: &[(i64, i64)]) -> sqlx::Result<Vec<DayMoney>> {
        let sql = format!(
            "{days} SELECT CAST(d.i AS BIGINT) AS day, i.currency AS currency, {net} AS net \
             FROM days d JOIN refunds r ON r.created_at >= d.lo AND r.created_at < d.hi \
             JOIN invoices i ON i.id = r.credit_note_id GROUP BY d.i, i.currency",
            days = days_table(days),
            net = sum("-i.net_amount"),
        );
        on_pool!(self, pool => sqlx::query_as(&sql).fetch_all(pool).await)
    }

    /// Each day's cancellations of renewing plans.
    pub async fn stats_cancellations(&self, days: &[(i64, i64)]) -> sqlx::Result<Vec<(i64, i64)>> {
        let sql = format!(
            "{days} SELECT CAST(d.i AS BIGINT), COUNT(*) FROM days d JOIN subscription_cancellations s \
             ON s.at >= d.lo AND s.at < d.hi GROUP BY d.i",
            days = days_table(days),
        );
        on_pool!(self, pool => sqlx::query_as(&sql).fetch_all(pool).await)
    }

    /// By plan: payments that succeeded in `[from, to)`, net.
    pub async fn stats_revenue_by_plan(&self, from: i64, to: i64) -> sqlx::Result<Vec<PlanMoney>> {
        let sql = format!(
            "SELECT p.plan_type AS plan_type, p.currency AS currency, {net} AS net FROM payments p \
             WHERE p.status = 'succeeded' AND p.completed_at >= $1 AND p.completed_at < $2 \
             GROUP BY p.plan_type, p.currency",
            net = sum("p.net_amount"),
        );
        on_pool!(self, pool => sqlx::query_as(&sql).bind(from).bind(to).fetch_all(pool).await)
    }

    /// By the refunded payment's plan: refunds made in `[from, to)`, net (positive).
    pub async fn stats_refunds_by_plan(&self, from: i64, to: i64) -> sqlx::Result<Vec<PlanMoney>> {
        let sql = format!(
            "SELECT p.plan_type AS plan_type, i.currency AS currency, {net} AS net FROM refunds r \
             JOIN payments p ON p.id = r.payment_id JOIN invoices i ON i.id = r.credit_note_id \
             WHERE r.created_at >= $1 AND r.created_at < $2 GROUP BY p.plan_type, i.currency",
            net = sum("-i.net_amount"),
        );
        on_pool!(self, pool => sqlx::query_as(&sql).bind(from).bind(to).fetch_all(pool).await)
    }

    /// Paid plans held now, by plan and cycle.
    pub async fn stats_plans_now(&self) -> sqlx::Result<Vec<PlansNow>> {
        let sql = "SELECT plan_type, billing_cycle, COUNT(*) AS count FROM subscriptions \
                   WHERE plan_type <> 'free' AND billing_cycle IS NOT NULL GROUP BY plan_type, billing_cycle";
        on_pool!(self, pool => sqlx::query_as(sql).fetch_all(pool).await)
    }

    /// Monthly plans that will renew (not set to cancel), by the plan they renew as (a
    /// scheduled downgrade's) and currency.
    pub async fn stats_renewing(&self) -> sqlx::Result<Vec<Renewing>> {
        let sql = "SELECT COALESCE(pending_plan_type, plan_type) AS plan_type, currency, COUNT(*) AS count \
                   FROM subscriptions WHERE plan_type <> 'free' AND billing_cycle = 'monthly' \
                   AND currency IS NOT NULL AND (pending_plan_type IS NULL OR pending_plan_type <> 'free') \
                   GROUP BY COALESCE(pending_plan_type, plan_type), currency";
        on_pool!(self, pool => sqlx::query_as(sql).fetch_all(pool).await)
    }
}
