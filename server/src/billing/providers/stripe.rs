//! Stripe: one-time plans are a PaymentIntent the web client confirms with Stripe.js;
//! monthly plans are a Stripe Subscription on a recurring price per plan, currency and
//! amount, renewed by Stripe. Nothing here grants a plan: only a verified webhook (or the
//! PaymentIntent read back from Stripe) does, in `stripe_events` and `subscriptions`.
//!
//! The API is spoken directly (form posts, JSON answers read field by field) rather than
//! through typed bindings: the typed models require fields the test fake (localstripe)
//! leaves out, and only a handful of calls are needed. The API version is pinned so
//! Stripe's answers keep the fields read here.

use std::time::Duration;

use anyhow::{bail, Context};
use futures_util::future::BoxFuture;
use secrecy::{ExposeSecret, SecretString};
use serde_json::Value;

use super::{Checkout, PaymentProvider, RenewalChange};
use crate::config::BillingSettings;
use crate::db::payments::PaymentRow;
use crate::db::Db;
use crate::plans::{vat_of, Catalogue, Currency, PlanType};
use chat_contract::states::{BillingCycle, PaymentStatus};
use chat_contract::views::PaymentConfig;

/// The Stripe API version whose object shapes this code reads.
const API_VERSION: &str = "2022-11-15";

/// A thin Stripe API client; cheap to clone into the futures the provider returns.
#[derive(Clone)]
pub struct StripeApi {
    http: reqwest::Client,
    base: String,
    key: SecretString,
}

/// A Stripe error answer, kept apart so callers can tell "declined" from "down".
#[derive(Debug, thiserror::Error)]
#[error("Stripe answered {status}: {message}")]
pub struct StripeError {
    pub status: u16,
    pub message: String,
}

impl StripeApi {
    pub fn new(base: &str, key: SecretString) -> anyhow::Result<StripeApi> {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .build()
            .context("building the Stripe HTTP client")?;
        Ok(StripeApi {
            http,
            base: base.trim_end_matches('/').to_owned(),
            key,
        })
    }

    /// POSTs form fields; `idempotency_key` makes Stripe answer a retried call with the
    /// first call's result instead of doing it twice.
    pub async fn post(
        &self,
        path: &str,
        form: &[(&str, String)],
        idempotency_key: Option<&str>,
    ) -> anyhow::Result<Value> {
        let mut request = self.http.post(format!("{}{path}", self.base)).form(form);
        if let Some(key) = idempotency_key {
            request = request.header("Idempotency-Key", key);
        }
        self.send(request).await
    }

    pub async fn get(&self, path: &str) -> anyhow::Result<Value> {
        self.send(self.http.get(format!("{}{path}", self.base))).await
    }

    pub async fn delete(&self, path: &str) -> anyhow::Result<Value> {
        self.send(self.http.delete(format!("{}{path}", self.base))).await
    }

    async fn send(&self, request: reqwest::RequestBuilder) -> anyhow::Result<Value> {
        let response = request
            .header("Authorization", format!("Bearer {}", self.key.expose_secret()))
            .header("Stripe-Version", API_VERSION)
            .send()
            .await
            .context("calling Stripe")?;
        let status = response.status().as_u16();
        let body: Value = response.json().await.context("reading Stripe's answer")?;
        if status >= 400 {
            let message = body["error"]["message"]
                .as_str()
                .unwrap_or("no message")
                .to_owned();
            return Err(StripeError { status, message }.into());
        }
        Ok(body)
    }
}

pub struct StripeProvider {
    api: StripeApi,
    db: Db,
    publishable_key: String,
    js_url: String,
}

impl StripeProvider {
    pub fn new(settings: &BillingSettings, db: Db) -> anyhow::Result<StripeProvider> {
        Ok(StripeProvider {
            api: StripeApi::new(&settings.stripe_api_base, settings.stripe_secret_key.clone())?,
            db,
            publishable_key: settings.stripe_publishable_key.trim().to_owned(),
            js_url: settings.stripe_js_url.clone(),
        })
    }

