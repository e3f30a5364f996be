//! The rules of SPEC §4 for plans: upgrades take effect once paid; downgrades and
//! cancellations wait for the end of the paid period; renewals and expiries are applied
//! by the scheduler.

use chat_contract::states::{BillingCycle, PaymentKind, PaymentStatus};

use super::providers::{Checkout, RenewalChange};
use super::Billing;
use crate::db::payments::PaymentRow;
use crate::db::subscriptions::{Activation, SubscriptionRow};
use crate::error::{ApiError, ErrorCode, Result};
use crate::i18n::Lang;
use crate::plans::{vat_of, Currency, PlanType};

/// A billing cycle named by a client (monthly when none is named); anything else is
/// `invalid_billing_cycle`.
pub fn billing_cycle_named(value: Option<&str>) -> Result<BillingCycle> {
    BillingCycle::parse(value.unwrap_or("monthly")).ok_or_else(|| ErrorCode::InvalidBillingCycle.into())
}

/// What a new payment is for.
struct Charge<'a> {
    plan: PlanType,
    cycle: BillingCycle,
    kind: PaymentKind,
    currency: Currency,
    payment_method: &'a str,
    idempotency_key: Option<String>,
    /// A renewal's period, known when it is charged.
    period: Option<(i64, i64)>,
}

pub struct ChangeRequest {
    pub target: PlanType,
    pub cycle: BillingCycle,
    pub currency: Currency,
    pub payment_method: String,
    pub idempotency_key: Option<String>,
}

/// `PUT /api/subscription/change`'s body, as sent.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanChange {
    plan_type: Option<String>,
    payment_method: Option<String>,
    billing_cycle: Option<String>,
    currency: Option<String>,
}

impl PlanChange {
    /// The change asked for by a user speaking `language`: cards are the only way to pay,
    /// monthly is the cycle and, for Hungarian users, forints the currency, unless said
    /// otherwise. An idempotency key is kept to its first 200 characters.
    pub fn request(self, language: Lang, idempotency_key: Option<&str>) -> Result<ChangeRequest> {
        let target = crate::plans::plan_named(self.plan_type.as_deref())?;
        let payment_method = self.payment_method.unwrap_or_else(|| "credit_card".into());
        if payment_method != "credit_card" {
            return Err(ErrorCode::InvalidPaymentMethod.into());
        }
        let cycle = billing_cycle_named(self.billing_cycle.as_deref())?;
        let currency = match self.currency.as_deref() {
            Some("EUR") => Currency::Eur,
            Some("HUF") => Currency::Huf,
            Some(_) => return Err(ErrorCode::InvalidCurrency.into()),
            None if language == Lang::HuHu => Currency::Huf,
            None => Currency::Eur,
        };
        let idempotency_key = idempotency_key
            .map(|k| k.trim().chars().take(200).collect::<String>())
            .filter(|k| !k.is_empty());
        Ok(ChangeRequest {
            target,
            cycle,
            currency,
            payment_method,
            idempotency_key,
        })
    }
}

/// What a plan change led to.
pub enum ChangeOutcome {
    /// An upgrade: pay through `checkout`; the plan changes once paid. Boxed: a payment
    /// row is large beside a subscription row.
    PaymentRequired {
        payment: Box<PaymentRow>,
        checkout: Checkout,
    },
    /// A downgrade, scheduled for the end of the period.
    Scheduled(SubscriptionRow),
}

/// A provider that failed or could not be reached: logged with its cause, answered as
/// `payment_provider_error`; nothing was changed here.
fn provider_error(e: anyhow::Error) -> ApiError {
    tracing::error!(error = ?e, "payment provider call failed");
    ErrorCode::PaymentProviderError.into()
}

