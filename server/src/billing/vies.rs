//! The EU's VIES service: whether a VAT number is registered, asked before a company in
//! another member state is reverse charged (docs/payments.md). VIES is often slow or
//! down for one member state; no answer in `billing.vies_timeout_secs` is an
//! `unavailable` check, never an error, so saving billing info or a checkout goes on
//! with domestic VAT.

use std::time::Duration;

use chat_contract::views::{VatCheck, VatCheckStatus};
use serde::{Deserialize, Serialize};

use crate::config::BillingSettings;

/// VIES's answer as kept on the billing info, the payment and the invoice (JSON).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Check {
    pub vat_number: String,
    pub status: VatCheckStatus,
    /// When this server asked (ms).
    pub checked_at: i64,
    pub request_date: Option<String>,
    pub name: Option<String>,
    pub address: Option<String>,
    pub error: Option<String>,
}

impl Check {
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a check serializes")
    }

    /// Written by this server only: unreadable JSON counts as no check (domestic VAT).
    pub fn from_json(json: Option<&str>) -> Option<Check> {
        json.and_then(|j| serde_json::from_str(j).ok())
    }

    pub fn view(&self) -> VatCheck {
        VatCheck {
            vat_number: self.vat_number.clone(),
            status: self.status,
            checked_at: crate::clock::iso(self.checked_at),
            request_date: self.request_date.clone(),
            name: self.name.clone(),
            address: self.address.clone(),
            error: self.error.clone(),
        }
    }

    fn unavailable(vat_number: &str, now: i64, error: &str) -> Check {
        Check {
            vat_number: vat_number.to_owned(),
            status: VatCheckStatus::Unavailable,
            checked_at: now,
            request_date: None,
            name: None,
            address: None,
            error: Some(error.to_owned()),
        }
    }
}

pub struct Vies {
    client: reqwest::Client,
    url: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Request<'a> {
    country_code: &'a str,
    vat_number: &'a str,
}

/// `POST /check-vat-number` answers `valid`; the per-state `GET` answers `isValid` and
/// `userError`. Failures come as `actionSucceed: false` with `errorWrappers`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Answer {
    #[serde(alias = "isValid")]
    valid: Option<bool>,
    request_date: Option<String>,
    name: Option<String>,
    address: Option<String>,
    user_error: Option<String>,
    #[serde(default)]
    error_wrappers: Vec<ErrorWrapper>,
}

#[derive(Deserialize)]
struct ErrorWrapper {
    error: Option<String>,
}

/// VIES writes `---` where a member state does not share a trader's details.
fn shared(value: Option<String>) -> Option<String> {
    value
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty() && v != "---")
}

impl Vies {
    pub fn new(settings: &BillingSettings) -> Vies {
        let timeout = Duration::from_secs(settings.vies_timeout_secs.max(1));
        Vies {
            client: reqwest::Client::builder()
                .timeout(timeout)
                .connect_timeout(timeout)
                .build()
                .expect("a client of fixed settings builds"),
            url: settings.vies_url.trim_end_matches('/').to_owned(),
        }
    }

    /// What VIES says of `vat_number` (compact, its prefix first: `DE123456789`).
    pub async fn check(&self, vat_number: &str, now: i64) -> Check {
        let (prefix, rest) = vat_number.split_at(vat_number.len().min(2));
        let request = Request {
            country_code: prefix,
            vat_number: rest,
        };
        let sent = self
            .client
            .post(format!("{}/check-vat-number", self.url))
            .json(&request)
            .send()
            .await;
        let response = match sent {
            Ok(response) => response,
            Err(e) => {
                tracing::warn!(error = %e, vat_number, "VIES did not answer");
                return Check::unavailable(vat_number, now, "unreachable");
            }
        };
        let succeeded = response.status().is_success();
        let answer = match response.json::<Answer>().await {
            Ok(answer) => answer,
            Err(e) => {
                tracing::warn!(error = %e, vat_number, "VIES's answer is unreadable");
                let error = if e.is_timeout() {
                    "unreachable"
                } else {
                    "bad_answer"
                };
                return Check::unavailable(vat_number, now, error);
            }
        };
        let error = answer
            .error_wrappers
            .into_iter()
            .find_map(|w| w.error)
            .or(answer.user_error.filter(|e| e != "VALID" && e != "INVALID"));
        let status = match (error.as_deref(), answer.valid) {
            // The member state's own check of the number's form: as good as not registered.
            (Some("INVALID_INPUT"), _) => VatCheckStatus::Invalid,
            (None, Some(true)) if succeeded => VatCheckStatus::Valid,
            (None, Some(false)) if succeeded => VatCheckStatus::Invalid,
            _ => VatCheckStatus::Unavailable,
        };
        if status == VatCheckStatus::Unavailable {
            tracing::warn!(vat_number, error = ?error, "VIES gave no answer");
        }
        Check {
            vat_number: vat_number.to_owned(),
            status,
            checked_at: now,
            request_date: answer.request_date,
            name: shared(answer.name),
            address: shared(answer.address),
            error: match status {
                VatCheckStatus::Unavailable => Some(error.unwrap_or_else(|| "bad_answer".into())),
                _ => error,
            },
        }
    }
}