    pub fn api(&self) -> &StripeApi {
        &self.api
    }

    /// Makes sure every paid plan has its monthly price in both currencies at the
    /// seller's domestic VAT (what most buyers pay), so the first checkout does not wait
    /// for it; prices at other buyers' rates are made at their first checkout. A failure is only
    /// logged: the price is made on demand then.
    pub async fn prepare_prices(&self, catalogue: &Catalogue, vat_rate: f64) {
        for plan in PlanType::ALL.iter().copied().filter(|p| *p != PlanType::Free) {
            for currency in [Currency::Eur, Currency::Huf] {
                let net = catalogue.plan(plan).net_price_minor(currency);
                let (_, total) = vat_of(net, vat_rate);
                if let Err(e) = price_id(&self.api, &self.db, plan.as_str(), currency.as_str(), total).await {
                    tracing::warn!(plan = plan.as_str(), currency = currency.as_str(), error = ?e,
                        "could not prepare a Stripe price; it is made at the first checkout instead");
                }
            }
        }
    }
}

impl PaymentProvider for StripeProvider {
    fn name(&self) -> &'static str {
        "stripe"
    }

    fn start_checkout(&self, payment: &PaymentRow) -> BoxFuture<'static, anyhow::Result<Checkout>> {
        let (api, db, payment) = (self.api.clone(), self.db.clone(), payment.clone());
        Box::pin(async move {
            if let Some(existing) = &payment.provider_ref {
                return resume_checkout(&api, existing).await;
            }
            let user_id = payment
                .user_id
                .as_deref()
                .context("a checkout of a deleted account")?;
            let customer = customer_id(&api, &db, user_id).await?;
            if payment.billing_cycle == BillingCycle::Monthly {
                // A monthly plan Stripe renews already is moved to the new price; a second
                // subscription would charge the rest of this month twice.
                match renewing_subscription(&db, user_id).await? {
                    Some(sub) => start_upgrade(&api, &db, &payment, &sub).await,
                    None => start_subscription(&api, &db, &payment, &customer).await,
                }
            } else {
                start_payment_intent(&api, &payment, &customer).await
            }
        })
    }

    fn renews_itself(&self) -> bool {
        true
    }

    fn charge_renewal(&self, payment: &PaymentRow) -> BoxFuture<'static, anyhow::Result<bool>> {
        let id = payment.id.clone();
        Box::pin(
            async move { bail!("Stripe renews subscriptions itself; renewal {id} was not charged here") },
        )
    }

    fn change_renewal(
        &self,
        subscription_ref: &str,
        change: RenewalChange<'_>,
    ) -> BoxFuture<'static, anyhow::Result<()>> {
        let (api, db) = (self.api.clone(), self.db.clone());
        let path = format!("/v1/subscriptions/{subscription_ref}");
        let change = match change {
            RenewalChange::CancelAtPeriodEnd(cancel) => Change::Cancel(cancel),
            RenewalChange::RenewAs {
                plan_type,
                currency,
                amount,
            } => Change::Price(plan_type.to_owned(), currency.to_owned(), amount),
            RenewalChange::EndNow => Change::End,
        };
        Box::pin(async move {
            match change {
                Change::Cancel(cancel) => {
                    api.post(&path, &[("cancel_at_period_end", cancel.to_string())], None)
                        .await?;
                }
                Change::End => {
                    if let Err(e) = api.delete(&path).await {
                        // Already ended (by Stripe, or a retry of ours): nothing to stop.
                        match e.downcast_ref::<StripeError>() {
                            Some(StripeError { status: 404, .. }) => {}
                            _ => return Err(e),
                        }
                    }
                }
                Change::Price(plan_type, currency, amount) => {
                    let sub = api.get(&path).await?;
                    let item = sub["items"]["data"][0]["id"]
                        .as_str()
                        .context("the subscription has no item")?
                        .to_owned();
                    let price = price_id(&api, &db, &plan_type, &currency, amount).await?;
                    let form = [
                        ("items[0][id]", item),
                        ("items[0][plan]", price),
                        // What was paid for this period stays paid for; the new price
                        // is charged from the next renewal on.
                        ("proration_behavior", "none".to_owned()),
                    ];
                    api.post(&path, &form, None).await?;
                }
            }
            Ok(())
        })
    }

    fn cancels_at_period_end(&self, subscription_ref: &str) -> BoxFuture<'static, anyhow::Result<bool>> {
        let (api, path) = (self.api.clone(), format!("/v1/subscriptions/{subscription_ref}"));
        Box::pin(async move { Ok(api.get(&path).await?["cancel_at_period_end"] == true) })
    }

    fn abandon(&self, payment: &PaymentRow) -> BoxFuture<'static, anyhow::Result<()>> {
        let (api, payment) = (self.api.clone(), payment.clone());
        Box::pin(async move {
            if let Some(invoice) = payment.provider_ref.as_deref().filter(|r| is_upgrade_invoice(r)) {
                return undo_upgrade(&api, invoice).await;
            }
            let Some(pi) = payment.provider_ref.as_deref().filter(|r| r.starts_with("pi_")) else {
                // A subscription's unpaid first invoice: Stripe expires it by itself.
                return Ok(());
            };
            match api
                .post(&format!("/v1/payment_intents/{pi}/cancel"), &[], None)
                .await
            {
                Ok(_) => Ok(()),
                Err(e) => match e.downcast_ref::<StripeError>() {
                    // Already cancelled, or paid after all (its own webhook reports that).
                    Some(StripeError {
                        status: 400..=499, ..
                    }) => {
                        tracing::warn!(payment = %payment.id, error = %e, "stripe did not cancel a failed PaymentIntent");
                        Ok(())
                    }
                    _ => Err(e),
                },
            }
        })
    }

    fn is_paid(&self, payment: &PaymentRow) -> BoxFuture<'static, anyhow::Result<bool>> {
        let (api, payment) = (self.api.clone(), payment.clone());
        Box::pin(async move {
            match payment.provider_ref.as_deref() {
                Some(invoice) if is_upgrade_invoice(invoice) => {
                    let invoice = api.get(&format!("/v1/invoices/{invoice}")).await?;
                    Ok(invoice["status"] == "paid" && pays_for(&invoice, &payment))
                }
                Some(sub) if sub.starts_with("sub_") => {
                    let path = format!("/v1/subscriptions/{sub}?expand[0]=latest_invoice");
                    let invoice = &api.get(&path).await?["latest_invoice"];
                    Ok(invoice["status"] == "paid" && pays_for(invoice, &payment))
                }
                Some(pi) => {
                    let intent = api.get(&format!("/v1/payment_intents/{pi}")).await?;
                    Ok(intent["status"] == "succeeded" && pays_for(&intent, &payment))
                }
                None => Ok(false),
            }
        })
    }

    fn refund(
        &self,
        payment: &PaymentRow,
        amount: i64,
        idempotency_key: &str,
    ) -> BoxFuture<'static, anyhow::Result<Option<String>>> {
        let (api, payment) = (self.api.clone(), payment.clone());
        let key = format!("refund-{idempotency_key}");
        Box::pin(async move {
            let intent = charged_intent(&api, &payment).await?;
            let form = [
                ("payment_intent", intent),
                ("amount", amount.to_string()),
                ("metadata[payment_id]", payment.id.clone()),
            ];
            let refund = api.post("/v1/refunds", &form, Some(&key)).await?;
            Ok(Some(str_field(&refund, "id")?))
        })
    }

    fn subscription_of_first_invoice(
        &self,
        invoice: &str,
    ) -> BoxFuture<'static, anyhow::Result<Option<String>>> {
        let (api, path) = (self.api.clone(), format!("/v1/invoices/{invoice}"));
        Box::pin(async move {
            let invoice = api.get(&path).await?;
            let Some(sub) = invoice["subscription"].as_str() else {
                return Ok(None);
            };
            // The first is the oldest (Stripe lists newest first), as in `charged_intent`.
            let list = api
                .get(&format!("/v1/invoices?subscription={sub}&limit=100"))
                .await?;
            let first = list["data"].as_array().and_then(|all| all.last());
            let is_first = first.is_some_and(|first| first["id"] == invoice["id"]);
            Ok(is_first.then(|| sub.to_owned()))
        })
    }

    fn changes_plan_in_place(&self, payment: &PaymentRow) -> bool {
        payment.provider_ref.as_deref().is_some_and(is_upgrade_invoice)
    }

    fn client_config(&self) -> PaymentConfig {
        PaymentConfig {
            provider: "stripe".into(),
            publishable_key: Some(self.publishable_key.clone()),
            js_url: Some(self.js_url.clone()),
        }
    }
}

