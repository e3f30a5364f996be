//! Stripe webhooks: the only way a Stripe payment grants a plan (besides reading a
//! PaymentIntent back from Stripe). Every event is signature-checked, applied at most
//! once by its id, and each handler is itself idempotent, so repeated, concurrent and
//! out-of-order deliveries change nothing twice. Events that do not concern us are
//! logged and answered 200 so Stripe stops sending them.

use hmac::{Hmac, Mac};
use secrecy::ExposeSecret;
use serde_json::Value;
use sha2::Sha256;

use super::providers::stripe::pays_for;
use super::providers::RenewalChange;
use super::Billing;
use crate::db::payments::PaymentRow;
use crate::db::subscriptions::Activation;
use crate::error::{ErrorCode, Result};
use crate::i18n::Lang;
use crate::mail::Mail;
use crate::metrics;
use crate::plans::{Currency, PlanType};
use chat_contract::states::{BillingCycle, PaymentKind, PaymentStatus};

/// Checks a `Stripe-Signature` header (`t=…,v1=…[,v1=…]`): an HMAC-SHA256 of
/// `"{t}.{payload}"` with the endpoint secret, signed at most `tolerance_secs` from `now_secs`.
pub fn verify_signature(
    payload: &[u8],
    header: &str,
    secret: &[u8],
    now_secs: i64,
    tolerance_secs: i64,
) -> bool {
    let mut timestamp = None;
    let mut signatures = Vec::new();
    for part in header.split(',') {
        match part.trim().split_once('=') {
            Some(("t", t)) => timestamp = t.parse::<i64>().ok(),
            Some(("v1", sig)) => signatures.push(sig),
            _ => {}
        }
    }
    let Some(timestamp) = timestamp else { return false };
    if (now_secs - timestamp).abs() > tolerance_secs {
        return false;
    }
    signatures.into_iter().any(|sig| {
        let Some(expected) = decode_hex(sig) else {
            return false;
        };
        let mut mac = Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes any key length");
        mac.update(timestamp.to_string().as_bytes());
        mac.update(b".");
        mac.update(payload);
        // Constant-time comparison.
        mac.verify_slice(&expected).is_ok()
    })
}

fn decode_hex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

impl Billing {
    /// `POST /api/payments/stripe/webhook`: verifies, then applies the event once; a
    /// server not taking payments through Stripe has no such route (`not_found`).
    pub async fn receive_stripe_event(&self, payload: &[u8], signature: Option<&str>) -> Result<()> {
        if self.payments.name() != "stripe" {
            return Err(ErrorCode::NotFound.into());
        }
        let applied = self.apply_stripe_event(payload, signature).await;
        // `failed`: not applied for a fault of ours (500); Stripe delivers it again.
        let outcome = match &applied {
            Ok(true) => "handled",
            Ok(false) => "ignored",
            Err(e)
                if matches!(
                    e.code(),
                    ErrorCode::WebhookSignatureInvalid | ErrorCode::WebhookInvalid
                ) =>
            {
                "rejected"
            }
            Err(_) => "failed",
        };
        metrics::counter!(metrics::WEBHOOKS, "outcome" => outcome).increment(1);
        applied.map(drop)
    }

    /// Verifies and applies an event; answers whether it was applied now (false: applied
    /// before, or of a type we do not use).
    async fn apply_stripe_event(&self, payload: &[u8], signature: Option<&str>) -> Result<bool> {
        let terms = &self.terms;
        let now_secs = self.now() / 1000;
        let secret = terms.webhook_secret.expose_secret().as_bytes();
        let valid = signature.is_some_and(|header| {
            verify_signature(payload, header, secret, now_secs, terms.webhook_tolerance_secs)
        });
        if !valid {
            tracing::warn!("stripe webhook refused: missing, wrong or stale signature");
            return Err(ErrorCode::WebhookSignatureInvalid.into());
        }
        let event: Value = serde_json::from_slice(payload).map_err(|_| ErrorCode::WebhookInvalid)?;
        let (Some(id), Some(kind)) = (event["id"].as_str(), event["type"].as_str()) else {
            return Err(ErrorCode::WebhookInvalid.into());
        };
        if self.db.stripe_event_seen(id).await? {
            tracing::info!(event = id, kind, "stripe event already applied; ignored");
            return Ok(false);
        }
        let object = &event["data"]["object"];
        let used = self.apply_event(kind, object).await?;
        if !used {
            tracing::debug!(event = id, kind, "stripe event of a type we do not use");
        }
        // Recorded only once applied: a failure answers 500 and Stripe delivers it again.
        self.db.record_stripe_event(id, kind, self.now()).await?;
        Ok(used)
    }

