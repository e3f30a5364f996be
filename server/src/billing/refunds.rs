//! Refunds (issue 34): an admin gives back part or all of a succeeded payment, or Stripe
//! reports one made in its dashboard (`charge.refunded`, see `stripe_events`). Every
//! refund issues a credit note: a row of `invoices` in the same number series, with the
//! refunded amounts negative, at the VAT rate and treatment of the invoice it refers to.
//! The refund row, the credit note and the audit row are stored in one transaction
//! (`db::refunds`), so none is ever kept without the others.
//!
//! Which payments can be refunded: only `succeeded` ones, and only through the provider
//! that took them while it runs. A Stripe payment is refunded through Stripe's Refunds
//! API. A demo payment moved no money: while the demo provider runs, its refund is only
//! recorded (with its credit note); once the service runs on Stripe it cannot be refunded
//! (`refund_not_possible`), as there is nothing at Stripe to give back.

use std::collections::BTreeMap;

use chat_contract::states::{AuditAction, InvoiceKind, PaymentStatus};
use sha2::{Digest, Sha256};

use super::huf_rate::HufVat;
use super::Billing;
use crate::db::audit::{Actor, AuditRecord};
use crate::db::invoices::InvoiceRow;
use crate::db::payments::PaymentRow;
use crate::db::refunds::{RefundEffects, RefundRow, Stored};
use crate::error::{ApiError, ErrorCode, Result};

/// Two identical refund requests without an `Idempotency-Key` within this window (ms) are
/// one refund: a double click, or a retry after a lost answer.
const SAME_REQUEST_WINDOW_MS: i64 = 60_000;

/// An admin's refund.
pub struct RefundRequest {
    /// Major units, like the payment's; `None`: what remains of the payment.
    pub amount: Option<f64>,
    pub reason: String,
    /// End the user's plan at once (else it runs on to its end date).
    pub end_plan: bool,
    /// The client's `Idempotency-Key` header, if it sent one.
    pub idempotency_key: Option<String>,
}

/// A refund as stored, with its credit note and its payment as they are now.
pub struct Refunded {
    pub refund: RefundRow,
    pub credit_note: InvoiceRow,
    pub payment: PaymentRow,
}

/// What to store of one refund, whoever asked for it.
struct NewRefund<'a> {
    payment: &'a PaymentRow,
    /// The payment's invoice, which the credit note refers to.
    invoice: InvoiceRow,
    amount: i64,
    reason: String,
    provider_ref: Option<String>,
    idempotency_key: String,
    actor: Actor,
    end_plan: bool,
}

impl Billing {
    /// `POST /api/admin/payments/{id}/refund`. A repeated request (same idempotency key)
    /// answers the refund the first one made, and refunds nothing more.
    pub async fn refund_payment(
        &self,
        admin: Actor,
        payment_id: &str,
        request: RefundRequest,
    ) -> Result<Refunded> {
        let reason = crate::domain::admin_reason(Some(&request.reason))?;
        let asked = request.amount.map(minor_units).transpose()?;
        let _one_at_a_time = self.refunding.lock().await;
        let payment = self.db.payment(payment_id).await?.ok_or(ErrorCode::NotFound)?;
        let key = match request.idempotency_key.as_deref().map(str::trim) {
            Some(key) if !key.is_empty() => format!("{}:{key}", payment.id),
            _ => self.same_request_key(&admin, &payment, &request, &reason),
        };
        if let Some(done) = self.db.refund_by_key(&key).await? {
            return self.refunded(done).await;
        }
        self.refundable(&payment)?;
        let remaining = payment.total_amount - payment.refunded_amount;
        let amount = asked.unwrap_or(remaining);
        if amount > remaining || amount <= 0 {
            return Err(ErrorCode::RefundTooLarge.into());
        }
        // The credit note refers to the invoice: make sure there is one.
        let invoice = self.issue_invoice(&payment.id).await?;
        let provider_ref = self.payments.refund(&payment, amount, &key).await.map_err(|e| {
            tracing::error!(payment = %payment.id, error = ?e, "the provider did not refund");
            ApiError::from(ErrorCode::PaymentProviderError)
        })?;
        let new = NewRefund {
            payment: &payment,
            invoice,
            amount,
            reason,
            provider_ref,
            idempotency_key: key,
            actor: admin,
            end_plan: request.end_plan,
        };
        self.store(new).await
    }