enum Change {
    Cancel(bool),
    Price(String, String, i64),
    End,
}

/// Whether a PaymentIntent (or paid invoice) charged exactly `payment`'s total in its
/// currency, for this payment.
pub fn pays_for(object: &Value, payment: &PaymentRow) -> bool {
    let amount = object["amount_received"]
        .as_i64()
        .or_else(|| object["amount_paid"].as_i64())
        .or_else(|| object["amount"].as_i64());
    let currency = object["currency"].as_str().unwrap_or_default();
    amount == Some(payment.total_amount) && currency.eq_ignore_ascii_case(payment.currency.as_str())
}

/// The user's Stripe Customer, made on their first checkout.
async fn customer_id(api: &StripeApi, db: &Db, user_id: &str) -> anyhow::Result<String> {
    if let Some(id) = db.stripe_customer(user_id).await? {
        return Ok(id);
    }
    let form = [("metadata[user_id]", user_id.to_owned())];
    let customer = api
        .post("/v1/customers", &form, Some(&format!("customer-{user_id}")))
        .await?;
    let id = str_field(&customer, "id")?;
    // Two first checkouts at once: the first stored wins; Stripe's idempotency key gave
    // both the same customer anyway.
    db.insert_stripe_customer(user_id, &id).await?;
    Ok(db.stripe_customer(user_id).await?.unwrap_or(id))
}

