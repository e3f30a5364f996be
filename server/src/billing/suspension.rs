//! What suspending an account does to its plan: a plan that would renew stops renewing
//! (at the provider first, so a suspended user is not charged again), and lifting the
//! suspension before the period ends renews it again, unless the user had cancelled it
//! themselves before. The plan itself runs to its end date either way: it was paid for.
//!
//! These decide a [`RenewalHold`] and tell the provider; the account's suspension stores
//! it in its own transaction (`accounts::suspension`). A provider that cannot be reached
//! fails the call before anything is stored here, so the admin can try again.

use chat_contract::states::{BillingCycle, PlanType};

use super::providers::RenewalChange;
use super::Billing;
use crate::db::subscriptions::RenewalHold;
use crate::error::Result;

impl Billing {
    /// Before a suspension is stored: a plan that renews is set to end at its end date,
    /// as a cancellation would. One already cancelled, one-time or free is left alone.
    pub async fn stop_renewal_for_suspension(&self, user_id: &str) -> Result<RenewalHold> {
        let sub = self.db.subscription(user_id, self.now()).await?;
        let renews = sub.plan_type != PlanType::Free
            && sub.billing_cycle == Some(BillingCycle::Monthly)
            && sub.pending_plan_type != Some(PlanType::Free);
        if !renews {
            return Ok(RenewalHold::Untouched);
        }
        if let Some(renewal) = &sub.provider_subscription_id {
            self.change_renewal(renewal, RenewalChange::CancelAtPeriodEnd(true))
                .await?;
        }
        Ok(RenewalHold::Stopped {
            renews_as: sub.pending_plan_type.unwrap_or(sub.plan_type),
        })
    }

    /// Before lifting a suspension is stored: the renewal the suspension stopped starts
    /// again, if the plan has not ended meanwhile and it is still cancelled. A renewal the
    /// user had cancelled is not the suspension's, and stays cancelled.
    pub async fn resume_renewal_after_suspension(&self, user_id: &str) -> Result<RenewalHold> {
        let sub = self.db.subscription(user_id, self.now()).await?;
        let Some(renews_as) = sub.suspension_renews_as else {
            return Ok(RenewalHold::Untouched);
        };
        let still_stopped = sub.plan_type != PlanType::Free && sub.pending_plan_type == Some(PlanType::Free);
        if !still_stopped {
            return Ok(RenewalHold::Untouched);
        }
        // A scheduled downgrade at the provider was kept under the cancellation: taking
        // the cancellation back is enough.
        if let Some(renewal) = &sub.provider_subscription_id {
            self.change_renewal(renewal, RenewalChange::CancelAtPeriodEnd(false))
                .await?;
        }
        Ok(RenewalHold::Resumed {
            pending: (renews_as != sub.plan_type).then_some(renews_as),
        })
    }

    /// Tells the user's tabs of their subscription after a hold was stored.
    pub async fn announce_renewal_hold(&self, user_id: &str, hold: RenewalHold) {
        if hold != RenewalHold::Untouched {
            self.announce.subscription(user_id).await;
        }
    }
}