impl Billing {
    /// A pending payment, its VAT computed for the buyer's billing info as it is now (kept
    /// on the payment, so its invoice shows the buyer the VAT was computed for).
    async fn new_payment(&self, user_id: &str, charge: Charge<'_>) -> Result<PaymentRow> {
        let Charge {
            plan,
            cycle,
            kind,
            currency,
            payment_method,
            idempotency_key,
            period,
        } = charge;
        let net = self.catalogue.plan(plan).net_price_minor(currency);
        let billing = match self.db.billing_info(user_id).await? {
            // A checkout waits for VIES (a few seconds at most) when the stored check cannot
            // be relied on. Renewals use the stored check: they run in the scheduler or a
            // provider's webhook, which must not hang on VIES.
            Some(b) if kind == PaymentKind::Checkout => Some(self.recheck_if_stale(user_id, b).await),
            other => other,
        };
        let buyer_vat = self.vat_for(billing.as_ref());
        let (vat, total) = vat_of(net, buyer_vat.rate);
        Ok(PaymentRow {
            id: uuid::Uuid::now_v7().to_string(),
            user_id: Some(user_id.to_owned()),
            plan_type: plan,
            billing_cycle: cycle,
            kind,
            status: PaymentStatus::Pending,
            currency,
            net_amount: net,
            vat_rate: buyer_vat.rate,
            vat_amount: vat,
            total_amount: total,
            provider: self.payments.name().to_owned(),
            provider_ref: None,
            payment_method: payment_method.to_owned(),
            idempotency_key,
            created_at: self.now(),
            completed_at: None,
            buyer: billing.as_ref().map(|b| {
                // The check is kept once, in its own column.
                let buyer = chat_contract::views::BillingInfo {
                    vat_check: None,
                    ..crate::views::billing_info(b)
                };
                serde_json::to_string(&buyer).expect("billing info serializes")
            }),
            vat_check: billing.as_ref().and_then(|b| b.vat_check.clone()),
            vat_treatment: buyer_vat.treatment,
            period_start: period.map(|(start, _)| start),
            period_end: period.map(|(_, end)| end),
            refunded_amount: 0,
        })
    }

    pub async fn change_plan(&self, user_id: &str, req: ChangeRequest) -> Result<ChangeOutcome> {
        // A retried upgrade gets its first payment back, whatever happened since.
        if let Some(key) = &req.idempotency_key {
            if let Some(existing) = self.db.payment_by_idempotency_key(user_id, key).await? {
                return self.payment_required(existing).await;
            }
        }
        let now = self.now();
        let sub = self.db.subscription(user_id, now).await?;
        let current = sub.plan_type;
        if req.target == current {
            return Err(ErrorCode::AlreadyOnPlan.into());
        }
        let rank = |p: PlanType| self.catalogue.plan(p).rank;
        if rank(req.target) < rank(current) {
            return self.schedule_downgrade(user_id, &sub, req.target, now).await;
        }
        self.start_upgrade(user_id, &sub, req).await
    }

    /// A downgrade waits for the end of the paid period.
    async fn schedule_downgrade(
        &self,
        user_id: &str,
        sub: &SubscriptionRow,
        target: PlanType,
        now: i64,
    ) -> Result<ChangeOutcome> {
        // A plan that does not renew has no payment to carry into a lower paid plan:
        // the user picks a new plan when it ends.
        let renews = sub.billing_cycle == Some(BillingCycle::Monthly);
        if target != PlanType::Free && !renews {
            return Err(ErrorCode::PlanNotRenewing.into());
        }
        // The provider's subscription learns first: if it cannot, nothing changes here.
        if let Some(renewal) = &sub.provider_subscription_id {
            let pending = sub.pending_plan_type;
            if target == PlanType::Free {
                self.change_renewal(renewal, RenewalChange::CancelAtPeriodEnd(true))
                    .await?;
            } else {
                if pending == Some(PlanType::Free) {
                    self.change_renewal(renewal, RenewalChange::CancelAtPeriodEnd(false))
                        .await?;
                }
                let currency = sub.currency.unwrap_or(Currency::Eur);
                let amount = self.renewal_price(user_id, target, currency).await?;
                let change = RenewalChange::RenewAs {
                    plan_type: target.as_str(),
                    currency: currency.as_str(),
                    amount,
                };
                self.change_renewal(renewal, change).await?;
            }
        }
        // Keep what was paid for until the end date; quotas are not reset.
        self.db.set_pending_plan(user_id, Some(target), now).await?;
        Ok(ChangeOutcome::Scheduled(self.changed(user_id, now).await?))
    }

