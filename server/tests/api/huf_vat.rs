//! The VAT in HUF on a Hungarian seller's EUR invoices: at MNB's rate of the payment's
//! day (the last published before it), kept with the invoice and printed on its PDF; the
//! operator's fallback when MNB does not answer; nothing on a forint invoice.

use chrono::TimeZone;
use serde_json::{json, Value};

use crate::admin_refunds::refund;
use crate::helpers::{assert_ok, spawn_app_with, TestApp, TestUser};
use crate::invoices::pdf_text;
use crate::mnb_stub::{self, MnbStub};

async fn spawn_with_mnb(rate: &'static str, fallback: f64) -> (TestApp, MnbStub) {
    let (url, stub) = mnb_stub::start(rate);
    let app = spawn_app_with(move |s| {
        s.billing.huf_rate_url = url;
        s.billing.huf_rate_fallback = fallback;
    })
    .await;
    (app, stub)
}

/// Ann (Hungarian, private) buys base in `currency` on the demo checkout; her invoice.
async fn paid_invoice(app: &TestApp, email: &str, currency: &str) -> (TestUser, Value) {
    let ann = app.register_paying(email).await;
    let body = json!({"planType": "base", "currency": currency});
    let started = assert_ok(app.put_auth("/api/subscription/change", &ann.token, body).await).await;
    let id = started["payment"]["_id"].as_str().unwrap();
    app.pay_demo(&ann, id).await;
    let list = assert_ok(app.get_auth("/api/invoices", &ann.token).await).await;
    let invoice = list["data"][0].clone();
    (ann, invoice)
}

/// The day of the test clock's now in Budapest (the catalogue's timezone).
fn today(app: &TestApp) -> chrono::NaiveDate {
    chrono_tz::Europe::Budapest
        .timestamp_millis_opt(app.clock_now())
        .unwrap()
        .date_naive()
}

async fn pdf(app: &TestApp, user: &TestUser, invoice: &Value) -> String {
    let response = app
        .get_auth(invoice["pdfUrl"].as_str().unwrap(), &user.token)
        .await;
    assert_eq!(response.status(), 200);
    pdf_text(&response.bytes().await.unwrap())
}

#[actix_web::test]
async fn a_eur_invoice_states_its_vat_in_forints_at_mnbs_rate_of_the_payment_day() {
    let (app, mnb) = spawn_with_mnb("391,25", 0.0).await;
    let (ann, invoice) = paid_invoice(&app, "ann@example.com", "EUR").await;
    let day = today(&app);
    // Asked for EUR up to the payment's day, with days before it for weekends.
    let asked = mnb.requests();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0].1, day.to_string());
    assert_eq!(asked[0].2, "EUR");
    assert!(asked[0].0 < asked[0].1, "{asked:?}");
    // 1.35 € × 391.25 = 528.19: whole forints. The latest published day is taken.
    let previous = (day - chrono::Duration::days(1)).to_string();
    assert_eq!(
        invoice["hufVat"],
        json!({"rate": 391.25, "rateDate": previous, "source": "mnb", "vatHuf": 528}),
        "{invoice}"
    );
    let text = pdf(&app, &ann, &invoice).await;
    for expected in [
        "ÁFA forintban / VAT in HUF",
        "528 HUF",
        "1 EUR = 391.25 HUF",
        &previous,
        "MNB",
    ] {
        assert!(text.contains(expected), "{expected:?} missing from:\n{text}");
    }

    // The rate is kept with the invoice, and a day's rate is asked once.
    let (_, bob_invoice) = paid_invoice(&app, "bob@example.com", "EUR").await;
    assert_eq!(bob_invoice["hufVat"]["rate"], json!(391.25));
    assert_eq!(mnb.requests().len(), 1);
}

#[actix_web::test]
async fn mnb_down_takes_the_operators_fallback_rate_or_states_none() {
    let (app, mnb) = spawn_with_mnb("391,25", 400.0).await;
    mnb.down();
    let (ann, invoice) = paid_invoice(&app, "ann@example.com", "EUR").await;
    assert_eq!(
        invoice["hufVat"],
        json!({"rate": 400.0, "rateDate": today(&app).to_string(), "source": "fallback", "vatHuf": 540}),
        "{invoice}"
    );
    let text = pdf(&app, &ann, &invoice).await;
    assert!(
        text.contains("Exchange rate") && text.contains("540 HUF"),
        "{text}"
    );

    // No fallback set: the invoice is still issued, without the line (and an error logged).
    let (app, mnb) = spawn_with_mnb("391,25", 0.0).await;
    mnb.down();
    let (ann, invoice) = paid_invoice(&app, "ann@example.com", "EUR").await;
    assert_eq!(invoice["hufVat"], json!(null), "{invoice}");
    assert!(!pdf(&app, &ann, &invoice).await.contains("VAT in HUF"));
}

#[actix_web::test]
async fn a_forint_invoice_asks_no_rate_and_states_none() {
    let (app, mnb) = spawn_with_mnb("391,25", 0.0).await;
    let (ann, invoice) = paid_invoice(&app, "ann@example.com", "HUF").await;
    assert_eq!(invoice["currency"], json!("HUF"));
    assert_eq!(invoice["hufVat"], json!(null));
    assert!(mnb.requests().is_empty());
    assert!(!pdf(&app, &ann, &invoice).await.contains("VAT in HUF"));
}

#[actix_web::test]
async fn a_credit_note_states_its_vat_in_forints_at_the_rate_of_its_invoice() {
    let (app, mnb) = spawn_with_mnb("391,25", 0.0).await;
    let (ann, invoice) = paid_invoice(&app, "ann@example.com", "EUR").await;
    let root = app.register("Root", "root@example.com", "secret1").await;
    app.grant_admin("root@example.com").await;
    // MNB's rate moves on: the correction still takes the invoice's.
    *mnb.rate.lock().unwrap() = Some("400,00");
    let body = json!({"amount": 2.0, "reason": "two days of outage", "endPlan": false});
    let payment = invoice["paymentId"].as_str().unwrap();
    let refunded = assert_ok(refund(&app, &root, payment, body).await).await;
    let note = &refunded["data"]["creditNote"];
    // 2.00 € gross at 27 %: 0.43 € of VAT, × 391.25 = 168.24.
    assert_eq!(note["vatAmount"], json!(-0.43), "{note}");
    assert_eq!(
        note["hufVat"],
        json!({"rate": 391.25, "rateDate": invoice["hufVat"]["rateDate"], "source": "mnb", "vatHuf": -168}),
        "{note}"
    );
    let listed = assert_ok(app.get_auth("/api/invoices", &ann.token).await).await;
    let note = listed["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["kind"] == json!("credit_note"))
        .unwrap()
        .clone();
    let text = pdf(&app, &ann, &note).await;
    assert!(
        text.contains("-168 HUF") && text.contains("1 EUR = 391.25 HUF"),
        "{text}"
    );
}
