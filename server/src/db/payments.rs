//! Payments: checkouts and renewals, the invoices of the user.

use super::subscriptions::{activation_query, Activation};
use super::{on_pool, Db};
use crate::metrics;
use chat_contract::states::{BillingCycle, Currency, PaymentKind, PaymentStatus, PlanType};
use chat_contract::views::VatTreatment;

/// Counts a payment that succeeded or failed, in `chat_payments_total`. Called where that
/// outcome is stored, which happens once per payment (the updates require `pending`).
pub(crate) fn count_payment(status: PaymentStatus) {
    let outcome = match status {
        PaymentStatus::Succeeded => "succeeded",
        PaymentStatus::Failed => "failed",
        _ => return,
    };
    metrics::counter!(metrics::PAYMENTS, "outcome" => outcome).increment(1);
}

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct PaymentRow {
    pub id: String,
    /// `None` once the account is deleted: payments are kept (docs/payments.md).
    pub user_id: Option<String>,
    pub plan_type: PlanType,
    pub billing_cycle: BillingCycle,
    pub kind: PaymentKind,
    pub status: PaymentStatus,
    pub currency: Currency,
    pub net_amount: i64,
    pub vat_rate: f64,
    pub vat_amount: i64,
    pub total_amount: i64,
    pub provider: String,
    pub provider_ref: Option<String>,
    pub payment_method: String,
    pub idempotency_key: Option<String>,
    pub created_at: i64,
    pub completed_at: Option<i64>,
    /// The billing info the VAT was computed for (JSON), printed on the invoice.
    pub buyer: Option<String>,
    /// [`crate::billing::vat::Treatment`] as stored.
    pub vat_treatment: VatTreatment,
    /// The period a renewal pays for; a checkout's starts when it is paid.
    pub period_start: Option<i64>,
    pub period_end: Option<i64>,
    /// The VIES check the VAT treatment rested on ([`crate::billing::vies::Check`] as JSON).
    pub vat_check: Option<String>,
    /// What refunds gave back of `total_amount` so far (read from `refunds`, never stored).
    #[sqlx(default)]
    pub refunded_amount: i64,
}

pub(crate) const COLUMNS: &str = "id, user_id, plan_type, billing_cycle, kind, status, currency, net_amount, vat_rate, \
     vat_amount, total_amount, provider, provider_ref, payment_method, idempotency_key, created_at, completed_at, \
     buyer, vat_treatment, period_start, period_end, vat_check";

/// What reads a payment: its columns and the sum of its refunds.
pub(crate) const SELECT: &str = "SELECT id, user_id, plan_type, billing_cycle, kind, status, currency, net_amount, \
     vat_rate, vat_amount, total_amount, provider, provider_ref, payment_method, idempotency_key, created_at, \
     completed_at, buyer, vat_treatment, period_start, period_end, vat_check, \
     (SELECT CAST(COALESCE(SUM(r.amount), 0) AS BIGINT) FROM refunds r WHERE r.payment_id = payments.id) \
     AS refunded_amount FROM payments";

/// The INSERT of a whole payment row, `suffix` appended (e.g. an ON CONFLICT clause).
pub(crate) fn insert_sql(suffix: &str) -> String {
    format!(
        "INSERT INTO payments ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, \
         $14, $15, $16, $17, $18, $19, $20, $21, $22) {suffix}"
    )
}

/// [`insert_sql`] with every column of `$p` bound, on whichever backend runs it.
macro_rules! insert_payment_query {
    ($sql:expr, $p:expr) => {
        sqlx::query($sql)
            .bind(&$p.id)
            .bind(&$p.user_id)
            .bind(&$p.plan_type)
            .bind(&$p.billing_cycle)
            .bind(&$p.kind)
            .bind(&$p.status)
            .bind(&$p.currency)
            .bind($p.net_amount)
            .bind($p.vat_rate)
            .bind($p.vat_amount)
            .bind($p.total_amount)
            .bind(&$p.provider)
            .bind(&$p.provider_ref)
            .bind(&$p.payment_method)
            .bind(&$p.idempotency_key)
            .bind($p.created_at)
            .bind($p.completed_at)
            .bind(&$p.buyer)
            .bind(&$p.vat_treatment)
            .bind($p.period_start)
            .bind($p.period_end)
            .bind(&$p.vat_check)
    };
}
pub(crate) use insert_payment_query;