    /// Applies an event of `kind` to what it is about; false if we use no such events.
    async fn apply_event(&self, kind: &str, object: &Value) -> Result<bool> {
        match kind {
            "payment_intent.succeeded" => self.intent_succeeded(object).await?,
            "payment_intent.payment_failed" => self.intent_failed(object).await?,
            // Stripe sends both for a paid invoice (localstripe only the second).
            "invoice.paid" | "invoice.payment_succeeded" => self.invoice_paid(object).await?,
            "invoice.payment_failed" => self.invoice_failed(object).await?,
            "customer.subscription.updated" => self.subscription_updated(object).await?,
            "customer.subscription.deleted" => self.subscription_deleted(object).await?,
            "charge.refunded" => self.charge_refunded(object).await?,
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Our payment a PaymentIntent was made for: the one that stored its id, or, if the
    /// event overtook that, the one named in its metadata that has no PaymentIntent yet.
    async fn payment_of_intent(&self, intent: &Value) -> Result<Option<PaymentRow>> {
        let Some(pi) = intent["id"].as_str() else {
            return Ok(None);
        };
        if let Some(payment) = self.db.payment_by_provider_ref("stripe", pi).await? {
            return Ok(Some(payment));
        }
        let Some(payment_id) = intent["metadata"]["payment_id"].as_str() else {
            return Ok(None);
        };
        let payment = self.db.payment(payment_id).await?.filter(|p| {
            p.provider == "stripe"
                && p.provider_ref.is_none()
                && intent["metadata"]["user_id"].as_str() == p.user_id.as_deref()
        });
        if let Some(payment) = &payment {
            self.db.set_provider_ref(&payment.id, pi).await?;
        }
        Ok(payment)
    }

    async fn intent_succeeded(&self, intent: &Value) -> Result<()> {
        let Some(payment) = self.payment_of_intent(intent).await? else {
            // Invoices' PaymentIntents are handled through their invoice.
            return Ok(());
        };
        if !pays_for(intent, &payment) {
            tracing::error!(payment = %payment.id, "stripe charged an amount or currency that does not match the payment; plan not granted");
            return Ok(());
        }
        self.complete_paid(&payment).await
    }

    /// Grants a paid checkout; one that can no longer be applied (already applied, or the
    /// user holds a higher plan by now) is logged, since money was taken for it.
    pub async fn complete_paid(&self, payment: &PaymentRow) -> Result<()> {
        if payment.status != PaymentStatus::Pending {
            return Ok(());
        }
        match self.complete_payment(&payment.id).await {
            Ok(_) => Ok(()),
            Err(e) if e.code() == ErrorCode::PaymentClosed => {
                tracing::error!(payment = %payment.id, user = ?payment.user_id,
                    "a paid stripe checkout could not be applied (the user holds this plan or a higher one); refund it");
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    async fn intent_failed(&self, intent: &Value) -> Result<()> {
        if let Some(payment) = self
            .payment_of_intent(intent)
            .await?
            .filter(|p| p.status == PaymentStatus::Pending)
        {
            // Closed here, so closed at Stripe too; an error answers 500 and Stripe retries.
            self.payments.abandon(&payment).await?;
            if self
                .db
                .close_payment(&payment.id, PaymentStatus::Failed, self.now())
                .await?
            {
                tracing::info!(payment = %payment.id, "stripe payment failed");
            }
        }
        Ok(())
    }

    /// The checkout (first invoice) of a subscription. An event that overtakes storing the
    /// subscription id finds nothing; the status page's poll (`is_paid`) completes it then.
    async fn checkout_of_subscription(&self, subscription: &str) -> Result<Option<PaymentRow>> {
        Ok(self.db.payment_by_provider_ref("stripe", subscription).await?)
    }

    /// The upgrade (proration invoice) an invoice event is about, found by the invoice id
    /// stored before it was charged.
    async fn upgrade_of_invoice(&self, invoice: &Value) -> Result<Option<PaymentRow>> {
        match invoice["id"].as_str() {
            // Renewals are stored under their invoice id too, once paid.
            Some(id) => Ok(self
                .db
                .payment_by_provider_ref("stripe", id)
                .await?
                .filter(|p| p.kind == PaymentKind::Checkout)),
            None => Ok(None),
        }
    }

    async fn invoice_paid(&self, invoice: &Value) -> Result<()> {
        if let Some(payment) = self.upgrade_of_invoice(invoice).await? {
            if payment.status != PaymentStatus::Pending {
                if payment.status != PaymentStatus::Succeeded {
                    tracing::error!(payment = %payment.id, invoice = ?invoice["id"],
                        "a stripe upgrade invoice taken back was paid; plan not granted; refund it");
                }
                return Ok(());
            }
            if !pays_for(invoice, &payment) {
                tracing::error!(payment = %payment.id, "a stripe upgrade invoice paid an amount or currency that does not match the payment; plan not granted");
                return Ok(());
            }
            return self.complete_paid(&payment).await;
        }
        let Some(subscription) = invoice["subscription"].as_str() else {
            return Ok(());
        };
        if invoice["billing_reason"] == "subscription_update" {
            // Prorations of a change not made through us (e.g. in Stripe's dashboard).
            tracing::warn!(invoice = ?invoice["id"], subscription, "a stripe proration invoice not of ours was paid; ignored");
            return Ok(());
        }
        if let Some(payment) = self.checkout_of_subscription(subscription).await? {
            if payment.status == PaymentStatus::Pending {
                if !pays_for(invoice, &payment) {
                    tracing::error!(payment = %payment.id, "a stripe invoice paid an amount or currency that does not match the payment; plan not granted");
                    return Ok(());
                }
                return self.complete_paid(&payment).await;
            }
            // The first invoice again (its second event, or after the status page's poll
            // applied it): it is the checkout, not a renewal.
            let period_start = invoice["lines"]["data"][0]["period"]["start"]
                .as_i64()
                .map(|s| s * 1000);
            let first = invoice["billing_reason"] == "subscription_create"
                || period_start.is_none_or(|start| payment.completed_at.is_none_or(|done| start <= done));
            if first {
                return Ok(());
            }
        }
        let Some(user_id) = self.db.user_of_provider_subscription(subscription).await? else {
            if self
                .db
                .payment_by_provider_ref("stripe", subscription)
                .await?
                .is_some()
            {
                // A subscription of ours that no longer renews anyone's plan still charged.
                tracing::error!(subscription, invoice = ?invoice["id"], "a replaced stripe subscription was paid; ending it; refund the invoice");
                if let Err(e) = self
                    .payments
                    .change_renewal(subscription, RenewalChange::EndNow)
                    .await
                {
                    tracing::error!(subscription, error = ?e, "could not end a replaced stripe subscription");
                }
            }
            return Ok(());
        };
        self.renewal_paid(&user_id, invoice).await
    }

    /// A renewal invoice was paid: the plan its price stands for runs for the invoice's
    /// period. Keyed by the invoice id, so it is stored once however often it arrives.
    async fn renewal_paid(&self, user_id: &str, invoice: &Value) -> Result<()> {
        let Some(invoice_id) = invoice["id"].as_str() else {
            return Ok(());
        };
        let line = &invoice["lines"]["data"][0];
        let price = line["price"]["id"]
            .as_str()
            .or_else(|| line["plan"]["id"].as_str());
        let known = match price {
            Some(price) => self.db.stripe_price_plan(price).await?,
            None => None,
        };
        let Some((plan_type, currency, amount)) = known else {
            tracing::error!(
                invoice = invoice_id,
                "a paid stripe invoice is not for one of our prices; ignored"
            );
            return Ok(());
        };
        let paid = invoice["amount_paid"].as_i64().unwrap_or(0);
        let paid_currency = invoice["currency"].as_str().unwrap_or_default();
        if paid != amount || !paid_currency.eq_ignore_ascii_case(&currency) {
            tracing::error!(invoice = invoice_id, paid, paid_currency, amount, %currency,
                "a stripe renewal paid an amount or currency that does not match its price; plan not extended");
            return Ok(());
        }
        let now = self.now();
        let sub = self.db.subscription(user_id, now).await?;
        let start = line["period"]["start"].as_i64().map_or(now, |s| s * 1000);
        let end = line["period"]["end"]
            .as_i64()
            .map(|s| s * 1000)
            .filter(|end| *end > start)
            .unwrap_or_else(|| self.period_end(BillingCycle::Monthly, start));
        let (Some(plan), Some(currency)) = (PlanType::parse(&plan_type), Currency::parse(&currency)) else {
            tracing::error!(invoice = invoice_id, plan_type, %currency, "a stripe renewal of an unknown plan or currency; plan not extended");
            return Ok(());
        };
        // The buyer's billing snapshot and VAT treatment as for any payment; the amounts are
        // what Stripe charged (the price fixed when the subscription started).
        let template = self
            .renewal_payment(user_id, plan, currency, Some((start, end)))
            .await?;
        let net = template.net_amount;
        let payment = PaymentRow {
            status: PaymentStatus::Succeeded,
            vat_rate: if net > 0 {
                (amount - net) as f64 / net as f64
            } else {
                0.0
            },
            vat_amount: amount - net,
            total_amount: amount,
            provider: "stripe".to_owned(),
            provider_ref: Some(invoice_id.to_owned()),
            payment_method: sub.payment_method.clone().unwrap_or_else(|| "credit_card".into()),
            completed_at: Some(now),
            ..template
        };
        let activation = Activation {
            plan_type: plan,
            billing_cycle: BillingCycle::Monthly,
            payment_method: &payment.payment_method,
            currency,
            start_date: start,
            end_date: end,
        };
        if self.db.record_paid_renewal(&payment, &activation, now).await? {
            tracing::info!(user = user_id, plan = %plan_type, payment = %payment.id, invoice = invoice_id, "subscription renewed by stripe");
            // The renewal is paid and applied; a failed invoice is retried by the scheduler.
            if let Err(e) = self.issue_invoice(&payment.id).await {
                tracing::error!(payment = %payment.id, error = ?e, "issuing an invoice; the scheduler will retry");
            }
            self.announce.subscription(user_id).await;
        }
        Ok(())
    }

    async fn invoice_failed(&self, invoice: &Value) -> Result<()> {
        if let Some(payment) = self.upgrade_of_invoice(invoice).await? {
            if payment.status == PaymentStatus::Pending {
                // The plan stays; the subscription goes back to its price. An error answers
                // 500 and Stripe delivers the event again.
                self.payments.abandon(&payment).await?;
                if self
                    .db
                    .close_payment(&payment.id, PaymentStatus::Failed, self.now())
                    .await?
                {
                    tracing::info!(payment = %payment.id, "stripe upgrade payment failed; taken back");
                }
            }
            return Ok(());
        }
        let Some(subscription) = invoice["subscription"].as_str() else {
            return Ok(());
        };
        if let Some(payment) = self.checkout_of_subscription(subscription).await? {
            if self
                .db
                .close_payment(&payment.id, PaymentStatus::Failed, self.now())
                .await?
            {
                tracing::info!(payment = %payment.id, "stripe subscription checkout failed");
                return Ok(());
            }
        }
        let Some(user_id) = self.db.user_of_provider_subscription(subscription).await? else {
            return Ok(());
        };
        tracing::warn!(user = %user_id, subscription, "stripe renewal payment failed; stripe retries");
        let Some(user) = self.db.user_by_id(&user_id).await? else {
            return Ok(());
        };
        let sub = self.db.subscription(&user_id, self.now()).await?;
        let lang = user.language;
        let end = sub.end_date.map(crate::quota::iso).unwrap_or_default();
        let mail = renewal_failed_mail(lang, &user.email, &user.name, &end);
        if let Err(e) = self.mailer.send(mail).await {
            tracing::error!(user = %user_id, error = ?e, "could not mail a failed renewal");
        }
        Ok(())
    }

    /// A charge was refunded (in part): each of its refunds not yet recorded (one made in
    /// Stripe's dashboard; ours are recorded under the same `re_…` id) gets its refund
    /// row, credit note and audit row. The charge is ours if its PaymentIntent or its
    /// invoice is a payment's Stripe id, or its invoice is the first of a subscription that is.
    async fn charge_refunded(&self, charge: &Value) -> Result<()> {
        let mut payment = None;
        for reference in [&charge["payment_intent"], &charge["invoice"]] {
            if let (None, Some(id)) = (&payment, reference.as_str()) {
                payment = self.db.payment_by_provider_ref("stripe", id).await?;
            }
        }
        // A monthly checkout is stored under its subscription, whose first invoice it paid.
        if let (None, Some(invoice)) = (&payment, charge["invoice"].as_str()) {
            if let Some(sub) = self.payments.subscription_of_first_invoice(invoice).await? {
                payment = self.db.payment_by_provider_ref("stripe", &sub).await?;
            }
        }
        let Some(payment) = payment else {
            tracing::warn!(charge = ?charge["id"], "a refunded stripe charge of no payment of ours; ignored");
            return Ok(());
        };
        let refunds = charge["refunds"]["data"].as_array().cloned().unwrap_or_default();
        for refund in refunds.iter().filter(|r| r["status"] == "succeeded") {
            if let (Some(id), Some(amount)) = (refund["id"].as_str(), refund["amount"].as_i64()) {
                self.record_provider_refund(&payment, id, amount).await?;
            }
        }
        Ok(())
    }

    /// Keeps a cancellation made in Stripe (e.g. in its dashboard) in step with ours.
    async fn subscription_updated(&self, object: &Value) -> Result<()> {
        let Some(id) = object["id"].as_str() else {
            return Ok(());
        };
        let Some(user_id) = self.db.user_of_provider_subscription(id).await? else {
            return Ok(());
        };
        // Stripe's state now, not the event's snapshot, which may be older than another.
        let cancels = self.payments.cancels_at_period_end(id).await?;
        let now = self.now();
        let sub = self.db.subscription(&user_id, now).await?;
        let pending = sub.pending_plan_type;
        match (cancels, pending) {
            (true, None) => {
                self.db
                    .set_pending_plan(&user_id, Some(PlanType::Free), now)
                    .await?
            }
            (false, Some(PlanType::Free)) => self.db.set_pending_plan(&user_id, None, now).await?,
            _ => return Ok(()),
        }
        self.announce.subscription(&user_id).await;
        Ok(())
    }

    /// Stripe ended the subscription (cancelled at the period end, or renewal retries gave
    /// up): nothing renews the plan any more; it ends at its end date, or now if that passed.
    async fn subscription_deleted(&self, object: &Value) -> Result<()> {
        let Some(id) = object["id"].as_str() else {
            return Ok(());
        };
        let Some(user_id) = self.db.user_of_provider_subscription(id).await? else {
            return Ok(());
        };
        let now = self.now();
        self.db.set_provider_subscription(&user_id, None).await?;
        let sub = self.db.subscription(&user_id, now).await?;
        if sub.end_date.is_some_and(|end| end > now) {
            self.db
                .set_pending_plan(&user_id, Some(PlanType::Free), now)
                .await?;
        } else if sub.plan_type != PlanType::Free {
            self.db.set_free(&user_id, now).await?;
        }
        tracing::info!(user = %user_id, subscription = id, "stripe subscription ended");
        self.announce.subscription(&user_id).await;
        Ok(())
    }
}

fn renewal_failed_mail(lang: Lang, to: &str, name: &str, end: &str) -> Mail {
    let (subject, body) = match lang {
        Lang::EnUs => (
            "Your subscription could not be renewed".to_owned(),
            format!(
                "Hello {name},\n\nWe could not charge your card for the renewal of your subscription. \
                 Stripe will try again in the next days. Until the renewal is paid you are on the free \
                 plan from the end of your current period ({end}).\n\nYou can update your card or choose \
                 a plan again on your subscription page.\n"
            ),
        ),
        Lang::HuHu => (
            "Előfizetését nem sikerült megújítani".to_owned(),
            format!(
                "Kedves {name}!\n\nNem sikerült megterhelni a kártyáját az előfizetés megújításához. \
                 A Stripe a következő napokban újra megpróbálja. Amíg a megújítás nincs kifizetve, \
                 a jelenlegi időszak végétől ({end}) az ingyenes csomagot használja.\n\nKártyáját \
                 frissítheti, vagy újra választhat csomagot az előfizetés oldalán.\n"
            ),
        ),
    };
    Mail {
        to: to.to_owned(),
        subject,
        body,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sign(payload: &[u8], secret: &[u8], t: i64) -> String {
        let mut mac = Hmac::<Sha256>::new_from_slice(secret).unwrap();
        mac.update(format!("{t}.").as_bytes());
        mac.update(payload);
        let sig: String = mac
            .finalize()
            .into_bytes()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        format!("t={t},v1={sig}")
    }

    #[test]
    fn a_signature_counts_only_with_the_right_secret_payload_and_time() {
        let payload = br#"{"id":"evt_1"}"#;
        let header = sign(payload, b"whsec_a", 1_000);
        assert!(verify_signature(payload, &header, b"whsec_a", 1_100, 300));
        assert!(!verify_signature(payload, &header, b"whsec_b", 1_100, 300));
        assert!(!verify_signature(
            br#"{"id":"evt_2"}"#,
            &header,
            b"whsec_a",
            1_100,
            300
        ));
        assert!(!verify_signature(payload, &header, b"whsec_a", 1_301, 300));
        assert!(!verify_signature(payload, "t=1000", b"whsec_a", 1_000, 300));
        assert!(!verify_signature(payload, "v1=zz,t=1000", b"whsec_a", 1_000, 300));
    }
}