    /// An upgrade: a pending payment, and its checkout at the provider.
    async fn start_upgrade(
        &self,
        user_id: &str,
        sub: &SubscriptionRow,
        req: ChangeRequest,
    ) -> Result<ChangeOutcome> {
        if self.db.billing_info(user_id).await?.is_none() {
            return Err(ErrorCode::BillingInfoRequired.into());
        }
        let key = req.idempotency_key.clone();
        // A monthly plan the provider renews is upgraded in its subscription, which keeps
        // its currency.
        let currency = match (&sub.provider_subscription_id, sub.billing_cycle) {
            (Some(_), Some(BillingCycle::Monthly)) if req.cycle == BillingCycle::Monthly => {
                sub.currency.unwrap_or(req.currency)
            }
            _ => req.currency,
        };
        let charge = Charge {
            plan: req.target,
            cycle: req.cycle,
            kind: PaymentKind::Checkout,
            currency,
            payment_method: &req.payment_method,
            idempotency_key: req.idempotency_key,
            period: None,
        };
        let payment = self.new_payment(user_id, charge).await?;
        if let Err(e) = self.db.insert_payment(&payment).await {
            // The same key sent twice at once: the other request stored the payment.
            let existing = match (&e, &key) {
                (sqlx::Error::Database(db), Some(key)) if db.is_unique_violation() => {
                    self.db.payment_by_idempotency_key(user_id, key).await?
                }
                _ => None,
            };
            return match existing {
                Some(existing) => self.payment_required(existing).await,
                None => Err(e.into()),
            };
        }
        self.payment_required(payment).await
    }

    async fn payment_required(&self, mut payment: PaymentRow) -> Result<ChangeOutcome> {
        let checkout = self
            .payments
            .start_checkout(&payment)
            .await
            .map_err(provider_error)?;
        if let Some(provider_ref) = &checkout.provider_ref {
            if payment.provider_ref.as_ref() != Some(provider_ref) {
                self.db.set_provider_ref(&payment.id, provider_ref).await?;
            }
        }
        // Read back: the provider may have set what an upgrade charges, or closed it declined.
        payment = self.db.payment(&payment.id).await?.ok_or(ErrorCode::NotFound)?;
        Ok(ChangeOutcome::PaymentRequired {
            payment: Box::new(payment),
            checkout,
        })
    }

    pub(super) async fn change_renewal(&self, renewal: &str, change: RenewalChange<'_>) -> Result<()> {
        self.payments
            .change_renewal(renewal, change)
            .await
            .map_err(provider_error)
    }

    /// What renewing on `plan` charges: the total a new payment for it would have.
    async fn renewal_price(&self, user_id: &str, plan: PlanType, currency: Currency) -> Result<i64> {
        Ok(self
            .renewal_payment(user_id, plan, currency, None)
            .await?
            .total_amount)
    }

    /// A renewal payment of `user_id` on `plan`, its VAT computed for the buyer as they are
    /// now; `period` is the one it pays for, when known.
    pub(super) async fn renewal_payment(
        &self,
        user_id: &str,
        plan: PlanType,
        currency: Currency,
        period: Option<(i64, i64)>,
    ) -> Result<PaymentRow> {
        let charge = Charge {
            plan,
            cycle: BillingCycle::Monthly,
            kind: PaymentKind::Renewal,
            currency,
            payment_method: "credit_card",
            idempotency_key: None,
            period,
        };
        self.new_payment(user_id, charge).await
    }

