//! The demo provider: a checkout page served by this server, where "Pay" completes the
//! payment at once. Renewals always succeed. For trying the product, never for money.

use futures_util::future::BoxFuture;

use super::{Checkout, PaymentProvider};
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
                url,
                provider_ref: None,
            })
        })
    }

    fn charge_renewal(&self, _payment: &PaymentRow) -> BoxFuture<'static, anyhow::Result<bool>> {
        Box::pin(async { Ok(true) })
    }
}
