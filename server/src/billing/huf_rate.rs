//! The VAT of a Hungarian seller's EUR invoice in forints. Hungarian VAT law asks an
//! invoice in another currency to state its VAT in HUF too, at the central bank's (MNB)
//! rate of the day the supply happened (the payment's day; on a day with no published
//! rate, the last one before it). The rate is asked of MNB's public web service
//! (`billing.huf_rate_url`, a stub in tests), with an operator-set fallback
//! (`billing.huf_rate_fallback`) when it does not answer, and kept with the invoice: the
//! invoice reads the same in 8 years, whatever the rate source says then.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use chrono::NaiveDate;
use serde::{Deserialize, Serialize};

use crate::config::BillingSettings;

/// Days before the supply a published rate is looked for (weekends, holidays).
const LOOK_BACK_DAYS: i64 = 10;

/// Where the rate came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Source {
    /// Published by MNB for `rate_date`.
    Mnb,
    /// MNB did not answer: the operator's `billing.huf_rate_fallback`.
    Fallback,
}

/// What an invoice keeps (JSON in `invoices.huf_vat`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HufVat {
    /// Forints for one euro.
    pub rate: f64,
    /// The day the rate is of (`YYYY-MM-DD`); for a fallback, the supply's day.
    pub rate_date: String,
    pub source: Source,
    /// The invoice's VAT in whole forints (negative on a credit note).
    pub vat_huf: i64,
}

impl HufVat {
    /// The VAT of `vat_minor` euro cents at this rate, in whole forints.
    pub fn at(rate: f64, rate_date: String, source: Source, vat_minor: i64) -> HufVat {
        HufVat {
            rate,
            rate_date,
            source,
            vat_huf: (vat_minor as f64 / 100.0 * rate).round() as i64,
        }
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a rate serializes")
    }

    /// Written by this server only: unreadable JSON counts as none.
    pub fn from_json(json: Option<&str>) -> Option<HufVat> {
        json.and_then(|j| serde_json::from_str(j).ok())
    }
}

pub struct HufRates {
    client: reqwest::Client,
    /// Empty: MNB is not asked (the fallback alone).
    url: String,
    fallback: Option<f64>,
    /// Published rates never change: each day is asked once per process.
    known: Mutex<HashMap<NaiveDate, (NaiveDate, f64)>>,
}

impl HufRates {
    pub fn new(settings: &BillingSettings) -> HufRates {
        let timeout = Duration::from_secs(settings.huf_rate_timeout_secs.max(1));
        HufRates {
            client: reqwest::Client::builder()
                .timeout(timeout)
                .connect_timeout(timeout)
                .build()
                .expect("a client of fixed settings builds"),
            url: settings.huf_rate_url.trim().to_owned(),
            fallback: Some(settings.huf_rate_fallback).filter(|r| r.is_finite() && *r > 0.0),
            known: Mutex::new(HashMap::new()),
        }
    }

    /// The rate for a supply on `day`: MNB's, else the fallback, else `None` (logged: the
    /// operator must set one).
    pub async fn rate_for(&self, day: NaiveDate) -> Option<(f64, String, Source)> {
        let cached = self.known.lock().expect("rates lock").get(&day).copied();
        let published = match cached {
            Some(found) => Some(found),
            None => self.ask_mnb(day).await,
        };
        if let Some((rate_day, rate)) = published {
            self.known
                .lock()
                .expect("rates lock")
                .insert(day, (rate_day, rate));
            return Some((rate, rate_day.to_string(), Source::Mnb));
        }
        match self.fallback {
            Some(rate) => {
                tracing::warn!(%day, rate, "MNB gave no EUR rate: the invoice uses billing.huf_rate_fallback");
                Some((rate, day.to_string(), Source::Fallback))
            }
            None => {
                tracing::error!(
                    %day,
                    "MNB gave no EUR rate and billing.huf_rate_fallback is not set: the invoice states no VAT in HUF"
                );
                None
            }
        }
    }

    /// MNB's EUR rate of `day`, or of the last day before it with one.
    async fn ask_mnb(&self, day: NaiveDate) -> Option<(NaiveDate, f64)> {
        if self.url.is_empty() {
            return None;
        }
        let start = day - chrono::Duration::days(LOOK_BACK_DAYS);
        let envelope = format!(
            r#"<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/" xmlns:web="http://www.mnb.hu/webservices/"><soap:Body><web:GetExchangeRates><web:startDate>{start}</web:startDate><web:endDate>{day}</web:endDate><web:currencyNames>EUR</web:currencyNames></web:GetExchangeRates></soap:Body></soap:Envelope>"#
        );
        let sent = self
            .client
            .post(&self.url)
            .header("Content-Type", "text/xml; charset=utf-8")
            .header(
                "SOAPAction",
                "\"http://www.mnb.hu/webservices/MNBArfolyamServiceSoap/GetExchangeRates\"",
            )
            .body(envelope)
            .send()
            .await;
        let body = match sent {
            Ok(response) if response.status().is_success() => response.text().await.ok(),
            Ok(response) => {
                tracing::warn!(status = %response.status(), "MNB's rate service refused");
                None
            }
            Err(e) => {
                tracing::warn!(error = %e, "MNB's rate service did not answer");
                None
            }
        }?;
        let found = latest_eur_rate(&body, day);
        if found.is_none() {
            tracing::warn!(%day, "MNB's answer holds no EUR rate for the day or the days before");
        }
        found
    }
}

