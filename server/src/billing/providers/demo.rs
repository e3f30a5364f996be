//! The demo provider: a checkout page served by this server, where "Pay" completes the
//! payment at once. Renewals always succeed. For trying the product, never for money:
//! it runs only without a Stripe key and with `billing.provider = "demo"`.

use chat_contract::views::PaymentConfig;
use futures_util::future::BoxFuture;

use super::{Checkout, PaymentProvider, RenewalChange};
use crate::db::payments::PaymentRow;

pub struct DemoProvider {
    public_url: String,
}

impl DemoProvider {
    pub fn new(public_url: &str) -> Self {
        DemoProvider {
            public_url: public_url.trim_end_matches('/').to_owned(),
        }
    }
}

impl PaymentProvider for DemoProvider {
    fn name(&self) -> &'static str {
        "demo"
    }

    fn start_checkout(&self, payment: &PaymentRow) -> BoxFuture<'static, anyhow::Result<Checkout>> {
        let url = format!("{}/api/payments/demo/{}", self.public_url, payment.id);
        Box::pin(async move {
            Ok(Checkout {
                url: Some(url),
                client_secret: None,
                provider_ref: None,
            })
        })
    }

    fn renews_itself(&self) -> bool {
        false
    }

    fn charge_renewal(&self, _payment: &PaymentRow) -> BoxFuture<'static, anyhow::Result<bool>> {
        Box::pin(async { Ok(true) })
    }

    /// The demo provider keeps no subscriptions of its own: the scheduler renews.
    fn change_renewal(&self, _: &str, _: RenewalChange<'_>) -> BoxFuture<'static, anyhow::Result<()>> {
        Box::pin(async { Ok(()) })
    }

    fn cancels_at_period_end(&self, _: &str) -> BoxFuture<'static, anyhow::Result<bool>> {
        Box::pin(async { Ok(false) })
    }

    fn abandon(&self, _payment: &PaymentRow) -> BoxFuture<'static, anyhow::Result<()>> {
        Box::pin(async { Ok(()) })
    }

    /// Only its own checkout page's "Pay" completes a demo payment.
    fn is_paid(&self, _payment: &PaymentRow) -> BoxFuture<'static, anyhow::Result<bool>> {
        Box::pin(async { Ok(false) })
    }

    /// No money was taken, so none is given back: the refund is only recorded.
    fn refund(&self, _: &PaymentRow, _: i64, _: &str) -> BoxFuture<'static, anyhow::Result<Option<String>>> {
        Box::pin(async { Ok(None) })
    }

    fn client_config(&self) -> PaymentConfig {
        PaymentConfig {
            provider: "demo".into(),
            publishable_key: None,
            js_url: None,
        }
    }
}
