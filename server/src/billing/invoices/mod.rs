//! Invoices: one for every paid payment, numbered `2026-000123` without gaps per year,
//! with the seller, the buyer as billed, the plan, the period and the VAT copied in.

pub mod pdf;

use anyhow::Context;
use chat_contract::states::{Currency, InvoiceKind, PaymentStatus};
use chrono::{Datelike, TimeZone};
use serde::Deserialize;

use super::huf_rate::HufVat;
use super::Billing;
use crate::db::billing::BillingRow;
use crate::db::invoices::InvoiceRow;
use crate::db::payments::PaymentRow;
use crate::error::Result;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Buyer {
    billing_type: chat_contract::views::BillingType,
    name: String,
    company_name: Option<String>,
    address: String,
    city: String,
    postal_code: String,
    country: String,
    vat_number: Option<String>,
}

impl From<BillingRow> for Buyer {
    fn from(b: BillingRow) -> Buyer {
        Buyer {
            billing_type: b.billing_type,
            name: b.name,
            company_name: b.company_name,
            address: b.address,
            city: b.city,
            postal_code: b.postal_code,
            country: b.country,
            vat_number: b.vat_number,
        }
    }
}

impl Billing {
    /// The invoice of a paid payment, issued now if it has none yet. Safe to call any
    /// number of times, from any instance: a payment has at most one invoice.
    pub async fn issue_invoice(&self, payment_id: &str) -> anyhow::Result<InvoiceRow> {
        if let Some(invoice) = self.db.invoice_of_payment(payment_id).await? {
            return Ok(invoice);
        }
        let payment = self
            .db
            .payment(payment_id)
            .await?
            .with_context(|| format!("payment {payment_id} not found"))?;
        anyhow::ensure!(
            payment.status == PaymentStatus::Succeeded,
            "payment {payment_id} is {}, not paid",
            payment.status
        );
        let buyer = self.buyer_of(&payment).await?;
        let mut invoice = self.invoice_of(&payment, buyer);
        invoice.huf_vat = self
            .huf_vat_of(&invoice, payment.completed_at.unwrap_or(payment.created_at))
            .await;
        match self.db.insert_invoice(&mut invoice).await {
            Ok(()) => {
                tracing::info!(invoice = %invoice.number, payment = %payment.id, "invoice issued");
                Ok(invoice)
            }
            // Issued at the same moment by another caller: theirs is the invoice.
            Err(sqlx::Error::Database(e)) if e.is_unique_violation() => self
                .db
                .invoice_of_payment(payment_id)
                .await?
                .context("an invoice clashed but is not there"),
            Err(e) => Err(e.into()),
        }
    }

    /// The buyer as the payment kept them; for payments made before buyers were kept
    /// on them, the billing info as it is now.
    async fn buyer_of(&self, payment: &PaymentRow) -> anyhow::Result<Buyer> {
        let payment_id = &payment.id;
        Ok(match (&payment.buyer, &payment.user_id) {
            (Some(snapshot), _) => {
                serde_json::from_str(snapshot).context("reading the buyer of a payment")?
            }
            (None, Some(user_id)) => self
                .db
                .billing_info(user_id)
                .await?
                .map(Buyer::from)
                .with_context(|| format!("payment {payment_id} has no buyer"))?,
            (None, None) => anyhow::bail!("payment {payment_id} has no buyer"),
        })
    }

