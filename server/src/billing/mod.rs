//! Payment providers. The built-in `demo` provider completes payments locally through
//! its own checkout page; Stripe plugs in behind the same trait.

pub mod demo;

use futures_util::future::BoxFuture;

use crate::db::payments::PaymentRow;

/// Where to send the user to pay, and the provider's own id of the payment.
pub struct Checkout {
    pub url: String,
    pub provider_ref: Option<String>,
}

pub trait PaymentProvider: Send + Sync {
    fn name(&self) -> &'static str;

    /// Starts paying `payment` (pending, already stored).
    fn start_checkout(&self, payment: &PaymentRow) -> BoxFuture<'static, anyhow::Result<Checkout>>;

    /// Charges a renewal without the user present; `Ok(false)` if the charge was declined.
    fn charge_renewal(&self, payment: &PaymentRow) -> BoxFuture<'static, anyhow::Result<bool>>;
}