/// The recurring monthly price for `amount` (minor units, VAT included), made once in
/// Stripe under a fixed id and remembered.
pub async fn price_id(
    api: &StripeApi,
    db: &Db,
    plan_type: &str,
    currency: &str,
    amount: i64,
) -> anyhow::Result<String> {
    if let Some(id) = db.stripe_price(plan_type, currency, amount).await? {
        return Ok(id);
    }
    let id = format!(
        "chat-{plan_type}-monthly-{}-{amount}",
        currency.to_ascii_lowercase()
    );
    match api.get(&format!("/v1/plans/{id}")).await {
        Ok(_) => {}
        Err(e)
            if matches!(
                e.downcast_ref::<StripeError>(),
                Some(StripeError { status: 404, .. })
            ) =>
        {
            let form = [
                ("id", id.clone()),
                ("amount", amount.to_string()),
                ("currency", currency.to_ascii_lowercase()),
                ("interval", "month".to_owned()),
                ("product[name]", format!("AI Chat {plan_type}")),
                ("metadata[plan_type]", plan_type.to_owned()),
            ];
            api.post("/v1/plans", &form, Some(&format!("price-{id}"))).await?;
        }
        Err(e) => return Err(e),
    }
    db.insert_stripe_price(plan_type, currency, amount, &id).await?;
    Ok(id)
}

async fn start_payment_intent(
    api: &StripeApi,
    payment: &PaymentRow,
    customer: &str,
) -> anyhow::Result<Checkout> {
    let form = [
        ("amount", payment.total_amount.to_string()),
        ("currency", payment.currency.as_str().to_ascii_lowercase()),
        ("customer", customer.to_owned()),
        ("payment_method_types[0]", "card".to_owned()),
        ("metadata[payment_id]", payment.id.clone()),
        ("metadata[user_id]", payment.user_id.clone().unwrap_or_default()),
        ("metadata[plan_type]", payment.plan_type.as_str().to_owned()),
    ];
    let intent = api
        .post("/v1/payment_intents", &form, Some(&format!("pi-{}", payment.id)))
        .await?;
    Ok(Checkout {
        url: None,
        client_secret: Some(str_field(&intent, "client_secret")?),
        provider_ref: Some(str_field(&intent, "id")?),
    })
}