    /// Before an account is deleted: a plan that the provider renews (Stripe) ends there now,
    /// so a deleted account is never charged again. Fails (and the account stays) when the
    /// provider cannot be reached.
    pub async fn end_for_deleted_account(&self, user_id: &str) -> Result<()> {
        let sub = self.db.subscription(user_id, self.now()).await?;
        if let Some(renewal) = &sub.provider_subscription_id {
            self.change_renewal(renewal, RenewalChange::EndNow).await?;
            tracing::info!(user = %user_id, subscription = %renewal, "renewal ended at the provider: the account is being deleted");
        }
        Ok(())
    }

    /// Cancelling keeps access until the end date, then the user is on free.
    pub async fn cancel(&self, user_id: &str) -> Result<SubscriptionRow> {
        let now = self.now();
        let sub = self.db.subscription(user_id, now).await?;
        if sub.plan_type == PlanType::Free {
            return Err(ErrorCode::NoPaidSubscription.into());
        }
        if let Some(renewal) = &sub.provider_subscription_id {
            self.change_renewal(renewal, RenewalChange::CancelAtPeriodEnd(true))
                .await?;
        }
        self.db
            .set_pending_plan(user_id, Some(PlanType::Free), now)
            .await?;
        self.changed(user_id, now).await
    }

    pub async fn cancel_pending(&self, user_id: &str) -> Result<SubscriptionRow> {
        let now = self.now();
        let sub = self.db.subscription(user_id, now).await?;
        let Some(pending) = sub.pending_plan_type else {
            return Err(ErrorCode::NoPendingChange.into());
        };
        if let Some(renewal) = &sub.provider_subscription_id {
            if pending == PlanType::Free {
                self.change_renewal(renewal, RenewalChange::CancelAtPeriodEnd(false))
                    .await?;
            } else {
                let currency = sub.currency.unwrap_or(Currency::Eur);
                let plan = sub.plan_type;
                let change = RenewalChange::RenewAs {
                    plan_type: plan.as_str(),
                    currency: currency.as_str(),
                    amount: self.renewal_price(user_id, plan, currency).await?,
                };
                self.change_renewal(renewal, change).await?;
            }
        }
        self.db.set_pending_plan(user_id, None, now).await?;
        self.changed(user_id, now).await
    }

    /// The user's subscription after a change made here, their tabs told of it.
    async fn changed(&self, user_id: &str, now: i64) -> Result<SubscriptionRow> {
        let sub = self.db.subscription(user_id, now).await?;
        self.announce.subscription(user_id).await;
        Ok(sub)
    }

