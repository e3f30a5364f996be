//! EU VAT (`config/vat.toml`): which rate a buyer pays, and whether a VAT number has the
//! shape of its country's numbers. Reverse charge also needs VIES's word that the number
//! is registered; that check is asked for in [`super::vat_checks`] and only read here
//! (docs/payments.md).

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Context;
use serde::Deserialize;

use crate::db::billing::BillingRow;
use chat_contract::views::VatCheckStatus;

const EMBEDDED_VAT: &str = include_str!("../../../config/vat.toml");

/// Every ISO 3166-1 alpha-2 code, plus XK (Kosovo), which billing addresses use.
const ISO_COUNTRIES: &str = "AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ \
     BL BM BN BO BQ BR BS BT BV BW BY BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ \
     DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT \
     GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP KE KG KH KI KM KN KP KR KW KY \
     KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX \
     MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS \
     RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM TN \
     TO TR TT TV TW TZ UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS XK YE YT ZA ZM ZW";

/// An ISO country code as a billing address holds it, upper-cased; `None` if unknown.
pub fn country_code(value: &str) -> Option<String> {
    let code = value.trim().to_ascii_uppercase();
    (code.len() == 2 && ISO_COUNTRIES.split_ascii_whitespace().any(|c| c == code)).then_some(code)
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct CountryDef {
    rate: f64,
    vat_prefix: String,
    vat_formats: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct VatFile {
    reverse_charge_note: String,
    outside_eu_note: String,
    countries: BTreeMap<String, CountryDef>,
}

/// How VAT applies to one payment; stored on the payment and its invoice.
pub use chat_contract::views::VatTreatment as Treatment;

/// The VAT one buyer pays.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BuyerVat {
    pub rate: f64,
    pub treatment: Treatment,
}

#[derive(Debug, Clone)]
pub struct VatRules {
    countries: BTreeMap<String, CountryDef>,
    pub reverse_charge_note: String,
    pub outside_eu_note: String,
}

impl VatRules {
    /// `$CONFIG_DIR/vat.toml` if present, else the embedded copy.
    pub fn load(config_dir: &Path) -> anyhow::Result<VatRules> {
        let file = config_dir.join("vat.toml");
        match std::fs::read_to_string(&file) {
            Ok(text) => Self::parse(&text).with_context(|| format!("in {}", file.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Self::parse(EMBEDDED_VAT),
            Err(e) => Err(e).with_context(|| format!("reading {}", file.display())),
        }
    }

    pub fn embedded() -> VatRules {
        Self::parse(EMBEDDED_VAT).expect("embedded config/vat.toml is valid")
    }

    pub fn parse(text: &str) -> anyhow::Result<VatRules> {
        let file: VatFile = toml::from_str(text).context("parsing the VAT rates")?;
        for (code, def) in &file.countries {
            anyhow::ensure!(
                country_code(code).as_deref() == Some(code.as_str()),
                "{code:?} is not an upper-case ISO country code"
            );
            anyhow::ensure!(
                (0.0..1.0).contains(&def.rate),
                "the rate of {code} must be between 0 and 1"
            );
            anyhow::ensure!(!def.vat_formats.is_empty(), "{code} lists no vat_formats");
        }
        Ok(VatRules {
            countries: file.countries,
            reverse_charge_note: file.reverse_charge_note,
            outside_eu_note: file.outside_eu_note,
        })
    }

    pub fn is_eu(&self, country: &str) -> bool {
        self.countries.contains_key(country)
    }

    /// The standard rate of an EU country.
    pub fn rate(&self, country: &str) -> Option<f64> {
        self.countries.get(country).map(|c| c.rate)
    }

    /// The VAT number in its compact form (`DE123456789`) if it has the shape of
    /// `country`'s numbers, prefix included; `None` otherwise or outside the EU.
    pub fn eu_vat_number(&self, country: &str, number: &str) -> Option<String> {
        let def = self.countries.get(country)?;
        let compact: String = number
            .chars()
            .filter(|c| !matches!(c, ' ' | '.' | '-'))
            .map(|c| c.to_ascii_uppercase())
            .collect();
        let rest = compact.strip_prefix(def.vat_prefix.as_str())?;
        def.vat_formats
            .iter()
            .any(|format| matches_format(format, rest))
            .then_some(compact)
    }

    /// What `billing` pays when the seller is in `seller_country`. Without billing info,
    /// or with a country stored before countries were checked, the seller's rate is the
    /// estimate (paying needs billing info, so it is never charged that way to a new buyer).
    pub fn for_buyer(&self, seller_country: &str, billing: Option<&BillingRow>) -> BuyerVat {
        let seller_rate = BuyerVat {
            rate: self.rate(seller_country).unwrap_or(0.0),
            treatment: Treatment::Standard,
        };
        let Some(billing) = billing else {
            return seller_rate;
        };
        let Some(country) = country_code(&billing.country) else {
            return seller_rate;
        };
        let Some(rate) = self.rate(&country) else {
            return BuyerVat {
                rate: 0.0,
                treatment: Treatment::OutsideEu,
            };
        };
        // Reverse charge rests on VIES having confirmed this very number; without that
        // (invalid, VIES down, never checked) the buyer pays as a consumer of its country.
        let confirmed = self
            .reverse_charge_number(seller_country, billing)
            .zip(billing.vies_check())
            .is_some_and(|(number, check)| {
                check.vat_number == number && check.status == VatCheckStatus::Valid
            });
        if confirmed {
            return BuyerVat {
                rate: 0.0,
                treatment: Treatment::ReverseCharge,
            };
        }
        BuyerVat {
            rate,
            treatment: Treatment::Standard,
        }
    }

    /// The compact VAT number that makes `billing` reverse charged once VIES confirms it:
    /// a company in another member state than `seller_country`, with a number of its
    /// country's shape. `None` when no VIES answer could change its VAT.
    pub fn reverse_charge_number(&self, seller_country: &str, billing: &BillingRow) -> Option<String> {
        let country = country_code(&billing.country)?;
        if billing.billing_type != chat_contract::views::BillingType::Company || country == seller_country {
            return None;
        }
        self.eu_vat_number(&country, billing.vat_number.as_deref()?)
    }
}

/// `#` a digit, `@` a letter, `?` either; any other character stands for itself.
fn matches_format(format: &str, value: &str) -> bool {
    format.chars().count() == value.chars().count()
        && format.chars().zip(value.chars()).all(|(f, v)| match f {
            '#' => v.is_ascii_digit(),
            '@' => v.is_ascii_uppercase(),
            '?' => v.is_ascii_digit() || v.is_ascii_uppercase(),
            literal => v == literal,
        })
}

/// The Hungarian domestic tax number (adószám, `12345678-1-42`), which Hungarian
/// companies put on invoices beside or instead of their EU number.
pub fn is_hungarian_tax_number(number: &str) -> bool {
    matches_format("########-#-##", number.trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn billing(kind: &str, country: &str, vat_number: Option<&str>) -> BillingRow {
        BillingRow {
            billing_type: chat_contract::views::BillingType::parse(kind).unwrap(),
            name: "Ann".into(),
            company_name: (kind == "company").then(|| "Acme".into()),
            address: "Street 1".into(),
            city: "Town".into(),
            postal_code: "1011".into(),
            country: country.into(),
            vat_number: vat_number.map(Into::into),
            vat_check: None,
        }
    }

    /// `b` as VIES answered `status` for `number` on day 0.
    fn checked(b: BillingRow, number: &str, status: VatCheckStatus) -> BillingRow {
        let check = crate::billing::vies::Check {
            vat_number: number.into(),
            status,
            checked_at: 0,
            request_date: None,
            name: None,
            address: None,
            error: None,
        };
        BillingRow {
            vat_check: Some(check.to_json()),
            ..b
        }
    }

    #[test]
    fn the_embedded_rates_cover_the_27_member_states() {
        let vat = VatRules::embedded();
        assert_eq!(vat.countries.len(), 27);
        assert_eq!(vat.rate("HU"), Some(0.27));
        assert_eq!(vat.rate("DE"), Some(0.19));
        assert_eq!(vat.rate("US"), None);
    }

    #[test]
    fn each_buyer_pays_the_vat_of_their_case() {
        let vat = VatRules::embedded();
        let of = |b: BillingRow| vat.for_buyer("HU", Some(&b));
        let standard = |rate| BuyerVat {
            rate,
            treatment: Treatment::Standard,
        };
        assert_eq!(of(billing("private", "HU", None)), standard(0.27));
        assert_eq!(of(billing("private", "de", None)), standard(0.19));
        let german = || billing("company", "DE", Some("DE 123 456 789"));
        let valid = checked(german(), "DE123456789", VatCheckStatus::Valid);
        assert_eq!(of(valid).treatment, Treatment::ReverseCharge);
        // Well-formed is not enough: without VIES's word the company pays as a consumer.
        assert_eq!(of(german()), standard(0.19));
        for status in [VatCheckStatus::Invalid, VatCheckStatus::Unavailable] {
            assert_eq!(of(checked(german(), "DE123456789", status)), standard(0.19));
        }
        // A check of the number it had before does not carry over.
        assert_eq!(
            of(checked(german(), "DE999999999", VatCheckStatus::Valid)),
            standard(0.19)
        );
        // A Hungarian company is never reverse charged by a Hungarian seller.
        let hungarian = billing("company", "HU", Some("HU12345678"));
        assert_eq!(
            of(checked(hungarian, "HU12345678", VatCheckStatus::Valid)),
            standard(0.27)
        );
        assert_eq!(of(billing("company", "DE", Some("DE12345678"))), standard(0.19));
        // A number of another country does not make a German company reverse charged.
        assert_eq!(of(billing("company", "DE", Some("AT U12345678"))), standard(0.19));
        assert_eq!(of(billing("company", "HU", Some("HU12345678"))), standard(0.27));
        assert_eq!(
            of(billing("company", "US", Some("12-3456789"))),
            BuyerVat {
                rate: 0.0,
                treatment: Treatment::OutsideEu
            }
        );
        assert_eq!(vat.for_buyer("HU", None), standard(0.27));
        assert_eq!(of(billing("private", "Hungary", None)), standard(0.27));
    }

    #[test]
    fn vat_numbers_need_the_country_prefix_and_shape() {
        let vat = VatRules::embedded();
        assert_eq!(
            vat.eu_vat_number("AT", "atu12345678").as_deref(),
            Some("ATU12345678")
        );
        assert_eq!(
            vat.eu_vat_number("NL", "NL123456789B01").as_deref(),
            Some("NL123456789B01")
        );
        assert_eq!(
            vat.eu_vat_number("GR", "EL123456789").as_deref(),
            Some("EL123456789")
        );
        assert_eq!(
            vat.eu_vat_number("FR", "FR 1A 123456789").as_deref(),
            Some("FR1A123456789")
        );
        for (country, bad) in [
            ("DE", "123456789"),
            ("DE", "DE1234567890"),
            ("GR", "GR123456789"),
            ("NL", "NL123456789A01"),
            ("US", "US123"),
        ] {
            assert_eq!(vat.eu_vat_number(country, bad), None, "{country} {bad}");
        }
        assert!(is_hungarian_tax_number("12345678-2-41"));
        assert!(!is_hungarian_tax_number("12345678241"));
    }

    #[test]
    fn countries_are_iso_codes() {
        assert_eq!(country_code(" hu ").as_deref(), Some("HU"));
        assert_eq!(country_code("Hungary"), None);
        assert_eq!(country_code("QQ"), None);
        assert_eq!(ISO_COUNTRIES.split_ascii_whitespace().count(), 250);
    }

    #[test]
    fn a_rate_file_with_a_bad_country_is_refused() {
        let bad = EMBEDDED_VAT.replace("\nHU = {", "\nHungary = {");
        assert!(VatRules::parse(&bad).is_err());
    }
}
