//! Refunds, each stored in one transaction with its credit note and its audit row.

use super::audit::{append_audit, AuditRecord};
use super::invoices::{insert_numbered_invoice, InvoiceRow};
use super::subscriptions::SET_FREE;
use super::{on_pool, Db};

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct RefundRow {
    pub id: String,
    pub payment_id: String,
    /// Minor units, like the payment's.
    pub amount: i64,
    pub reason: String,
    pub provider: String,
    /// Stripe's `re_…` id; `None` for a demo refund (no money moved).
    pub provider_ref: Option<String>,
    pub idempotency_key: String,
    /// The admin who refunded; `None` for a refund made in Stripe's dashboard.
    pub actor_id: Option<String>,
    pub actor_name: String,
    pub created_at: i64,
    pub credit_note_id: String,
}

const COLUMNS: &str = "id, payment_id, amount, reason, provider, provider_ref, idempotency_key, \
     actor_id, actor_name, created_at, credit_note_id";

/// What storing a refund came to.
#[derive(Debug)]
pub enum Stored {
    Stored,
    /// The payment is no longer `succeeded`.
    NotPossible,
    /// More than what remains: `remaining` (minor units) could still be refunded.
    TooLarge {
        remaining: i64,
    },
}

/// Makes the audit row of a refund from what was refunded before it (minor units) and its
/// numbered credit note: both are known only inside the transaction.
pub type MakeAudit<'a> = Box<dyn FnOnce(i64, &InvoiceRow) -> AuditRecord + Send + 'a>;

/// What a refund's transaction also does besides its own rows.
pub struct RefundEffects<'a> {
    pub audit: MakeAudit<'a>,
    /// Ends this user's plan at once (`endPlan`), at `now`.
    pub end_plan_of: Option<(&'a str, i64)>,
}

impl Db {
    /// Stores `refund`, its credit note (numbered here, in the invoices' series) and its
    /// audit row in one transaction, after checking in it that the payment is still
    /// succeeded and that the refund fits in what remains. The first statement takes the
    /// write lock (Postgres: the payment's row; SQLite: the database), so concurrent
    /// refunds of one payment check the remaining amount one after the other. A second
    /// refund with the same idempotency key or provider id is a unique violation, and the
    /// transaction then leaves nothing behind.
    pub async fn store_refund(
        &self,
        refund: &RefundRow,
        credit_note: &mut InvoiceRow,
        effects: RefundEffects<'_>,
    ) -> sqlx::Result<Stored> {
        let lock = "UPDATE payments SET status = status WHERE id = $1 AND status = 'succeeded'";
        let refunded = "SELECT CAST(COALESCE(SUM(amount), 0) AS BIGINT) FROM refunds WHERE payment_id = $1";
        let total = "SELECT total_amount FROM payments WHERE id = $1";
        let insert =
            format!("INSERT INTO refunds ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)");
        let RefundEffects { audit, end_plan_of } = effects;
        on_pool!(self, pool => {
            let mut tx = pool.begin().await?;
            let locked = sqlx::query(lock).bind(&refund.payment_id).execute(&mut *tx).await?;
            if locked.rows_affected() == 0 {
                return Ok(Stored::NotPossible);
            }
            let before: i64 = sqlx::query_scalar(refunded).bind(&refund.payment_id).fetch_one(&mut *tx).await?;
            let total: i64 = sqlx::query_scalar(total).bind(&refund.payment_id).fetch_one(&mut *tx).await?;
            if refund.amount > total - before {
                return Ok(Stored::TooLarge { remaining: total - before });
            }
            sqlx::query(&insert)
                .bind(&refund.id)
                .bind(&refund.payment_id)
                .bind(refund.amount)
                .bind(&refund.reason)
                .bind(&refund.provider)
                .bind(&refund.provider_ref)
                .bind(&refund.idempotency_key)
                .bind(&refund.actor_id)
                .bind(&refund.actor_name)
                .bind(refund.created_at)
                .bind(&refund.credit_note_id)
                .execute(&mut *tx)
                .await?;
            insert_numbered_invoice!(tx, &mut *credit_note)?;
            if let Some((user_id, now)) = end_plan_of {
                sqlx::query(SET_FREE).bind(user_id).bind(now).execute(&mut *tx).await?;
            }
            append_audit!(&mut *tx, &audit(before, credit_note))?;
            tx.commit().await?;
            Ok(Stored::Stored)
        })
    }

    pub async fn refund_by_key(&self, idempotency_key: &str) -> sqlx::Result<Option<RefundRow>> {
        let sql = format!("SELECT {COLUMNS} FROM refunds WHERE idempotency_key = $1");
        on_pool!(self, pool => sqlx::query_as(&sql).bind(idempotency_key).fetch_optional(pool).await)
    }

    pub async fn refund_by_provider_ref(
        &self,
        provider: &str,
        provider_ref: &str,
    ) -> sqlx::Result<Option<RefundRow>> {
        let sql = format!("SELECT {COLUMNS} FROM refunds WHERE provider = $1 AND provider_ref = $2");
        on_pool!(self, pool => sqlx::query_as(&sql).bind(provider).bind(provider_ref).fetch_optional(pool).await)
    }
}
