//! Invoices, numbered without gaps per year.

use super::{on_pool, Db};
use chat_contract::states::{BillingCycle, Currency, InvoiceKind, PlanType};
use chat_contract::views::{BillingType, VatTreatment};

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct InvoiceRow {
    pub id: String,
    pub number: String,
    pub year: i64,
    pub sequence: i64,
    pub payment_id: String,
    pub user_id: Option<String>,
    pub issued_at: i64,
    pub seller_name: String,
    pub seller_address: String,
    pub seller_vat_number: String,
    pub seller_country: String,
    pub buyer_type: BillingType,
    pub buyer_name: String,
    pub buyer_company: Option<String>,
    pub buyer_address: String,
    pub buyer_city: String,
    pub buyer_postal_code: String,
    pub buyer_country: String,
    pub buyer_vat_number: Option<String>,
    pub plan_type: PlanType,
    pub plan_name: String,
    pub billing_cycle: BillingCycle,
    pub period_start: i64,
    pub period_end: i64,
    pub currency: Currency,
    pub net_amount: i64,
    pub vat_rate: f64,
    pub vat_amount: i64,
    pub total_amount: i64,
    pub vat_treatment: VatTreatment,
    pub transaction_id: String,
    /// The payment's VIES check ([`crate::billing::vies::Check`] as JSON).
    pub vat_check: Option<String>,
    /// The VAT in HUF of a Hungarian seller's EUR invoice
    /// ([`crate::billing::huf_rate::HufVat`] as JSON).
    pub huf_vat: Option<String>,
    /// A credit note has negative amounts, refers to an invoice and records a refund.
    pub kind: InvoiceKind,
    /// A credit note's invoice (its id).
    pub credit_note_of: Option<String>,
    pub refund_id: Option<String>,
    /// The number of the invoice a credit note refers to (read, never stored).
    #[sqlx(default)]
    pub credit_note_of_number: Option<String>,
}

const COLUMNS: &str = "id, number, year, sequence, payment_id, user_id, issued_at, seller_name, \
     seller_address, seller_vat_number, seller_country, buyer_type, buyer_name, buyer_company, \
     buyer_address, buyer_city, buyer_postal_code, buyer_country, buyer_vat_number, plan_type, \
     plan_name, billing_cycle, period_start, period_end, currency, net_amount, vat_rate, vat_amount, \
     total_amount, vat_treatment, transaction_id, vat_check, huf_vat, kind, credit_note_of, refund_id";

/// What reads an invoice: its columns and the number of the invoice a credit note refers to.
const SELECT: &str = "SELECT id, number, year, sequence, payment_id, user_id, issued_at, seller_name, \
     seller_address, seller_vat_number, seller_country, buyer_type, buyer_name, buyer_company, \
     buyer_address, buyer_city, buyer_postal_code, buyer_country, buyer_vat_number, plan_type, \
     plan_name, billing_cycle, period_start, period_end, currency, net_amount, vat_rate, vat_amount, \
     total_amount, vat_treatment, transaction_id, vat_check, huf_vat, kind, credit_note_of, refund_id, \
     (SELECT o.number FROM invoices o WHERE o.id = invoices.credit_note_of) AS credit_note_of_number \
     FROM invoices";

/// The counter's step: the number the next invoice of `$1` (a year) takes.
pub(crate) const NEXT_SEQUENCE: &str = "INSERT INTO invoice_counters (year, next_sequence) VALUES ($1, 2) \
     ON CONFLICT (year) DO UPDATE SET next_sequence = invoice_counters.next_sequence + 1 \
     RETURNING next_sequence - 1";

pub(crate) fn insert_sql() -> String {
    format!(
        "INSERT INTO invoices ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, \
         $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28, $29, \
         $30, $31, $32, $33, $34, $35, $36)"
    )
}