    /// A refund made at the provider, not through us (Stripe's dashboard), reported by its
    /// webhook: recorded once by its id, with its credit note and an audit row whose actor
    /// is the provider. One we made ourselves is already recorded under the same id.
    pub(super) async fn record_provider_refund(
        &self,
        payment: &PaymentRow,
        provider_ref: &str,
        amount: i64,
    ) -> Result<()> {
        // After a refund of ours still being stored here, which it then finds.
        let _one_at_a_time = self.refunding.lock().await;
        let provider = payment.provider.as_str();
        if self
            .db
            .refund_by_provider_ref(provider, provider_ref)
            .await?
            .is_some()
        {
            return Ok(());
        }
        if amount <= 0 {
            return Ok(());
        }
        let invoice = self.issue_invoice(&payment.id).await?;
        let new = NewRefund {
            payment,
            invoice,
            amount,
            reason: format!("refunded in the {provider} dashboard"),
            provider_ref: Some(provider_ref.to_owned()),
            idempotency_key: format!("{}:{provider_ref}", payment.id),
            actor: Actor::Provider(self.payments.name()),
            end_plan: false,
        };
        match self.store(new).await {
            Ok(_) => Ok(()),
            Err(e) if matches!(e.code(), ErrorCode::RefundTooLarge | ErrorCode::RefundNotPossible) => {
                // Money was given back at the provider all the same: say so for the books.
                tracing::error!(payment = %payment.id, refund = provider_ref, amount,
                    "a refund made at the provider does not fit the payment here; not recorded");
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    /// A payment the running provider can refund: succeeded, and taken by it.
    fn refundable(&self, payment: &PaymentRow) -> Result<()> {
        if payment.status != PaymentStatus::Succeeded || payment.provider != self.payments.name() {
            return Err(ErrorCode::RefundNotPossible.into());
        }
        Ok(())
    }

    /// The key of a request sent without an `Idempotency-Key`: the same admin, payment,
    /// amount and reason within the same window make the same key.
    fn same_request_key(
        &self,
        admin: &Actor,
        payment: &PaymentRow,
        request: &RefundRequest,
        reason: &str,
    ) -> String {
        let window = self.now() / SAME_REQUEST_WINDOW_MS;
        let amount = request
            .amount
            .map_or_else(|| "rest".to_owned(), |a| format!("{a:.2}"));
        let mut hash = Sha256::new();
        hash.update(format!("{}\n{amount}\n{reason}\n{window}", admin.name()));
        let digest: String = hash
            .finalize()
            .iter()
            .take(12)
            .map(|b| format!("{b:02x}"))
            .collect();
        format!("{}:auto:{digest}", payment.id)
    }

    /// Stores a refund with its credit note and audit row, then tells the user's tabs if
    /// their plan ended. A twin stored meanwhile (same key or same provider id) is the
    /// answer instead.
    async fn store(&self, new: NewRefund<'_>) -> Result<Refunded> {
        let payment = new.payment;
        let invoice = &new.invoice;
        let now = self.now();
        let refund = RefundRow {
            id: uuid::Uuid::now_v7().to_string(),
            payment_id: payment.id.clone(),
            amount: new.amount,
            reason: new.reason,
            provider: payment.provider.clone(),
            provider_ref: new.provider_ref,
            idempotency_key: new.idempotency_key,
            actor_id: new.actor.id().map(str::to_owned),
            actor_name: new.actor.name().to_owned(),
            created_at: now,
            credit_note_id: uuid::Uuid::now_v7().to_string(),
        };
        let mut credit_note = self.credit_note_of(invoice, &refund, now);
        let user_id = payment.user_id.clone();
        let (end_plan_of, plan_before) = match (&user_id, new.end_plan) {
            (Some(user_id), true) => {
                // Read (and so made, if missing) before the transaction ends the plan.
                let sub = self.db.subscription(user_id, now).await?;
                (Some((user_id.as_str(), now)), Some(sub.plan_type))
            }
            _ => (None, None),
        };
        let target = match &user_id {
            Some(id) => self.db.user_by_id(id).await?.map(|u| u.email),
            None => None,
        };
        let (total, amount, actor) = (payment.total_amount, refund.amount, new.actor);
        let target_user_id = user_id.clone();
        let currency = payment.currency;
        let reason = refund.reason.clone();
        let audit = Box::new(move |before: i64, note: &InvoiceRow| {
            let money = |minor: i64| super::invoices::pdf::money(minor, currency.as_str());
            let mut after: BTreeMap<String, String> = [
                ("refundedAmount".to_owned(), money(before + amount)),
                ("amount".to_owned(), money(amount)),
                ("creditNote".to_owned(), note.number.clone()),
                ("totalAmount".to_owned(), money(total)),
            ]
            .into();
            let mut before_fields: BTreeMap<String, String> =
                [("refundedAmount".to_owned(), money(before))].into();
            if let Some(plan) = plan_before {
                before_fields.insert("planType".to_owned(), plan.as_str().to_owned());
                after.insert("planType".to_owned(), "free".to_owned());
            }
            AuditRecord {
                at: now,
                actor,
                action: AuditAction::PaymentRefunded,
                target_user_id,
                target: target.unwrap_or_default(),
                reason,
                before: before_fields,
                after,
            }
        });
        let effects = RefundEffects { audit, end_plan_of };
        let stored = self.db.store_refund(&refund, &mut credit_note, effects).await;
        match stored {
            Ok(Stored::Stored) => {}
            Ok(Stored::NotPossible) => return Err(ErrorCode::RefundNotPossible.into()),
            Ok(Stored::TooLarge { remaining }) => {
                if refund.provider_ref.is_some() {
                    // Only a refund racing another with a different key gets here, and the
                    // provider refuses more than was charged: log it for the books.
                    tracing::error!(payment = %payment.id, remaining, refund = ?refund.provider_ref,
                        "the provider refunded more than remains here; check the payment at the provider");
                }
                return Err(ErrorCode::RefundTooLarge.into());
            }
            Err(sqlx::Error::Database(e)) if e.is_unique_violation() => {
                let twin = match self.db.refund_by_key(&refund.idempotency_key).await? {
                    Some(twin) => Some(twin),
                    None => match &refund.provider_ref {
                        Some(re) => self.db.refund_by_provider_ref(&refund.provider, re).await?,
                        None => None,
                    },
                };
                let twin = twin.ok_or_else(|| anyhow::anyhow!("a refund clashed but is not there"))?;
                return self.refunded(twin).await;
            }
            Err(e) => return Err(e.into()),
        }
        tracing::info!(payment = %payment.id, refund = %refund.id, credit_note = %credit_note.number,
            amount = refund.amount, "payment refunded");
        if let (Some(user_id), true) = (&payment.user_id, new.end_plan) {
            self.end_renewal(user_id).await;
            self.announce.subscription(user_id).await;
        }
        self.refunded(refund).await
    }

    /// The provider no longer renews a plan a refund ended; a failure is only logged
    /// (the plan is already free here, and a later renewal webhook finds no plan to renew).
    async fn end_renewal(&self, user_id: &str) {
        let Ok(sub) = self.db.subscription(user_id, self.now()).await else {
            return;
        };
        let Some(subscription) = sub.provider_subscription_id else {
            return;
        };
        let ended = self
            .payments
            .change_renewal(&subscription, super::providers::RenewalChange::EndNow)
            .await;
        match ended {
            Ok(()) => {
                if let Err(e) = self.db.set_provider_subscription(user_id, None).await {
                    tracing::error!(user = user_id, error = ?e, "forgetting an ended subscription");
                }
            }
            Err(e) => tracing::error!(user = user_id, subscription, error = ?e,
                "could not end the provider's subscription of a refunded plan; end it in its dashboard"),
        }
    }

    async fn refunded(&self, refund: RefundRow) -> Result<Refunded> {
        let credit_note = self
            .db
            .invoice(&refund.credit_note_id)
            .await?
            .ok_or_else(|| anyhow::anyhow!("refund {} has no credit note", refund.id))?;
        let payment = self
            .db
            .payment(&refund.payment_id)
            .await?
            .ok_or_else(|| anyhow::anyhow!("refund {} has no payment", refund.id))?;
        Ok(Refunded {
            refund,
            credit_note,
            payment,
        })
    }

    /// The credit note of `refund`: the invoice's seller, buyer, plan, period and VAT
    /// treatment, the refunded amounts negative. The net and the VAT are split at the
    /// invoice's rate; a full refund gives back exactly the invoice's amounts.
    fn credit_note_of(&self, invoice: &InvoiceRow, refund: &RefundRow, now: i64) -> InvoiceRow {
        let (net, vat) = if refund.amount == invoice.total_amount {
            (invoice.net_amount, invoice.vat_amount)
        } else {
            split_gross(refund.amount, invoice.vat_rate)
        };
        InvoiceRow {
            id: refund.credit_note_id.clone(),
            number: String::new(),
            year: self.issue_year(now),
            sequence: 0,
            issued_at: now,
            net_amount: -net,
            vat_amount: -vat,
            total_amount: -refund.amount,
            transaction_id: refund.provider_ref.clone().unwrap_or_else(|| refund.id.clone()),
            kind: InvoiceKind::CreditNote,
            credit_note_of: Some(invoice.id.clone()),
            refund_id: Some(refund.id.clone()),
            credit_note_of_number: Some(invoice.number.clone()),
            // A correction states its VAT in forints at the rate of the invoice it corrects.
            huf_vat: HufVat::from_json(invoice.huf_vat.as_deref())
                .map(|h| HufVat::at(h.rate, h.rate_date, h.source, -vat).to_json()),
            ..invoice.clone()
        }
    }
}

/// An amount in major units as minor units: positive, with at most two decimals (money is
/// exact; `12.345` is refused rather than rounded).
fn minor_units(major: f64) -> Result<i64> {
    let minor = (major * 100.0).round();
    if !major.is_finite() || minor <= 0.0 || (major * 100.0 - minor).abs() > 1e-6 || minor > 1e15 {
        return Err(ApiError::field(ErrorCode::ValidationError, "amount"));
    }
    Ok(minor as i64)
}

/// A gross amount (minor units, VAT included) split into net and VAT at `rate`: the net is
/// rounded to the minor unit and the VAT is the rest, so the two add up to the gross.
pub fn split_gross(gross: i64, rate: f64) -> (i64, i64) {
    let net = (gross as f64 / (1.0 + rate)).round() as i64;
    (net, gross - net)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gross_amount_splits_into_net_and_vat_that_add_up() {
        assert_eq!(split_gross(1270, 0.27), (1000, 270));
        assert_eq!(split_gross(1000, 0.27), (787, 213));
        assert_eq!(split_gross(500, 0.0), (500, 0));
        assert_eq!(split_gross(1, 0.27), (1, 0));
    }
}