    /// The invoice of `payment` to `buyer`, issued now, not yet numbered.
    fn invoice_of(&self, payment: &PaymentRow, buyer: Buyer) -> InvoiceRow {
        let paid_at = payment.completed_at.unwrap_or(payment.created_at);
        // A checkout's period starts when it is paid, exactly as the plan was activated.
        let (period_start, period_end) = match (payment.period_start, payment.period_end) {
            (Some(start), Some(end)) => (start, end),
            _ => (paid_at, self.period_end(payment.billing_cycle, paid_at)),
        };
        let now = self.now();
        let seller = &self.terms.seller;
        InvoiceRow {
            id: uuid::Uuid::now_v7().to_string(),
            number: String::new(),
            year: self.issue_year(now),
            sequence: 0,
            payment_id: payment.id.clone(),
            user_id: payment.user_id.clone(),
            issued_at: now,
            seller_name: seller.name.clone(),
            seller_address: seller.address.clone(),
            seller_vat_number: seller.vat_number.clone(),
            seller_country: seller.country.clone(),
            buyer_type: buyer.billing_type,
            buyer_name: buyer.name,
            buyer_company: buyer.company_name,
            buyer_address: buyer.address,
            buyer_city: buyer.city,
            buyer_postal_code: buyer.postal_code,
            buyer_country: buyer.country,
            buyer_vat_number: buyer.vat_number,
            plan_type: payment.plan_type,
            plan_name: self.catalogue.plan(payment.plan_type).name.clone(),
            billing_cycle: payment.billing_cycle,
            period_start,
            period_end,
            currency: payment.currency,
            net_amount: payment.net_amount,
            vat_rate: payment.vat_rate,
            vat_amount: payment.vat_amount,
            total_amount: payment.total_amount,
            vat_treatment: payment.vat_treatment,
            transaction_id: payment.provider_ref.clone().unwrap_or_else(|| payment.id.clone()),
            vat_check: payment.vat_check.clone(),
            huf_vat: None,
            kind: InvoiceKind::Invoice,
            credit_note_of: None,
            refund_id: None,
            credit_note_of_number: None,
        }
    }

    /// The VAT in HUF a Hungarian seller's EUR invoice must state (JSON), at the rate of
    /// the supply's day (`paid_at`, in the catalogue's timezone); `None` for any other.
    async fn huf_vat_of(&self, invoice: &InvoiceRow, paid_at: i64) -> Option<String> {
        if invoice.seller_country != "HU" || invoice.currency != Currency::Eur || invoice.vat_amount == 0 {
            return None;
        }
        let day = self
            .catalogue
            .timezone
            .timestamp_millis_opt(paid_at)
            .single()?
            .date_naive();
        let (rate, rate_date, source) = self.huf_rates.rate_for(day).await?;
        Some(HufVat::at(rate, rate_date, source, invoice.vat_amount).to_json())
    }

    /// The year of an invoice issued at `ms`, in the catalogue's timezone.
    pub(super) fn issue_year(&self, ms: i64) -> i64 {
        self.catalogue
            .timezone
            .timestamp_millis_opt(ms)
            .single()
            .map_or(1970, |t| i64::from(t.year()))
    }

    /// Issues the invoices that a crash between a payment and its invoice left out.
    pub async fn issue_missing_invoices(&self) -> anyhow::Result<usize> {
        let mut issued = 0;
        for payment_id in self.db.payments_without_invoice(100).await? {
            match self.issue_invoice(&payment_id).await {
                Ok(_) => issued += 1,
                Err(e) => tracing::error!(payment = %payment_id, error = ?e, "issuing a missing invoice"),
            }
        }
        Ok(issued)
    }

    /// The user's invoices, newest first as stored.
    pub async fn invoices_of(&self, user_id: &str) -> Result<Vec<InvoiceRow>> {
        Ok(self.db.invoices_of(user_id).await?)
    }

    /// Any invoice or credit note, whoever's (the operator console's).
    pub async fn invoice(&self, id: &str) -> Result<Option<InvoiceRow>> {
        Ok(self.db.invoice(id).await?)
    }

    /// One of `user_id`'s invoices; another user's is `None`, as if it did not exist.
    pub async fn invoice_of_user(&self, user_id: &str, id: &str) -> Result<Option<InvoiceRow>> {
        Ok(self
            .db
            .invoice(id)
            .await?
            .filter(|i| i.user_id.as_deref() == Some(user_id)))
    }

    /// `invoice` as a PDF, in the catalogue's timezone and with its VAT notes.
    pub fn invoice_pdf(&self, invoice: &InvoiceRow) -> anyhow::Result<Vec<u8>> {
        pdf::render(invoice, self.catalogue.timezone, &self.catalogue.vat)
    }
}
