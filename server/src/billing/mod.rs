//! Billing: plans bought and renewed (SPEC §4), payments through a provider, invoices,
//! EU VAT and its VIES checks. [`Billing`] holds what these rules need and nothing of the
//! rest of the server; the HTTP handlers, the scheduler and account deletion call it.
//!
//! Each file adds the methods of one area to [`Billing`] and imports only this file and
//! the leaves (`providers`, `vat`, `vies`, `huf_rate`); this file imports the leaves for the parts the
//! service holds, and the leaves import nothing of the service, so the plan catalogue
//! (which holds the VAT rates) and the stored billing info can use them. Calls between
//! the areas run one way too: `subscriptions` issues `invoices`, `stripe_events`
//! completes `subscriptions`' payments, `payments` (reading them, the demo checkout) goes
//! through `stripe_events`; `refunds` issues `invoices` (credit notes), and
//! `stripe_events` records the refunds made in Stripe's dashboard through `refunds`;
//! `vat_checks` asks VIES for `subscriptions` and the settings; `suspension` changes
//! renewals through `subscriptions`' provider call.

pub mod huf_rate;
pub mod invoices;
pub mod payments;
pub mod providers;
pub mod refunds;
pub mod stripe_events;
pub mod subscriptions;
pub mod suspension;
pub mod vat;
pub mod vat_checks;
pub mod vies;

use std::sync::Arc;

use chat_contract::states::BillingCycle;
use chrono::{DateTime, Months};
use secrecy::SecretString;

use crate::announce::Announcer;
use crate::clock::SharedClock;
use crate::config::Settings;
use crate::db::billing::BillingRow;
use crate::db::Db;
use crate::mail::Mailer;
use crate::plans::Catalogue;
use huf_rate::HufRates;
use providers::PaymentProvider;
use vat::BuyerVat;
use vies::Vies;

/// The seller on invoices; `country` is also where domestic VAT applies.
struct Seller {
    name: String,
    address: String,
    vat_number: String,
    country: String,
}

/// The settings billing reads, copied once at start-up.
struct Terms {
    seller: Seller,
    webhook_secret: SecretString,
    /// How old a webhook signature may be (s).
    webhook_tolerance_secs: i64,
    /// How long a plan the provider renews keeps its access past its end date (ms).
    renewal_grace_ms: i64,
    /// How old a VIES check a checkout still rests on (ms).
    vies_max_age_ms: i64,
}

/// The billing service. Cheap to share: every part is a handle.
pub struct Billing {
    db: Db,
    clock: SharedClock,
    catalogue: Arc<Catalogue>,
    payments: Arc<dyn PaymentProvider>,
    vies: Vies,
    huf_rates: HufRates,
    mailer: Mailer,
    /// Tells the user's tabs of a plan change or a new VIES check.
    announce: Arc<Announcer>,
    terms: Terms,
    /// Refunds made by this instance, one at a time: a double click's twin waits, then finds
    /// the first one's refund by its key instead of asking the provider again, and Stripe's
    /// report of a refund of ours finds it stored (across instances, the provider's
    /// idempotency key and the refunds' unique keys do).
    refunding: tokio::sync::Mutex<()>,
}

/// What [`Billing::new`] takes besides the settings.
pub struct Parts {
    pub db: Db,
    pub clock: SharedClock,
    pub catalogue: Arc<Catalogue>,
    pub payments: Arc<dyn PaymentProvider>,
    pub mailer: Mailer,
    pub announce: Arc<Announcer>,
}

impl Billing {
    pub fn new(parts: Parts, settings: &Settings) -> Billing {
        let (billing, invoice) = (&settings.billing, &settings.invoice);
        Billing {
            db: parts.db,
            clock: parts.clock,
            catalogue: parts.catalogue,
            payments: parts.payments,
            vies: Vies::new(billing),
            huf_rates: HufRates::new(billing),
            mailer: parts.mailer,
            announce: parts.announce,
            terms: Terms {
                seller: Seller {
                    name: invoice.seller_name.clone(),
                    address: invoice.seller_address.clone(),
                    vat_number: invoice.seller_vat_number.clone(),
                    country: invoice.seller_country.clone(),
                },
                webhook_secret: billing.stripe_webhook_secret.clone(),
                webhook_tolerance_secs: billing.webhook_tolerance_secs,
                renewal_grace_ms: billing.renewal_grace_hours * crate::clock::HOUR_MS,
                vies_max_age_ms: billing.vies_max_age_days * crate::clock::DAY_MS,
            },
            refunding: tokio::sync::Mutex::new(()),
        }
    }

    fn now(&self) -> i64 {
        self.clock.now_ms()
    }

    /// The provider that takes payments (its name, the web client's config).
    pub fn provider(&self) -> &dyn PaymentProvider {
        self.payments.as_ref()
    }

    /// The country of the seller, where domestic VAT applies.
    pub fn seller_country(&self) -> &str {
        &self.terms.seller.country
    }

    /// The VAT `billing` pays to this server's seller.
    pub fn vat_for(&self, billing: Option<&BillingRow>) -> BuyerVat {
        self.catalogue.vat.for_buyer(&self.terms.seller.country, billing)
    }

    /// Forints for one euro on `day`, as invoices take it (MNB's rate, else the operator's
    /// fallback); `None` when neither is known. The operator's stats convert with it.
    pub async fn huf_per_eur(&self, day: chrono::NaiveDate) -> Option<f64> {
        self.huf_rates.rate_for(day).await.map(|(rate, _, _)| rate)
    }

    /// The end of a period of `cycle` starting at `start`.
    pub fn period_end(&self, cycle: BillingCycle, start: i64) -> i64 {
        if cycle == BillingCycle::OneTime {
            return start + self.catalogue.one_time_days * crate::clock::DAY_MS;
        }
        DateTime::from_timestamp_millis(start)
            .and_then(|t| t.checked_add_months(Months::new(1)))
            .map_or(start + 30 * crate::clock::DAY_MS, |t| t.timestamp_millis())
    }
}
