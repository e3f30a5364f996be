//! The user's payments: reading them (a pending one checked with the provider), and the
//! demo provider's checkout, whose page completes or cancels a payment.

use chat_contract::states::PaymentStatus;

use super::Billing;
use crate::db::payments::PaymentRow;
use crate::error::{ErrorCode, Result};

impl Billing {
    pub async fn payments_of(&self, user_id: &str) -> Result<Vec<PaymentRow>> {
        Ok(self.db.payments_of(user_id).await?)
    }

    /// One of the user's payments; another user's is `not_found`. A pending one is
    /// checked with the provider, so the status page sees a payment whose webhook is late.
    pub async fn payment_of_user(&self, user_id: &str, id: &str) -> Result<PaymentRow> {
        let payment = self.own_payment(user_id, id).await?;
        if payment.status != PaymentStatus::Pending || payment.provider != self.payments.name() {
            return Ok(payment);
        }
        match self.payments.is_paid(&payment).await {
            Ok(true) => {
                self.complete_paid(&payment).await?;
                self.own_payment(user_id, id).await
            }
            Ok(false) => Ok(payment),
            Err(e) => {
                tracing::warn!(payment = %payment.id, error = ?e, "could not ask the provider about a payment");
                Ok(payment)
            }
        }
    }

    async fn own_payment(&self, user_id: &str, id: &str) -> Result<PaymentRow> {
        Ok(self
            .db
            .payment(id)
            .await?
            .filter(|p| p.user_id.as_deref() == Some(user_id))
            .ok_or(ErrorCode::NotFound)?)
    }

    /// A payment of the demo provider that belongs to the user; everything else, and
    /// every demo payment while another provider runs, is `not_found`.
    pub async fn demo_payment(&self, user_id: &str, id: &str) -> Result<PaymentRow> {
        if self.payments.name() != "demo" {
            return Err(ErrorCode::NotFound.into());
        }
        let payment = self.own_payment(user_id, id).await?;
        if payment.provider != "demo" {
            return Err(ErrorCode::NotFound.into());
        }
        Ok(payment)
    }

    /// The demo page's "Pay": the plan starts as if a card had been charged.
    pub async fn pay_demo(&self, user_id: &str, id: &str) -> Result<()> {
        self.demo_payment(user_id, id).await?;
        self.complete_payment(id).await?;
        Ok(())
    }

    /// The demo page's "Cancel".
    pub async fn cancel_demo(&self, user_id: &str, id: &str) -> Result<()> {
        self.demo_payment(user_id, id).await?;
        self.abandon_payment(id).await
    }

    /// The name of the plan as the catalogue calls it (for the demo page).
    pub fn plan_name(&self, payment: &PaymentRow) -> &str {
        &self.catalogue.plan(payment.plan_type).name
    }
}