    /// A checkout was paid: the plan starts now, for a month or for the one-time period,
    /// and the user's other open checkouts close. A payment is applied at most once, and
    /// never to move a user down from a higher plan they hold (an old checkout paid late).
    pub async fn complete_payment(&self, payment_id: &str) -> Result<PaymentRow> {
        let now = self.now();
        let payment = self.db.payment(payment_id).await?.ok_or(ErrorCode::NotFound)?;
        // The account was deleted while the checkout was open: no one to give the plan to.
        let Some(user_id) = payment.user_id.clone() else {
            self.db
                .close_payment(payment_id, PaymentStatus::Canceled, now)
                .await?;
            return Err(ErrorCode::PaymentClosed.into());
        };
        let sub = self.db.subscription(&user_id, now).await?;
        let rank = |p: PlanType| self.catalogue.plan(p).rank;
        if rank(payment.plan_type) <= rank(sub.plan_type) {
            self.db
                .close_payment(payment_id, PaymentStatus::Canceled, now)
                .await?;
            return Err(ErrorCode::PaymentClosed.into());
        }
        // An upgrade of the provider's subscription keeps its period: it paid the
        // difference up to the current end date, and that subscription goes on renewing.
        let in_place = self.payments.changes_plan_in_place(&payment);
        let end_date = match sub.end_date {
            Some(end) if in_place => end,
            _ => self.period_end(payment.billing_cycle, now),
        };
        let activation = Activation {
            plan_type: payment.plan_type,
            billing_cycle: payment.billing_cycle,
            payment_method: &payment.payment_method,
            currency: payment.currency,
            start_date: now,
            end_date,
        };
        // A monthly plan paid through a provider subscription is renewed by it.
        let renewed_by = if in_place {
            sub.provider_subscription_id.as_deref()
        } else {
            payment
                .provider_ref
                .as_deref()
                .filter(|_| payment.billing_cycle == BillingCycle::Monthly && self.payments.renews_itself())
        };
        if !self
            .db
            .complete_checkout(&payment, &activation, renewed_by, now)
            .await?
        {
            return Err(ErrorCode::PaymentClosed.into());
        }
        tracing::info!(user = %user_id, plan = %payment.plan_type, payment = %payment.id, "plan activated");
        // The plan is paid and active whatever happens next; a failed invoice is retried by
        // the scheduler's sweep.
        if let Err(e) = self.issue_invoice(payment_id).await {
            tracing::error!(payment = %payment_id, error = ?e, "issuing an invoice; the scheduler will retry");
        }
        self.stop_replaced_renewals(&user_id, &sub, renewed_by, in_place)
            .await;
        self.announce.subscription(&user_id).await;
        Ok(self.db.payment(payment_id).await?.ok_or(ErrorCode::NotFound)?)
    }

    /// After an upgrade: the provider's subscription of the plan it replaced must stop
    /// renewing, and one it upgraded in place must renew again if it was cancelled.
    /// The plan is paid already: a provider that fails here is logged for a person.
    async fn stop_replaced_renewals(
        &self,
        user_id: &str,
        sub: &SubscriptionRow,
        renewed_by: Option<&str>,
        in_place: bool,
    ) {
        // The plan it replaces must stop renewing, or the user would pay for both.
        if let Some(old) = sub
            .provider_subscription_id
            .as_deref()
            .filter(|old| Some(*old) != renewed_by)
        {
            if let Err(e) = self.payments.change_renewal(old, RenewalChange::EndNow).await {
                tracing::error!(user = %user_id, subscription = old, error = ?e,
                    "could not end the replaced provider subscription; end it by hand");
            }
        }
        // The upgrade dropped a scheduled cancellation here; the provider must renew again.
        if let Some(renewal) =
            renewed_by.filter(|_| in_place && sub.pending_plan_type == Some(PlanType::Free))
        {
            let change = RenewalChange::CancelAtPeriodEnd(false);
            if let Err(e) = self.payments.change_renewal(renewal, change).await {
                tracing::error!(user = %user_id, subscription = renewal, error = ?e,
                    "could not take back the cancellation of an upgraded provider subscription; do it by hand");
            }
        }
    }

    pub async fn abandon_payment(&self, payment_id: &str) -> Result<()> {
        if self
            .db
            .close_payment(payment_id, PaymentStatus::Canceled, self.now())
            .await?
        {
            Ok(())
        } else {
            Err(ErrorCode::PaymentClosed.into())
        }
    }

    /// Applies every period that ended by now: scheduled changes, monthly renewals and
    /// expiries. Safe with several instances: each subscription is claimed first.
    pub async fn apply_due(&self) -> anyhow::Result<usize> {
        let now = self.now();
        let due = self.db.due_subscriptions(now).await?;
        let mut applied = 0;
        for sub in due {
            match self.apply_one(&sub, now).await {
                Ok(true) => {
                    applied += 1;
                    self.announce.subscription(&sub.user_id).await;
                }
                Ok(false) => {}
                Err(e) => {
                    tracing::error!(user = %sub.user_id, error = ?e, "could not apply a due subscription")
                }
            }
        }
        Ok(applied)
    }