async fn start_subscription(
    api: &StripeApi,
    db: &Db,
    payment: &PaymentRow,
    customer: &str,
) -> anyhow::Result<Checkout> {
    let price = price_id(
        api,
        db,
        payment.plan_type.as_str(),
        payment.currency.as_str(),
        payment.total_amount,
    )
    .await?;
    let form = [
        ("customer", customer.to_owned()),
        ("items[0][plan]", price),
        // The first invoice waits for the card the web client confirms on its
        // PaymentIntent; the plan starts when that invoice is paid.
        ("payment_behavior", "allow_incomplete".to_owned()),
        ("metadata[payment_id]", payment.id.clone()),
        ("metadata[user_id]", payment.user_id.clone().unwrap_or_default()),
        ("expand[0]", "latest_invoice.payment_intent".to_owned()),
    ];
    let sub = api
        .post("/v1/subscriptions", &form, Some(&format!("sub-{}", payment.id)))
        .await?;
    Ok(Checkout {
        url: None,
        client_secret: sub["latest_invoice"]["payment_intent"]["client_secret"]
            .as_str()
            .map(str::to_owned),
        provider_ref: Some(str_field(&sub, "id")?),
    })
}

/// The PaymentIntent that took a payment's money: the payment's own (one-time plans), or
/// that of its invoice (upgrades and renewals are stored under their invoice; a monthly
/// checkout under its subscription, whose first invoice it paid).
async fn charged_intent(api: &StripeApi, payment: &PaymentRow) -> anyhow::Result<String> {
    let reference = payment
        .provider_ref
        .as_deref()
        .with_context(|| format!("payment {} has no stripe id", payment.id))?;
    let invoice = match reference {
        pi if pi.starts_with("pi_") => return Ok(pi.to_owned()),
        invoice if invoice.starts_with("in_") => api.get(&format!("/v1/invoices/{invoice}")).await?,
        sub if sub.starts_with("sub_") => {
            // Stripe lists newest first: the checkout paid the oldest invoice.
            let list = api
                .get(&format!("/v1/invoices?subscription={sub}&limit=100"))
                .await?;
            list["data"]
                .as_array()
                .and_then(|invoices| invoices.last())
                .cloned()
                .with_context(|| format!("subscription {sub} has no invoice"))?
        }
        other => bail!("payment {} has an unknown stripe id {other}", payment.id),
    };
    invoice["payment_intent"]
        .as_str()
        .or_else(|| invoice["payment_intent"]["id"].as_str())
        .map(str::to_owned)
        .with_context(|| format!("the invoice of payment {} has no PaymentIntent", payment.id))
}

/// Whether a payment's Stripe id is an upgrade's proration invoice (checkouts are a
/// Subscription or a PaymentIntent).
pub fn is_upgrade_invoice(provider_ref: &str) -> bool {
    provider_ref.starts_with("in_")
}

/// The Stripe subscription that renews the user's monthly plan, if any.
async fn renewing_subscription(db: &Db, user_id: &str) -> anyhow::Result<Option<String>> {
    let sub = db
        .subscription(user_id, chrono::Utc::now().timestamp_millis())
        .await?;
    Ok(sub
        .provider_subscription_id
        .filter(|_| sub.billing_cycle == Some(BillingCycle::Monthly)))
}

/// A monthly upgrade: the subscription's item moves to the new plan's price, which makes
/// Stripe add prorations (a credit for the old price's unused time, a charge for the new
/// one's), and those are invoiced and charged to the saved card at once. The billing
/// cycle stays; the plan switches only when the invoice is reported paid. `payment` takes
/// the invoice's id and amount before it is charged, so its event finds it.
async fn start_upgrade(
    api: &StripeApi,
    db: &Db,
    payment: &PaymentRow,
    subscription: &str,
) -> anyhow::Result<Checkout> {
    let invoice_id = invoice_upgrade(api, db, payment, subscription).await?;
    charge_upgrade(api, db, payment, invoice_id).await
}

