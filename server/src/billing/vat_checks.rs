//! The buyer's billing info: its fields, a VAT number of the right shape, and VIES's
//! word on it when it could make the buyer reverse charged (docs/payments.md).

use chat_contract::limits::MAX_BILLING_FIELD_CHARS;
use chat_contract::views::{BillingType, VatCheckStatus};
use serde::Deserialize;

use super::vies::Check;
use super::Billing;
use crate::db::billing::BillingRow;
use crate::domain::bounded_text;
use crate::error::{ApiError, ErrorCode, Result};

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct BillingFields {
    billing_type: Option<String>,
    name: Option<String>,
    company_name: Option<String>,
    address: Option<String>,
    city: Option<String>,
    postal_code: Option<String>,
    country: Option<String>,
    vat_number: Option<String>,
}

/// `PUT /api/settings/billing-info`'s body: the fields, and the type beside them or
/// among them.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BillingChange {
    billing_info: Option<BillingFields>,
    billing_type: Option<String>,
}

impl BillingChange {
    /// Billing info is stored whole: the required fields of its type must all be there.
    /// Company name and VAT number belong to company billing only and are dropped
    /// otherwise. The country is an ISO code (VAT depends on it).
    fn into_row(self) -> Result<BillingRow> {
        let info = self.billing_info.unwrap_or_default();
        let billing_type = self.billing_type.or(info.billing_type).unwrap_or_default();
        let billing_type = BillingType::parse(&billing_type).ok_or(ErrorCode::InvalidBillingType)?;
        let company = billing_type == BillingType::Company;
        Ok(BillingRow {
            billing_type,
            name: required(info.name.as_deref(), "name")?,
            company_name: company
                .then(|| required(info.company_name.as_deref(), "companyName"))
                .transpose()?,
            address: required(info.address.as_deref(), "address")?,
            city: required(info.city.as_deref(), "city")?,
            postal_code: required(info.postal_code.as_deref(), "postalCode")?,
            country: country(info.country.as_deref())?,
            vat_number: company
                .then(|| required(info.vat_number.as_deref(), "vatNumber"))
                .transpose()?,
            vat_check: None,
        })
    }
}

fn required(value: Option<&str>, field: &'static str) -> Result<String> {
    let value = value.map(str::trim).unwrap_or("");
    if value.is_empty() {
        return Err(ApiError::field(ErrorCode::FieldRequired, field));
    }
    bounded_text(value, field, MAX_BILLING_FIELD_CHARS as usize)
}

fn country(value: Option<&str>) -> Result<String> {
    let value = required(value, "country")?;
    super::vat::country_code(&value).ok_or_else(|| ApiError::field(ErrorCode::InvalidCountry, "country"))
}

impl Billing {
    /// Stores `change` as the user's billing info: a company in the EU needs a VAT number
    /// of its country's format, stored compact (`DE123456789`); a Hungarian company may
    /// give its domestic tax number (`12345678-2-41`) instead; elsewhere any number is
    /// taken. A number that could be reverse charged is checked with VIES before it is
    /// stored, with the answer (`vatCheck` tells the buyer why they pay VAT if VIES did
    /// not confirm it).
    pub async fn put_billing_info(&self, user_id: &str, change: BillingChange) -> Result<BillingRow> {
        let row = change.into_row()?;
        let row = BillingRow {
            vat_number: row
                .vat_number
                .as_deref()
                .map(|n| self.vat_number(&row.country, n))
                .transpose()?,
            ..row
        };
        // Only valid input reaches VIES; its answer, whatever it is, is saved with the rest.
        let row = BillingRow {
            vat_check: self.check_billing(&row).await.map(|c| c.to_json()),
            ..row
        };
        self.db.put_billing_info(user_id, &row, self.now()).await?;
        Ok(row)
    }

    fn vat_number(&self, country: &str, number: &str) -> Result<String> {
        let vat = &self.catalogue.vat;
        if !vat.is_eu(country) {
            return Ok(number.to_owned());
        }
        if country == "HU" && super::vat::is_hungarian_tax_number(number) {
            return Ok(number.to_owned());
        }
        vat.eu_vat_number(country, number)
            .ok_or_else(|| ApiError::field(ErrorCode::VatNumberInvalid, "vatNumber"))
    }

    /// The number of `billing` that VIES could confirm for reverse charge, if any.
    fn reverse_charge_number(&self, billing: &BillingRow) -> Option<String> {
        self.catalogue
            .vat
            .reverse_charge_number(&self.terms.seller.country, billing)
    }

    /// The check of `billing`'s VAT number, when that number could make it reverse charged:
    /// VIES is asked now (it never errs: no answer is `unavailable`).
    async fn check_billing(&self, billing: &BillingRow) -> Option<Check> {
        let number = self.reverse_charge_number(billing)?;
        Some(self.vies.check(&number, self.now()).await)
    }

    /// `billing` with a check a checkout can rest on: VIES is asked again when the stored
    /// check is missing, for another number, unavailable, or older than
    /// `billing.vies_max_age_days`. A new answer is stored on the billing info (unless it
    /// changed meanwhile) and the user's tabs are told.
    pub(super) async fn recheck_if_stale(&self, user_id: &str, billing: BillingRow) -> BillingRow {
        let Some(number) = self.reverse_charge_number(&billing) else {
            return billing;
        };
        let now = self.now();
        let max_age = self.terms.vies_max_age_ms;
        let fresh = billing.vies_check().is_some_and(|c| {
            c.vat_number == number && c.status != VatCheckStatus::Unavailable && now - c.checked_at < max_age
        });
        if fresh {
            return billing;
        }
        let check = self.vies.check(&number, now).await;
        let json = check.to_json();
        match self.db.set_vat_check(user_id, &number, &json).await {
            Ok(true) => self.announce.billing_info(user_id).await,
            Ok(false) => {}
            // The payment still rests on this check; it is kept with it.
            Err(e) => tracing::warn!(error = ?e, "storing a new VIES check"),
        }
        BillingRow {
            vat_check: Some(json),
            ..billing
        }
    }
}