/// Numbers `$invoice` (a `&mut InvoiceRow`) with the next number of its year and inserts it,
/// both with `$tx`: the counter moves in the insert's transaction, so a failed insert takes
/// its number back. A macro, as the same statements run on both backends' transactions.
macro_rules! insert_numbered_invoice {
    ($tx:expr, $invoice:expr) => {{
        let invoice: &mut $crate::db::invoices::InvoiceRow = $invoice;
        let sequence: i64 = sqlx::query_scalar($crate::db::invoices::NEXT_SEQUENCE)
            .bind(invoice.year)
            .fetch_one(&mut *$tx)
            .await?;
        invoice.sequence = sequence;
        invoice.number = format!("{}-{:06}", invoice.year, sequence);
        let i = &*invoice;
        sqlx::query(&$crate::db::invoices::insert_sql())
            .bind(&i.id)
            .bind(&i.number)
            .bind(i.year)
            .bind(i.sequence)
            .bind(&i.payment_id)
            .bind(&i.user_id)
            .bind(i.issued_at)
            .bind(&i.seller_name)
            .bind(&i.seller_address)
            .bind(&i.seller_vat_number)
            .bind(&i.seller_country)
            .bind(i.buyer_type)
            .bind(&i.buyer_name)
            .bind(&i.buyer_company)
            .bind(&i.buyer_address)
            .bind(&i.buyer_city)
            .bind(&i.buyer_postal_code)
            .bind(&i.buyer_country)
            .bind(&i.buyer_vat_number)
            .bind(i.plan_type)
            .bind(&i.plan_name)
            .bind(i.billing_cycle)
            .bind(i.period_start)
            .bind(i.period_end)
            .bind(i.currency)
            .bind(i.net_amount)
            .bind(i.vat_rate)
            .bind(i.vat_amount)
            .bind(i.total_amount)
            .bind(i.vat_treatment)
            .bind(&i.transaction_id)
            .bind(&i.vat_check)
            .bind(&i.huf_vat)
            .bind(i.kind)
            .bind(&i.credit_note_of)
            .bind(&i.refund_id)
            .execute(&mut *$tx)
            .await
            .map(drop)
    }};
}
pub(crate) use insert_numbered_invoice;

impl Db {
    /// Stores `invoice` under the next number of its year; `number` and `sequence` are
    /// filled in here. The counter moves in the same transaction as the insert, so a
    /// failed insert takes its number back and no two invoices share one. The counter
    /// update is the transaction's first statement: it takes the write lock at once
    /// (Postgres: the year's row; SQLite: the database), so concurrent issuers queue
    /// instead of failing. A second invoice for the same payment is a unique violation.
    pub async fn insert_invoice(&self, invoice: &mut InvoiceRow) -> sqlx::Result<()> {
        on_pool!(self, pool => {
            let mut tx = pool.begin().await?;
            insert_numbered_invoice!(tx, invoice)?;
            tx.commit().await
        })
    }

    pub async fn invoice(&self, id: &str) -> sqlx::Result<Option<InvoiceRow>> {
        let sql = format!("{SELECT} WHERE id = $1");
        on_pool!(self, pool => sqlx::query_as(&sql).bind(id).fetch_optional(pool).await)
    }

    pub async fn invoice_of_payment(&self, payment_id: &str) -> sqlx::Result<Option<InvoiceRow>> {
        let sql = format!("{SELECT} WHERE payment_id = $1 AND kind = 'invoice'");
        on_pool!(self, pool => sqlx::query_as(&sql).bind(payment_id).fetch_optional(pool).await)
    }

    /// The user's invoices and credit notes, newest first (they share one number series).
    pub async fn invoices_of(&self, user_id: &str) -> sqlx::Result<Vec<InvoiceRow>> {
        let sql = format!("{SELECT} WHERE user_id = $1 ORDER BY year DESC, sequence DESC");
        on_pool!(self, pool => sqlx::query_as(&sql).bind(user_id).fetch_all(pool).await)
    }
}
