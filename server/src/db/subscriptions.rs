//! Subscriptions: one row per user (created on first use, on the free plan).

use super::{on_pool, Db};
use chat_contract::states::{BillingCycle, Currency, PlanType, SubscriptionStatus};

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct SubscriptionRow {
    pub id: String,
    pub user_id: String,
    pub plan_type: PlanType,
    pub status: SubscriptionStatus,
    pub billing_cycle: Option<BillingCycle>,
    pub payment_method: Option<String>,
    pub currency: Option<Currency>,
    pub start_date: i64,
    pub end_date: Option<i64>,
    pub pending_plan_type: Option<PlanType>,
    pub pending_since: Option<i64>,
    /// The provider's subscription that renews this plan (Stripe); None if the
    /// scheduler renews it or nothing does.
    pub provider_subscription_id: Option<String>,
    /// While a suspension holds the renewal: the plan it renewed as (see
    /// `billing::suspension`).
    pub suspension_renews_as: Option<PlanType>,
}

const COLUMNS: &str = "id, user_id, plan_type, status, billing_cycle, payment_method, currency, start_date, \
     end_date, pending_plan_type, pending_since, provider_subscription_id, suspension_renews_as";

/// The statement that starts a paid period (dropping any scheduled change), bound and
/// ready to run on a pool or inside a transaction of either backend.
macro_rules! activation_query {
    ($user_id:expr, $a:expr, $now:expr) => {
        sqlx::query(
            "UPDATE subscriptions SET plan_type = $2, status = 'active', billing_cycle = $3, payment_method = $4, \
             currency = $5, start_date = $6, end_date = $7, pending_plan_type = NULL, pending_since = NULL, \
             updated_at = $8 WHERE user_id = $1",
        )
        .bind($user_id)
        .bind($a.plan_type)
        .bind($a.billing_cycle)
        .bind($a.payment_method)
        .bind($a.currency)
        .bind($a.start_date)
        .bind($a.end_date)
        .bind($now)
    };
}
pub(crate) use activation_query;

/// Back on free from `$2` (now), with no end date and nothing scheduled; `$1` the user.
/// Also run inside the transactions of an operator's plan change and of a refund that
/// ends the plan (`db::admin`, `db::refunds`).
pub const SET_FREE: &str =
    "UPDATE subscriptions SET plan_type = 'free', status = 'active', billing_cycle = NULL, \
     payment_method = NULL, currency = NULL, start_date = $2, end_date = NULL, \
     pending_plan_type = NULL, pending_since = NULL, updated_at = $2 WHERE user_id = $1";

/// A paid period that starts now.
pub struct Activation<'a> {
    pub plan_type: PlanType,
    pub billing_cycle: BillingCycle,
    pub payment_method: &'a str,
    pub currency: Currency,
    pub start_date: i64,
    pub end_date: i64,
}

impl Db {
    /// The user's subscription, created on the free plan if the user has none yet. Reads
    /// first: most calls find the row, and an insert would take SQLite's write lock.
    pub async fn subscription(&self, user_id: &str, now: i64) -> sqlx::Result<SubscriptionRow> {
        let select = format!("SELECT {COLUMNS} FROM subscriptions WHERE user_id = $1");
        let found: Option<SubscriptionRow> =
            on_pool!(self, pool => sqlx::query_as(&select).bind(user_id).fetch_optional(pool).await)?;
        if let Some(row) = found {
            return Ok(row);
        }
        let insert =
            "INSERT INTO subscriptions (id, user_id, plan_type, status, start_date, created_at, updated_at) \
                      VALUES ($1, $2, 'free', 'active', $3, $3, $3) ON CONFLICT (user_id) DO NOTHING";
        let id = uuid::Uuid::now_v7().to_string();
        on_pool!(self, pool => {
            sqlx::query(insert).bind(&id).bind(user_id).bind(now).execute(pool).await?;
            sqlx::query_as(&select).bind(user_id).fetch_one(pool).await
        })
    }

    /// Starts a paid period on `plan_type`; any scheduled change is dropped.
    pub async fn activate_subscription(
        &self,
        user_id: &str,
        a: &Activation<'_>,
        now: i64,
    ) -> sqlx::Result<()> {
        self.subscription(user_id, now).await?;
        on_pool!(self, pool => activation_query!(user_id, a, now).execute(pool).await.map(drop))
    }

    /// Puts the user back on free, with no end date and nothing scheduled.
    pub async fn set_free(&self, user_id: &str, now: i64) -> sqlx::Result<()> {
        on_pool!(self, pool => sqlx::query(SET_FREE).bind(user_id).bind(now).execute(pool).await.map(drop))
    }