/// Moves the subscription's item to the upgrade's price and invoices the prorations
/// at once; the invoice's amounts are stored on the payment. Answers the invoice's id.
async fn invoice_upgrade(
    api: &StripeApi,
    db: &Db,
    payment: &PaymentRow,
    subscription: &str,
) -> anyhow::Result<String> {
    let path = format!("/v1/subscriptions/{subscription}");
    let sub = api.get(&path).await?;
    let item = sub["items"]["data"][0]["id"]
        .as_str()
        .context("the subscription has no item")?
        .to_owned();
    let price = price_id(
        api,
        db,
        payment.plan_type.as_str(),
        payment.currency.as_str(),
        payment.total_amount,
    )
    .await?;
    // No `proration_behavior`: Stripe's default creates the prorations (and localstripe
    // refuses the parameter).
    let form = [("items[0][id]", item), ("items[0][plan]", price)];
    let key = |step: &str| format!("upgrade-{step}-{}", payment.id);
    api.post(&path, &form, Some(&key("item"))).await?;
    let form = [
        ("customer", str_field(&sub, "customer")?),
        ("subscription", subscription.to_owned()),
    ];
    let invoice = api.post("/v1/invoices", &form, Some(&key("invoice"))).await?;
    let invoice_id = str_field(&invoice, "id")?;
    let total = invoice["amount_due"]
        .as_i64()
        .context("Stripe's invoice has no amount_due")?;
    // The invoice's total includes VAT at the price's rate, which is the payment's.
    let net = (total as f64 / (1.0 + payment.vat_rate)).round() as i64;
    db.set_upgrade_invoice(&payment.id, &invoice_id, (net, total - net, total))
        .await?;
    Ok(invoice_id)
}

/// Charges the upgrade's invoice to the saved card. Paid, or confirmable by the web
/// client (3-D Secure, no card saved): its checkout; declined: taken back and closed.
async fn charge_upgrade(
    api: &StripeApi,
    db: &Db,
    payment: &PaymentRow,
    invoice_id: String,
) -> anyhow::Result<Checkout> {
    let key = |step: &str| format!("upgrade-{step}-{}", payment.id);
    let path = format!("/v1/invoices/{invoice_id}");
    if let Err(e) = api.post(&format!("{path}/pay"), &[], Some(&key("pay"))).await {
        // Declined (402), or no card saved: the invoice's PaymentIntent, read below, tells.
        match e.downcast_ref::<StripeError>() {
            Some(StripeError {
                status: 400..=499, ..
            }) => {
                tracing::info!(payment = %payment.id, error = %e, "stripe did not charge an upgrade to the saved card")
            }
            _ => return Err(e),
        }
    }
    let invoice = api.get(&format!("{path}?expand[0]=payment_intent")).await?;
    let intent = &invoice["payment_intent"];
    let paid = invoice["status"] == "paid";
    // 3-D Secure, or no card saved: the web client confirms the PaymentIntent.
    let confirmable = invoice["status"] == "open"
        && intent["last_payment_error"].is_null()
        && matches!(
            intent["status"].as_str(),
            Some("requires_action" | "requires_confirmation" | "requires_payment_method")
        );
    let client_secret = intent["client_secret"]
        .as_str()
        .filter(|_| confirmable)
        .map(str::to_owned);
    // Declined, or nothing that could pay it: the upgrade ends here, never half made. A
    // charge still processing is left to its event.
    if !paid && client_secret.is_none() && intent["status"] != "processing" {
        undo_upgrade(api, &invoice_id).await?;
        db.close_payment(
            &payment.id,
            PaymentStatus::Failed,
            chrono::Utc::now().timestamp_millis(),
        )
        .await?;
    }
    Ok(Checkout {
        url: None,
        client_secret,
        provider_ref: Some(invoice_id),
    })
}