    async fn apply_one(&self, sub: &SubscriptionRow, now: i64) -> Result<bool, ApiError> {
        let Some(end) = sub.end_date else { return Ok(false) };
        let pending = sub.pending_plan_type;
        let renews_as = match pending {
            // A provider that renews by itself reports each paid renewal, which extends the
            // period before it ends; a period that ends unpaid ends on free.
            _ if self.payments.renews_itself() => None,
            Some(PlanType::Free) => None,
            Some(lower) => Some(lower),
            None if sub.billing_cycle == Some(BillingCycle::Monthly) => Some(sub.plan_type),
            None => None,
        };
        let Some(plan) = renews_as else {
            return self.end_due(sub, end, now).await;
        };
        self.renew_due(sub, plan, end, now).await
    }

    /// A period that ends without a renewal here: cancelled, downgraded to free, a
    /// one-time period over, or a renewal the provider did not get paid.
    async fn end_due(&self, sub: &SubscriptionRow, end: i64, now: i64) -> Result<bool, ApiError> {
        let pending = sub.pending_plan_type;
        // Stripe charges a renewal a while after the period ends: a plan it renews keeps
        // its access through the grace, unless it was cancelled.
        let renewed_by_provider = self.payments.renews_itself()
            && sub.billing_cycle == Some(BillingCycle::Monthly)
            && sub.provider_subscription_id.is_some()
            && pending != Some(PlanType::Free);
        let grace = self.terms.renewal_grace_ms;
        if renewed_by_provider && now < end + grace {
            return Ok(false);
        }
        // Cancelled, downgraded to free, a one-time period over, or a renewal unpaid.
        if !self.db.claim_due(&sub.user_id, end, now, now).await? {
            return Ok(false);
        }
        self.db.set_free(&sub.user_id, now).await?;
        tracing::info!(user = %sub.user_id, "subscription ended; now on free");
        Ok(true)
    }

    /// A renewal the scheduler charges (the demo provider), on `plan` (the same, or the
    /// lower one scheduled).
    async fn renew_due(
        &self,
        sub: &SubscriptionRow,
        plan: PlanType,
        end: i64,
        now: i64,
    ) -> Result<bool, ApiError> {
        let pending = sub.pending_plan_type;
        // A renewal's period follows the old one; after a long outage it starts now instead
        // of charging for time that passed unserved.
        let start = if self.period_end(BillingCycle::Monthly, end) > now {
            end
        } else {
            now
        };
        let new_end = self.period_end(BillingCycle::Monthly, start);
        if !self.db.claim_due(&sub.user_id, end, new_end, now).await? {
            return Ok(false);
        }
        let currency = sub.currency.unwrap_or(Currency::Eur);
        let method = sub.payment_method.clone().unwrap_or_else(|| "credit_card".into());
        let charge = Charge {
            plan,
            cycle: BillingCycle::Monthly,
            kind: PaymentKind::Renewal,
            currency,
            payment_method: &method,
            idempotency_key: None,
            period: Some((start, new_end)),
        };
        let payment = self.new_payment(&sub.user_id, charge).await?;
        self.db.insert_payment(&payment).await?;
        let paid = self.payments.charge_renewal(&payment).await?;
        self.db
            .close_payment(
                &payment.id,
                if paid {
                    PaymentStatus::Succeeded
                } else {
                    PaymentStatus::Failed
                },
                now,
            )
            .await?;
        if !paid {
            self.db.set_free(&sub.user_id, now).await?;
            tracing::warn!(user = %sub.user_id, "renewal declined; now on free");
            return Ok(true);
        }
        if pending.is_some() {
            self.db.switch_plan(&sub.user_id, plan, start).await?;
        }
        if let Err(e) = self.issue_invoice(&payment.id).await {
            tracing::error!(payment = %payment.id, error = ?e, "issuing an invoice; the scheduler will retry");
        }
        tracing::info!(user = %sub.user_id, plan = plan.as_str(), "subscription renewed");
        Ok(true)
    }
}