    /// Schedules (or with `None` removes) a change that activates at the end date. A
    /// renewing plan set to change to free is a cancellation: it is kept for the stats
    /// (`subscription_cancellations`), and taking it back deletes it, in one transaction.
    pub async fn set_pending_plan(
        &self,
        user_id: &str,
        plan: Option<PlanType>,
        now: i64,
    ) -> sqlx::Result<()> {
        let sql = "UPDATE subscriptions SET pending_plan_type = $2, pending_since = CASE WHEN $2 IS NULL THEN NULL ELSE $3 END, \
                   updated_at = $3 WHERE user_id = $1";
        // Read before the update: whether the plan renews, and when a cancellation was set.
        let cancel = "INSERT INTO subscription_cancellations (id, at, user_id, plan_type) \
                      SELECT $2, $3, user_id, plan_type FROM subscriptions WHERE user_id = $1 \
                      AND billing_cycle = 'monthly' AND plan_type <> 'free' \
                      AND (pending_plan_type IS NULL OR pending_plan_type <> 'free')";
        let withdraw = "DELETE FROM subscription_cancellations WHERE user_id = $1 AND at = \
                        (SELECT pending_since FROM subscriptions WHERE user_id = $1 AND pending_plan_type = 'free')";
        let id = uuid::Uuid::now_v7().to_string();
        on_pool!(self, pool => {
            let mut tx = pool.begin().await?;
            if plan == Some(PlanType::Free) {
                sqlx::query(cancel).bind(user_id).bind(&id).bind(now).execute(&mut *tx).await?;
            } else {
                sqlx::query(withdraw).bind(user_id).execute(&mut *tx).await?;
            }
            sqlx::query(sql).bind(user_id).bind(plan).bind(now).execute(&mut *tx).await?;
            tx.commit().await
        })
    }

    /// Subscriptions whose period ended by `now`.
    pub async fn due_subscriptions(&self, now: i64) -> sqlx::Result<Vec<SubscriptionRow>> {
        let sql = format!("SELECT {COLUMNS} FROM subscriptions WHERE end_date IS NOT NULL AND end_date <= $1 ORDER BY end_date");
        on_pool!(self, pool => sqlx::query_as(&sql).bind(now).fetch_all(pool).await)
    }

    /// Claims a due subscription for processing by moving its end date, only if no one
    /// else (another instance's scheduler) did first. True if this caller won.
    pub async fn claim_due(
        &self,
        user_id: &str,
        seen_end: i64,
        new_end: i64,
        now: i64,
    ) -> sqlx::Result<bool> {
        let sql =
            "UPDATE subscriptions SET end_date = $3, updated_at = $4 WHERE user_id = $1 AND end_date = $2";
        let done = on_pool!(self, pool => sqlx::query(sql)
            .bind(user_id)
            .bind(seen_end)
            .bind(new_end)
            .bind(now)
            .execute(pool)
            .await
            .map(|r| r.rows_affected()))?;
        Ok(done == 1)
    }

    /// Switches to `plan_type` for a renewed period (a scheduled downgrade to a paid plan).
    pub async fn switch_plan(&self, user_id: &str, plan_type: PlanType, now: i64) -> sqlx::Result<()> {
        let sql = "UPDATE subscriptions SET plan_type = $2, pending_plan_type = NULL, pending_since = NULL, \
                   billing_cycle = 'monthly', start_date = $3, updated_at = $3 WHERE user_id = $1";
        on_pool!(self, pool => sqlx::query(sql).bind(user_id).bind(plan_type).bind(now).execute(pool).await.map(drop))
    }
}

/// What a suspension, or lifting it, does to the user's subscription row. Decided (and
/// told to the payment provider) by `billing::suspension`, stored with the suspension in
/// its transaction by [`Db::set_suspension`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RenewalHold {
    /// Nothing renews, or the user had already cancelled: the plan is left as it is.
    Untouched,
    /// The suspension stops the renewal: the plan ends at its end date (a cancellation,
    /// as the user's own would be), and what it renewed as is remembered.
    Stopped { renews_as: PlanType },
    /// Lifting the suspension renews the plan again: the scheduled change goes back to
    /// what it was before (`None`: none, the plan renews as itself).
    Resumed { pending: Option<PlanType> },
}

/// The statement of a [`RenewalHold`], bound and ready to run inside a transaction of
/// either backend. Every one forgets a hold that is not made now: a hold lives only as
/// long as its suspension.
macro_rules! renewal_hold_query {
    ($user_id:expr, $hold:expr, $now:expr) => {
        match $hold {
            $crate::db::subscriptions::RenewalHold::Untouched => {
                sqlx::query("UPDATE subscriptions SET suspension_renews_as = NULL WHERE user_id = $1")
                    .bind($user_id)
            }
            $crate::db::subscriptions::RenewalHold::Stopped { renews_as } => sqlx::query(
                "UPDATE subscriptions SET pending_plan_type = 'free', pending_since = $3, \
                 suspension_renews_as = $2, updated_at = $3 WHERE user_id = $1",
            )
            .bind($user_id)
            .bind(renews_as)
            .bind($now),
            $crate::db::subscriptions::RenewalHold::Resumed { pending } => sqlx::query(
                "UPDATE subscriptions SET pending_plan_type = $2, \
                 pending_since = CASE WHEN $2 IS NULL THEN NULL ELSE $3 END, \
                 suspension_renews_as = NULL, updated_at = $3 WHERE user_id = $1",
            )
            .bind($user_id)
            .bind(pending)
            .bind($now),
        }
    };
}
pub(crate) use renewal_hold_query;
