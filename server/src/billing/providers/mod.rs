//! Payment providers. The built-in `demo` provider completes payments locally through
//! its own checkout page; `stripe` takes cards through Stripe. Which one runs is chosen
//! once at start-up (`choose`).

pub mod demo;
pub mod stripe;

use std::sync::Arc;

use futures_util::future::BoxFuture;

use crate::config::{is_set, BillingSettings, Settings};
use crate::db::payments::PaymentRow;
use crate::db::Db;
use crate::plans::Catalogue;

/// How the user pays a checkout: on a page of ours (`url`) or by confirming a Stripe
/// PaymentIntent in the web client (`client_secret`). `provider_ref` is the provider's id
/// of what is being paid (a PaymentIntent, or a Subscription for monthly plans).
pub struct Checkout {
    pub url: Option<String>,
    pub client_secret: Option<String>,
    pub provider_ref: Option<String>,
}

/// A change to a subscription the provider renews on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RenewalChange<'a> {
    /// End at the period end (`true`), or go on renewing (`false`).
    CancelAtPeriodEnd(bool),
    /// From the next renewal on, charge this plan's price (no proration: what was paid
    /// for this period stays as it is).
    RenewAs {
        plan_type: &'a str,
        currency: &'a str,
        /// Minor units, VAT included.
        amount: i64,
    },
    /// Stop now: the user paid for another plan that replaces it.
    EndNow,
}

pub trait PaymentProvider: Send + Sync {
    fn name(&self) -> &'static str;

    /// Starts paying `payment` (pending, already stored). Called again for a retried
    /// checkout, which must not start a second charge.
    fn start_checkout(&self, payment: &PaymentRow) -> BoxFuture<'static, anyhow::Result<Checkout>>;

    /// Whether the provider charges monthly renewals itself and reports them (Stripe);
    /// else the scheduler charges each renewal through `charge_renewal`.
    fn renews_itself(&self) -> bool;

    /// Charges a renewal without the user present; `Ok(false)` if the charge was declined.
    fn charge_renewal(&self, payment: &PaymentRow) -> BoxFuture<'static, anyhow::Result<bool>>;

    /// Applies a plan change to the provider's subscription `subscription_ref`.
    fn change_renewal(
        &self,
        subscription_ref: &str,
        change: RenewalChange<'_>,
    ) -> BoxFuture<'static, anyhow::Result<()>>;

    /// Whether the provider's subscription `subscription_ref` is set to end at its period
    /// end, read fresh (webhook snapshots may arrive out of order).
    fn cancels_at_period_end(&self, subscription_ref: &str) -> BoxFuture<'static, anyhow::Result<bool>>;

    /// Makes a checkout unpayable at the provider (after it failed), so a later retry on
    /// the same PaymentIntent cannot take money for a payment we closed.
    fn abandon(&self, payment: &PaymentRow) -> BoxFuture<'static, anyhow::Result<()>>;

    /// Asks the provider whether a pending checkout was paid, in full: the status page's
    /// fallback when a webhook is late. Never trusts the client.
    fn is_paid(&self, payment: &PaymentRow) -> BoxFuture<'static, anyhow::Result<bool>>;

    /// Gives back `amount` (minor units) of a succeeded `payment`; answers the provider's id
    /// of the refund (`None`: the demo provider moves no money and only records it).
    /// `idempotency_key` goes to the provider, so a retried call never refunds twice.
    fn refund(
        &self,
        payment: &PaymentRow,
        amount: i64,
        idempotency_key: &str,
    ) -> BoxFuture<'static, anyhow::Result<Option<String>>>;

    /// The subscription whose first invoice `invoice` is (the one a monthly checkout paid),
    /// asked of the provider; `None` for any other invoice.
    fn subscription_of_first_invoice(
        &self,
        _invoice: &str,
    ) -> BoxFuture<'static, anyhow::Result<Option<String>>> {
        Box::pin(async { Ok(None) })
    }

    /// Whether paying `payment` changes the plan of the subscription the provider renews
    /// already (a Stripe upgrade's proration invoice): its period stays as it is.
    fn changes_plan_in_place(&self, _payment: &PaymentRow) -> bool {
        false
    }

    /// What the web client needs to take a card (`GET /api/payments/config`).
    fn client_config(&self) -> chat_contract::views::PaymentConfig;
}

/// Whether Stripe takes the payments: a secret key is set (see [`choose`]).
pub fn stripe_configured(billing: &BillingSettings) -> bool {
    is_set(&billing.stripe_secret_key)
}

/// Stripe when a secret key is set; else the demo provider, only if configured so.
pub async fn choose(
    settings: &Settings,
    db: &Db,
    catalogue: &Catalogue,
) -> anyhow::Result<Arc<dyn PaymentProvider>> {
    let billing: &BillingSettings = &settings.billing;
    if stripe_configured(billing) {
        anyhow::ensure!(
            is_set(&billing.stripe_webhook_secret),
            "STRIPE_SECRET_KEY is set but STRIPE_WEBHOOK_SECRET is not: payments would never be confirmed"
        );
        anyhow::ensure!(
            !billing.stripe_publishable_key.trim().is_empty(),
            "STRIPE_SECRET_KEY is set but STRIPE_PUBLISHABLE_KEY is not: the web client could not take cards"
        );
        let provider = stripe::StripeProvider::new(billing, db.clone())?;
        let domestic = catalogue
            .vat
            .for_buyer(&settings.invoice.seller_country, None)
            .rate;
        provider.prepare_prices(catalogue, domestic).await;
        return Ok(Arc::new(provider));
    }
    match billing.provider.as_str() {
        "demo" => Ok(Arc::new(demo::DemoProvider::new(&settings.server.public_url))),
        "stripe" => anyhow::bail!("billing.provider is \"stripe\" but STRIPE_SECRET_KEY is not set"),
        other => anyhow::bail!("billing.provider must be \"demo\" or \"stripe\", not {other:?}"),
    }
}