/// The EUR rate of the latest day not after `day` in MNB's answer: a SOAP envelope whose
/// `GetExchangeRatesResult` is an XML text (escaped) of
/// `<Day date="2026-11-26"><Rate unit="1" curr="EUR">391,25</Rate></Day>` entries.
fn latest_eur_rate(envelope: &str, day: NaiveDate) -> Option<(NaiveDate, f64)> {
    let inner = element_text(envelope, "GetExchangeRatesResult")?;
    let mut reader = quick_xml::Reader::from_str(&inner);
    let mut best: Option<(NaiveDate, f64)> = None;
    let mut current_day: Option<NaiveDate> = None;
    let mut in_eur_rate: Option<f64> = None;
    loop {
        match reader.read_event().ok()? {
            quick_xml::events::Event::Start(e) => match e.name().as_ref() {
                b"Day" => current_day = attribute(&e, b"date").and_then(|d| d.parse().ok()),
                b"Rate" if attribute(&e, b"curr").as_deref() == Some("EUR") => {
                    in_eur_rate = attribute(&e, b"unit").and_then(|u| u.parse().ok());
                }
                _ => {}
            },
            quick_xml::events::Event::Text(t) => {
                if let (Some(unit), Some(date)) = (in_eur_rate, current_day) {
                    let text = t.decode().ok()?;
                    let rate: Option<f64> = text.trim().replace(',', ".").parse().ok();
                    if let Some(rate) = rate.map(|r| r / unit).filter(|r| r.is_finite() && *r > 0.0) {
                        if date <= day && best.is_none_or(|(d, _)| date > d) {
                            best = Some((date, rate));
                        }
                    }
                }
            }
            quick_xml::events::Event::End(e) if e.name().as_ref() == b"Rate" => in_eur_rate = None,
            quick_xml::events::Event::Eof => break,
            _ => {}
        }
    }
    best
}

/// The unescaped text of the first `<name>` element (any namespace prefix) of `xml`.
fn element_text(xml: &str, name: &str) -> Option<String> {
    let mut reader = quick_xml::Reader::from_str(xml);
    let mut inside = false;
    let mut text = String::new();
    loop {
        match reader.read_event().ok()? {
            quick_xml::events::Event::Start(e) if e.local_name().as_ref() == name.as_bytes() => inside = true,
            quick_xml::events::Event::Text(t) if inside => text.push_str(&t.decode().ok()?),
            quick_xml::events::Event::GeneralRef(r) if inside => {
                let c = match r.resolve_char_ref().ok()? {
                    Some(c) => c,
                    None => match &*r {
                        b"lt" => '<',
                        b"gt" => '>',
                        b"amp" => '&',
                        b"quot" => '"',
                        b"apos" => '\'',
                        _ => return None,
                    },
                };
                text.push(c);
            }
            quick_xml::events::Event::End(e) if inside && e.local_name().as_ref() == name.as_bytes() => {
                return Some(text)
            }
            quick_xml::events::Event::Eof => return None,
            _ => {}
        }
    }
}

fn attribute(e: &quick_xml::events::BytesStart<'_>, name: &[u8]) -> Option<String> {
    e.attributes()
        .flatten()
        .find(|a| a.key.as_ref() == name)
        .and_then(|a| String::from_utf8(a.value.into_owned()).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(days: &str) -> String {
        let inner = format!("<MNBExchangeRates>{days}</MNBExchangeRates>")
            .replace('<', "&lt;")
            .replace('>', "&gt;");
        format!(
            r#"<?xml version="1.0" encoding="utf-8"?><s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><GetExchangeRatesResponse xmlns="http://www.mnb.hu/webservices/"><GetExchangeRatesResult>{inner}</GetExchangeRatesResult></GetExchangeRatesResponse></s:Body></s:Envelope>"#
        )
    }

    fn day(text: &str) -> NaiveDate {
        text.parse().unwrap()
    }

    #[test]
    fn the_latest_published_rate_not_after_the_day_is_taken() {
        let body = answer(
            r#"<Day date="2026-11-20"><Rate unit="1" curr="EUR">390,10</Rate></Day><Day date="2026-11-19"><Rate unit="1" curr="EUR">389,00</Rate></Day>"#,
        );
        // A Sunday: Friday's rate.
        assert_eq!(
            latest_eur_rate(&body, day("2026-11-22")),
            Some((day("2026-11-20"), 390.10))
        );
        assert_eq!(
            latest_eur_rate(&body, day("2026-11-19")),
            Some((day("2026-11-19"), 389.00))
        );
        assert_eq!(latest_eur_rate(&body, day("2026-11-18")), None);
    }

    #[test]
    fn a_rate_per_hundred_units_and_other_currencies_are_read_right() {
        let body = answer(
            r#"<Day date="2026-11-20"><Rate unit="100" curr="JPY">250,00</Rate><Rate unit="1" curr="EUR">391,25</Rate></Day>"#,
        );
        assert_eq!(
            latest_eur_rate(&body, day("2026-11-20")),
            Some((day("2026-11-20"), 391.25))
        );
        let no_eur = answer(r#"<Day date="2026-11-20"><Rate unit="1" curr="USD">350,00</Rate></Day>"#);
        assert_eq!(latest_eur_rate(&no_eur, day("2026-11-20")), None);
        assert_eq!(latest_eur_rate("not xml at all <", day("2026-11-20")), None);
    }

    #[test]
    fn the_vat_is_rounded_to_whole_forints() {
        let huf = HufVat::at(391.25, "2026-11-20".into(), Source::Mnb, 270);
        assert_eq!(huf.vat_huf, 1056); // 2.70 € × 391.25 = 1056.375
        let credit = HufVat::at(391.25, "2026-11-20".into(), Source::Mnb, -270);
        assert_eq!(credit.vat_huf, -1056);
        assert_eq!(HufVat::from_json(Some(&huf.to_json())), Some(huf));
    }
}