impl Db {
    pub async fn insert_payment(&self, p: &PaymentRow) -> sqlx::Result<()> {
        let sql = insert_sql("");
        on_pool!(self, pool => insert_payment_query!(&sql, p).execute(pool).await.map(drop))
    }

    pub async fn payment(&self, id: &str) -> sqlx::Result<Option<PaymentRow>> {
        let sql = format!("{SELECT} WHERE id = $1");
        on_pool!(self, pool => sqlx::query_as(&sql).bind(id).fetch_optional(pool).await)
    }

    pub async fn payment_by_idempotency_key(
        &self,
        user_id: &str,
        key: &str,
    ) -> sqlx::Result<Option<PaymentRow>> {
        let sql = format!("{SELECT} WHERE user_id = $1 AND idempotency_key = $2");
        on_pool!(self, pool => sqlx::query_as(&sql).bind(user_id).bind(key).fetch_optional(pool).await)
    }

    pub async fn payments_of(&self, user_id: &str) -> sqlx::Result<Vec<PaymentRow>> {
        let sql = format!("{SELECT} WHERE user_id = $1 ORDER BY created_at DESC, id DESC");
        on_pool!(self, pool => sqlx::query_as(&sql).bind(user_id).fetch_all(pool).await)
    }

    /// Paid payments that have no invoice yet (a crash between the two steps), oldest
    /// first.
    pub async fn payments_without_invoice(&self, limit: i64) -> sqlx::Result<Vec<String>> {
        let sql = "SELECT p.id FROM payments p WHERE p.status = 'succeeded' \
                   AND NOT EXISTS (SELECT 1 FROM invoices i WHERE i.payment_id = p.id) \
                   ORDER BY p.completed_at, p.id LIMIT $1";
        on_pool!(self, pool => sqlx::query_scalar(sql).bind(limit).fetch_all(pool).await)
    }

    pub async fn set_provider_ref(&self, id: &str, provider_ref: &str) -> sqlx::Result<()> {
        let sql = "UPDATE payments SET provider_ref = $2 WHERE id = $1";
        on_pool!(self, pool => sqlx::query(sql).bind(id).bind(provider_ref).execute(pool).await.map(drop))
    }

    /// Closes a pending payment with `status`; false if it was not pending (already
    /// closed), so a payment is applied at most once.
    pub async fn close_payment(&self, id: &str, status: PaymentStatus, now: i64) -> sqlx::Result<bool> {
        let sql = "UPDATE payments SET status = $2, completed_at = $3 WHERE id = $1 AND status = 'pending'";
        let done = on_pool!(self, pool => sqlx::query(sql)
            .bind(id)
            .bind(status)
            .bind(now)
            .execute(pool)
            .await
            .map(|r| r.rows_affected()))?;
        if done == 1 {
            count_payment(status);
        }
        Ok(done == 1)
    }

    /// Closes a paid checkout and starts its plan in one transaction; the user's other
    /// open checkouts are cancelled. `renewed_by` is the provider's subscription that
    /// renews the new plan, if any. False if the payment was no longer pending.
    pub async fn complete_checkout(
        &self,
        payment: &PaymentRow,
        a: &Activation<'_>,
        renewed_by: Option<&str>,
        now: i64,
    ) -> sqlx::Result<bool> {
        let Some(user_id) = payment.user_id.as_deref() else {
            return Ok(false);
        };
        self.subscription(user_id, now).await?;
        let close = "UPDATE payments SET status = 'succeeded', completed_at = $2 WHERE id = $1 AND status = 'pending'";
        let others = "UPDATE payments SET status = 'canceled', completed_at = $2 \
                      WHERE user_id = $1 AND status = 'pending' AND kind = 'checkout'";
        let renewal = "UPDATE subscriptions SET provider_subscription_id = $2 WHERE user_id = $1";
        on_pool!(self, pool => {
            let mut tx = pool.begin().await?;
            let closed = sqlx::query(close).bind(&payment.id).bind(now).execute(&mut *tx).await?.rows_affected();
            if closed != 1 {
                return Ok(false);
            }
            activation_query!(user_id, a, now).execute(&mut *tx).await?;
            sqlx::query(renewal).bind(user_id).bind(renewed_by).execute(&mut *tx).await?;
            sqlx::query(others).bind(user_id).bind(now).execute(&mut *tx).await?;
            tx.commit().await?;
            count_payment(PaymentStatus::Succeeded);
            Ok(true)
        })
    }
}