/// Takes back an upgrade whose invoice was not paid: the invoice is voided so it is never
/// charged later for a plan not granted, and the item goes back to the price it had (the
/// plan of the invoice's negative "unused time" line), without prorations, so the next
/// renewal charges the plan the user still has. A paid invoice is left alone.
async fn undo_upgrade(api: &StripeApi, invoice_id: &str) -> anyhow::Result<()> {
    let path = format!("/v1/invoices/{invoice_id}");
    let invoice = api.get(&path).await?;
    if invoice["status"] == "paid" {
        return Ok(());
    }
    let subscription = str_field(&invoice, "subscription")?;
    let customer = str_field(&invoice, "customer")?;
    let lines = invoice["lines"]["data"].as_array().cloned().unwrap_or_default();
    let old = lines
        .iter()
        .find(|line| line["amount"].as_i64().is_some_and(|a| a < 0))
        .and_then(|line| {
            line["price"]["id"]
                .as_str()
                .or_else(|| line["plan"]["id"].as_str())
        })
        .context("the upgrade invoice has no credit line naming the old price")?
        .to_owned();
    if invoice["status"] == "open" || invoice["status"] == "draft" {
        let voided = api
            .post(&format!("{path}/void"), &[], Some(&format!("void-{invoice_id}")))
            .await;
        if let Err(e) = voided {
            tracing::error!(invoice = invoice_id, error = ?e, "could not void an unpaid stripe upgrade invoice; void it by hand");
        }
    }
    let sub_path = format!("/v1/subscriptions/{subscription}");
    let sub = api.get(&sub_path).await?;
    let item = &sub["items"]["data"][0];
    if item["plan"]["id"].as_str() != Some(old.as_str()) {
        let item = item["id"].as_str().context("the subscription has no item")?;
        let form = [("items[0][id]", item.to_owned()), ("items[0][plan]", old)];
        api.post(&sub_path, &form, Some(&format!("undo-{invoice_id}")))
            .await?;
    }
    // Putting the price back made prorations too; they would move money on the next
    // renewal for time nobody paid for.
    let pending = api
        .get(&format!("/v1/invoiceitems?customer={customer}&limit=100"))
        .await?;
    for item in pending["data"].as_array().into_iter().flatten() {
        let ours = item["invoice"].is_null()
            && item["proration"] == true
            && item["subscription"].as_str() == Some(subscription.as_str());
        if let (true, Some(id)) = (ours, item["id"].as_str()) {
            api.delete(&format!("/v1/invoiceitems/{id}")).await?;
        }
    }
    tracing::info!(
        invoice = invoice_id,
        subscription,
        "an unpaid stripe upgrade was taken back"
    );
    Ok(())
}

/// A retried checkout: the client secret of what was started the first time.
async fn resume_checkout(api: &StripeApi, provider_ref: &str) -> anyhow::Result<Checkout> {
    let client_secret = if is_upgrade_invoice(provider_ref) {
        let invoice = api
            .get(&format!("/v1/invoices/{provider_ref}?expand[0]=payment_intent"))
            .await?;
        invoice["payment_intent"]["client_secret"]
            .as_str()
            .filter(|_| invoice["status"] == "open")
            .map(str::to_owned)
    } else if provider_ref.starts_with("sub_") {
        let sub = api
            .get(&format!(
                "/v1/subscriptions/{provider_ref}?expand[0]=latest_invoice.payment_intent"
            ))
            .await?;
        sub["latest_invoice"]["payment_intent"]["client_secret"]
            .as_str()
            .map(str::to_owned)
    } else {
        let intent = api.get(&format!("/v1/payment_intents/{provider_ref}")).await?;
        Some(str_field(&intent, "client_secret")?)
    };
    Ok(Checkout {
        url: None,
        client_secret,
        provider_ref: Some(provider_ref.to_owned()),
    })
}

fn str_field(object: &Value, field: &str) -> anyhow::Result<String> {
    object[field]
        .as_str()
        .map(str::to_owned)
        .with_context(|| format!("Stripe's answer has no {field}"))
}
