//! Invoices and VAT: one invoice per paid payment, numbered without gaps per year; the
//! VAT of each buyer; PDFs; and payments and invoices kept after an account is deleted.

use std::io::Write;
use std::process::{Command, Stdio};

use futures_util::future::join_all;
use serde_json::{json, Value};

use crate::helpers::{assert_error, assert_ok, spawn_app_with, TestApp, TestUser};
use crate::vies_stub::{self, Answer, ViesStub};

/// A server whose VIES (a stub) confirms every number but `…000000000`.
async fn spawn_app() -> TestApp {
    spawn_with_vies().await.0
}

async fn spawn_with_vies() -> (TestApp, ViesStub) {
    let (url, stub) = vies_stub::start();
    let app = spawn_app_with(move |s| {
        s.auth.remember_days = 400;
        s.billing.vies_url = url;
    })
    .await;
    (app, stub)
}

fn billing(kind: &str, name: &str, country: &str, vat_number: Option<&str>) -> Value {
    let mut info = json!({"name": name, "address": "Hauptstraße 1", "city": "Town", "postalCode": "1011",
                          "country": country});
    if kind == "company" {
        info["companyName"] = json!("Acme");
        info["vatNumber"] = json!(vat_number);
    }
    json!({"billingType": kind, "billingInfo": info})
}

async fn set_billing(app: &TestApp, user: &TestUser, body: Value) -> Value {
    assert_ok(
        app.put_auth("/api/settings/billing-info", &user.token, body)
            .await,
    )
    .await
}

/// Starts an upgrade to base in euros; answers the pending payment.
async fn start_checkout(app: &TestApp, user: &TestUser) -> Value {
    let body = json!({"planType": "base", "currency": "EUR"});
    let started = assert_ok(app.put_auth("/api/subscription/change", &user.token, body).await).await;
    started["payment"].clone()
}

async fn invoices(app: &TestApp, user: &TestUser) -> Vec<Value> {
    let body = assert_ok(app.get_auth("/api/invoices", &user.token).await).await;
    body["data"].as_array().unwrap().clone()
}

async fn pdf(app: &TestApp, user: &TestUser, invoice: &Value) -> reqwest::Response {
    let url = invoice["pdfUrl"].as_str().unwrap();
    app.get_auth(url, &user.token).await
}

/// The text of a PDF, as poppler's `pdftotext` reads it (an independent reader).
pub(crate) fn pdf_text(bytes: &[u8]) -> String {
    let mut child = Command::new("pdftotext")
        .args(["-layout", "-", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("pdftotext (Debian: poppler-utils) is installed");
    child.stdin.take().unwrap().write_all(bytes).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "pdftotext failed on the invoice");
    String::from_utf8(out.stdout).unwrap()
}

fn sequence(invoice: &Value) -> u32 {
    let number = invoice["number"].as_str().unwrap();
    let (year, seq) = number.split_once('-').unwrap();
    assert_eq!(year.len(), 4, "{number}");
    assert_eq!(seq.len(), 6, "{number}");
    seq.parse().unwrap()
}

#[actix_web::test]
async fn a_paid_checkout_and_each_renewal_get_one_invoice_each_numbered_in_order() {
    let app = spawn_app().await;
    let ann = app.register_paying("ann@example.com").await;
    let payment = start_checkout(&app, &ann).await;
    // Nothing paid, no invoice.
    assert!(invoices(&app, &ann).await.is_empty());
    app.pay_demo(&ann, payment["_id"].as_str().unwrap()).await;

    let list = invoices(&app, &ann).await;
    assert_eq!(list.len(), 1);
    let invoice = &list[0];
    let year = &invoice["issuedAt"].as_str().unwrap()[..4];
    assert_eq!(invoice["number"], json!(format!("{year}-000001")));
    assert_eq!(invoice["paymentId"], payment["_id"]);
    assert_eq!(invoice["transactionId"], payment["_id"]);
    assert_eq!(invoice["planType"], json!("base"));
    assert_eq!(invoice["planName"], json!("Base"));
    assert_eq!(invoice["currency"], json!("EUR"));
    assert_eq!(invoice["netAmount"], json!(5.0));
    assert_eq!(invoice["vatRate"], json!(0.27));
    assert_eq!(invoice["vatAmount"], json!(1.35));
    assert_eq!(invoice["totalAmount"], json!(6.35));
    assert_eq!(invoice["buyer"]["name"], json!("Payer"));
    assert_eq!(invoice["buyer"]["country"], json!("HU"));
    assert_eq!(invoice["seller"]["country"], json!("HU"));
    assert_eq!(invoice["seller"]["vatNumber"], json!("HU12345678"));
    let sub = assert_ok(app.get_auth("/api/subscription", &ann.token).await).await;
    assert_eq!(invoice["periodStart"], sub["data"]["startDate"]);
    assert_eq!(invoice["periodEnd"], sub["data"]["endDate"]);

    // Paying the same checkout again neither charges nor invoices twice.
    let again = app
        .client
        .post(app.url(&format!(
            "/api/payments/demo/{}/pay",
            payment["_id"].as_str().unwrap()
        )))
        .bearer_auth(&ann.token)
        .send()
        .await
        .unwrap();
    assert_error(again, 409, "payment_closed").await;
    assert_eq!(invoices(&app, &ann).await.len(), 1);

    // The renewal a month later is the next number; it covers the next period.
    app.advance_minutes(32 * 24 * 60);
    assert_eq!(app.run_scheduler().await, 1);
    let list = invoices(&app, &ann).await;
    assert_eq!(list.len(), 2);
    assert_eq!(list[0]["number"], json!(format!("{year}-000002")));
    assert_eq!(list[0]["periodStart"], invoice["periodEnd"]);
    let payments = assert_ok(app.get_auth("/api/payments", &ann.token).await).await;
    assert_eq!(list[0]["paymentId"], payments["data"][0]["_id"]);
    assert_eq!(payments["data"][0]["kind"], json!("renewal"));
}

#[actix_web::test]
async fn invoice_numbers_have_no_gaps_or_duplicates_under_twenty_parallel_payments() {
    let app = spawn_app().await;
    let mut users = Vec::new();
    let mut payment_ids = Vec::new();
    for n in 0..20 {
        let user = app.register_paying(&format!("payer{n}@example.com")).await;
        let payment = start_checkout(&app, &user).await;
        payment_ids.push(payment["_id"].as_str().unwrap().to_owned());
        users.push(user);
    }
    join_all(
        users
            .iter()
            .zip(&payment_ids)
            .map(|(user, id)| app.pay_demo(user, id)),
    )
    .await;

    let mut numbers = Vec::new();
    for user in &users {
        let list = invoices(&app, user).await;
        assert_eq!(list.len(), 1);
        numbers.push(sequence(&list[0]));
    }
    numbers.sort_unstable();
    assert_eq!(numbers, (1..=20).collect::<Vec<u32>>());

    // Issuing the same payment's invoice at once from several places makes one invoice.
    let state = &app.state;
    let first = &payment_ids[0];
    let issued = join_all((0..5).map(|_| state.billing.issue_invoice(first))).await;
    let issued: Vec<String> = issued.into_iter().map(|i| i.unwrap().number).collect();
    assert!(issued.iter().all(|n| n == &issued[0]), "{issued:?}");
    assert_eq!(invoices(&app, &users[0]).await[0]["number"], json!(issued[0]));
}

#[actix_web::test]
async fn each_buyer_pays_the_vat_of_their_country_and_kind() {
    let app = spawn_app().await;
    let ann = app.register("Ann", "ann@example.com", "secret1").await;
    let cases = [
        (billing("private", "Ann", "HU", None), 0.27, "standard", 1.35),
        (billing("private", "Ann", "DE", None), 0.19, "standard", 0.95),
        (
            billing("company", "Ann", "HU", Some("HU12345678")),
            0.27,
            "standard",
            1.35,
        ),
        (
            billing("company", "Ann", "DE", Some("DE 123 456 789")),
            0.0,
            "reverse_charge",
            0.0,
        ),
        (billing("private", "Ann", "US", None), 0.0, "outside_eu", 0.0),
        (
            billing("company", "Ann", "US", Some("12-3456789")),
            0.0,
            "outside_eu",
            0.0,
        ),
    ];
    for (info, rate, treatment, vat) in cases {
        set_billing(&app, &ann, info.clone()).await;
        // The plan cards show this buyer's VAT…
        let plans = assert_ok(app.get_auth("/api/plans", &ann.token).await).await;
        assert_eq!(plans["vat"]["rate"], json!(rate), "{info}");
        assert_eq!(plans["vat"]["treatment"], json!(treatment), "{info}");
        assert_eq!(plans["vat"]["basis"], json!("billingInfo"));
        assert_eq!(plans["data"][1]["prices"]["EUR"]["vat"], json!(vat), "{info}");
        // …and the payment charges it.
        let payment = start_checkout(&app, &ann).await;
        assert_eq!(payment["vatRate"], json!(rate), "{info}");
        assert_eq!(payment["vatAmount"], json!(vat), "{info}");
        assert_eq!(payment["vatTreatment"], json!(treatment), "{info}");
        assert_eq!(payment["totalAmount"], json!(5.0 + vat), "{info}");
    }
    // The stored VAT number is compact.
    let settings = assert_ok(app.get_auth("/api/settings", &ann.token).await).await;
    assert_eq!(settings["billingInfo"]["vatNumber"], json!("12-3456789"));
    set_billing(&app, &ann, billing("company", "Ann", "de", Some("de123456789"))).await;
    let settings = assert_ok(app.get_auth("/api/settings", &ann.token).await).await;
    assert_eq!(settings["billingInfo"]["vatNumber"], json!("DE123456789"));
    assert_eq!(settings["billingInfo"]["country"], json!("DE"));

    // Without a session the cards show the seller's domestic VAT.
    let public = assert_ok(app.client.get(app.url("/api/plans")).send().await.unwrap()).await;
    assert_eq!(
        public["vat"],
        json!({"rate": 0.27, "treatment": "standard", "basis": "seller", "country": "HU"})
    );
}

#[actix_web::test]
async fn a_reverse_charged_invoice_carries_the_legal_note_and_no_vat() {
    let app = spawn_app().await;
    let ann = app.register("Ann", "ann@example.com", "secret1").await;
    set_billing(&app, &ann, billing("company", "Ann", "DE", Some("DE123456789"))).await;
    let payment = start_checkout(&app, &ann).await;
    app.pay_demo(&ann, payment["_id"].as_str().unwrap()).await;
    let invoice = invoices(&app, &ann).await.remove(0);
    assert_eq!(invoice["vatTreatment"], json!("reverse_charge"));
    assert_eq!(invoice["vatAmount"], json!(0.0));
    assert_eq!(invoice["totalAmount"], json!(5.0));
    assert_eq!(invoice["buyer"]["vatNumber"], json!("DE123456789"));
    let bytes = pdf(&app, &ann, &invoice).await.bytes().await.unwrap();
    let text = pdf_text(&bytes);
    assert!(text.contains("Reverse charge"), "{text}");
    assert!(text.contains("Article 196"), "{text}");
    assert!(text.contains("DE123456789"), "{text}");
    assert!(text.contains("0%"), "{text}");
}

#[actix_web::test]
async fn a_malformed_eu_vat_number_or_country_is_refused_in_both_languages_and_nothing_changes() {
    let app = spawn_app().await;
    let ann = app.register("Ann", "ann@example.com", "secret1").await;
    set_billing(&app, &ann, billing("private", "Ann", "DE", None)).await;
    let before = assert_ok(app.get_auth("/api/settings", &ann.token).await).await;
    for bad in ["123456789", "DE12345678", "AT U12345678", "HU12345678"] {
        let response = app
            .put_auth(
                "/api/settings/billing-info",
                &ann.token,
                billing("company", "Ann", "DE", Some(bad)),
            )
            .await;
        let error = assert_error(response, 400, "vat_number_invalid").await;
        assert_eq!(error["field"], json!("vatNumber"), "{bad}");
        assert_eq!(
            error["message"],
            json!("Invalid EU VAT number: it starts with the country's prefix, e.g. DE123456789")
        );
    }
    let response = app
        .put_auth(
            "/api/settings/billing-info",
            &ann.token,
            billing("private", "Ann", "Germany", None),
        )
        .await;
    let error = assert_error(response, 400, "invalid_country").await;
    assert_eq!(error["field"], json!("country"));

    assert_ok(
        app.put_auth("/api/settings", &ann.token, json!({"language": "hu-HU"}))
            .await,
    )
    .await;
    let response = app
        .put_auth(
            "/api/settings/billing-info",
            &ann.token,
            billing("company", "Ann", "DE", Some("DE1")),
        )
        .await;
    let error = assert_error(response, 400, "vat_number_invalid").await;
    assert_eq!(
        error["message"],
        json!("Érvénytelen közösségi adószám: az ország előtagjával kezdődik, pl. DE123456789")
    );
    let response = app
        .put_auth(
            "/api/settings/billing-info",
            &ann.token,
            billing("private", "Ann", "XX", None),
        )
        .await;
    let error = assert_error(response, 400, "invalid_country").await;
    assert_eq!(
        error["message"],
        json!("Az ország kétbetűs országkód legyen, pl. HU, DE vagy US")
    );
    let after = assert_ok(app.get_auth("/api/settings", &ann.token).await).await;
    assert_eq!(after["billingInfo"], before["billingInfo"]);
}

#[actix_web::test]
async fn the_invoice_pdf_is_a_real_pdf_with_the_number_amounts_and_buyer() {
    let app = spawn_app().await;
    let ann = app.register("Ann", "ann@example.com", "secret1").await;
    set_billing(&app, &ann, billing("private", "Kővári Űrsula", "HU", None)).await;
    let payment = start_checkout(&app, &ann).await;
    app.pay_demo(&ann, payment["_id"].as_str().unwrap()).await;
    let invoice = invoices(&app, &ann).await.remove(0);
    let response = pdf(&app, &ann, &invoice).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "application/pdf");
    let number = invoice["number"].as_str().unwrap();
    assert!(response.headers()["content-disposition"]
        .to_str()
        .unwrap()
        .contains(&format!("invoice-{number}.pdf")));
    let bytes = response.bytes().await.unwrap();
    assert!(bytes.starts_with(b"%PDF-"));
    let text = pdf_text(&bytes);
    for expected in [
        number,
        "Kővári Űrsula",
        "Számla / Invoice",
        "AI Chat Kft.",
        "HU12345678",
        "5.00 EUR",
        "1.35 EUR",
        "6.35 EUR",
        "27%",
        payment["_id"].as_str().unwrap(),
    ] {
        assert!(text.contains(expected), "{expected:?} missing from:\n{text}");
    }
    assert!(!text.contains("Reverse charge"), "{text}");
}

#[actix_web::test]
async fn another_users_invoice_is_not_found() {
    let app = spawn_app().await;
    let ann = app.register_paying("ann@example.com").await;
    let bob = app.register_paying("bob@example.com").await;
    let payment = start_checkout(&app, &ann).await;
    app.pay_demo(&ann, payment["_id"].as_str().unwrap()).await;
    let invoice = invoices(&app, &ann).await.remove(0);
    assert!(invoices(&app, &bob).await.is_empty());
    assert_error(pdf(&app, &bob, &invoice).await, 404, "not_found").await;
    assert_error(
        app.get_auth("/api/invoices/no-such-invoice.pdf", &ann.token)
            .await,
        404,
        "not_found",
    )
    .await;
    let anonymous = app
        .client
        .get(app.url(invoice["pdfUrl"].as_str().unwrap()))
        .send()
        .await
        .unwrap();
    assert_error(anonymous, 401, "unauthorized").await;
}

#[actix_web::test]
async fn payments_and_invoices_are_kept_after_the_account_is_deleted() {
    let app = spawn_app().await;
    let ann = app.register_paying("ann@example.com").await;
    let payment = start_checkout(&app, &ann).await;
    let payment_id = payment["_id"].as_str().unwrap().to_owned();
    app.pay_demo(&ann, &payment_id).await;
    // An open checkout is kept too.
    let bob_pays_later = app.register_paying("bob@example.com").await;
    let open = start_checkout(&app, &bob_pays_later).await;
    let invoice = invoices(&app, &ann).await.remove(0);
    let invoice_id = invoice["_id"].as_str().unwrap().to_owned();

    assert_ok(app.delete_auth("/api/auth/profile", &ann.token).await).await;
    assert_ok(app.delete_auth("/api/auth/profile", &bob_pays_later.token).await).await;

    let db = &app.state.db;
    let kept = db
        .payment(&payment_id)
        .await
        .unwrap()
        .expect("the payment is kept");
    assert_eq!(kept.user_id, None);
    assert_eq!(kept.status.as_str(), "succeeded");
    assert_eq!(kept.total_amount, 635);
    let kept = db
        .invoice(&invoice_id)
        .await
        .unwrap()
        .expect("the invoice is kept");
    assert_eq!(kept.user_id, None);
    assert_eq!(kept.number, invoice["number"].as_str().unwrap());
    assert_eq!(kept.buyer_name, "Payer");
    assert_eq!(kept.buyer_city, "Budapest");
    // The invoice still renders, for the accountant.
    let bytes = app.state.billing.invoice_pdf(&kept).unwrap();
    assert!(pdf_text(&bytes).contains("Payer"));
    // A checkout of a deleted account can no longer give anyone a plan: its demo page
    // needs a login no one has, and a provider confirming it later closes it.
    let open_id = open["_id"].as_str().unwrap();
    let late = app
        .client
        .post(app.url(&format!("/api/payments/demo/{open_id}/pay")))
        .send()
        .await
        .unwrap();
    assert_error(late, 401, "unauthorized").await;
    let confirmed = app.state.billing.complete_payment(open_id).await;
    assert_eq!(
        confirmed.unwrap_err().code(),
        chat_server::error::ErrorCode::PaymentClosed
    );
    let closed = db.payment(open_id).await.unwrap().unwrap();
    assert_eq!((closed.user_id, closed.status.as_str()), (None, "canceled"));
    assert!(db.invoice_of_payment(open_id).await.unwrap().is_none());
}

#[actix_web::test]
async fn the_scheduler_issues_the_invoice_of_a_payment_a_crash_left_without_one() {
    let app = spawn_app().await;
    let ann = app.register_paying("ann@example.com").await;
    let payment = start_checkout(&app, &ann).await;
    let id = payment["_id"].as_str().unwrap();
    // The payment went through, then the server stopped before issuing the invoice.
    assert!(app
        .state
        .db
        .close_payment(
            id,
            chat_contract::states::PaymentStatus::Succeeded,
            app.clock_now()
        )
        .await
        .unwrap());
    assert!(invoices(&app, &ann).await.is_empty());
    app.run_scheduler().await;
    let list = invoices(&app, &ann).await;
    assert_eq!(list.len(), 1);
    assert_eq!(list[0]["paymentId"], json!(id));
    assert_eq!(sequence(&list[0]), 1);
}

#[actix_web::test]
async fn the_plan_catalogue_marks_what_works_on_this_server() {
    let app = spawn_app().await;
    let body = assert_ok(app.client.get(app.url("/api/plans")).send().await.unwrap()).await;
    // Everything is built; web search is off only because no provider is set up here.
    for plan in body["data"].as_array().unwrap() {
        assert_eq!(
            plan["available"],
            json!({"googleWebSearch": false, "openaiWebSearch": false, "documentProcessing": true,
                   "projectManagement": true, "imageGeneration": true, "imageUpload": true}),
        );
    }
    // The plans' own feature flags (SPEC §3) are unchanged.
    assert_eq!(body["data"][3]["features"]["imageGeneration"], json!(true));
}

/// A German company with `number`.
fn german_company(number: &str) -> Value {
    billing("company", "Ann", "DE", Some(number))
}

#[actix_web::test]
async fn a_company_confirmed_by_vies_is_reverse_charged_and_the_check_is_kept_on_the_payment_and_invoice() {
    let (app, vies) = spawn_with_vies().await;
    let ann = app.register("Ann", "ann@example.com", "secret1").await;
    let saved = set_billing(&app, &ann, german_company("DE 123 456 789")).await;
    assert_eq!(
        vies.requests(),
        vec![json!({"countryCode": "DE", "vatNumber": "123456789"})]
    );
    let check = &saved["billingInfo"]["vatCheck"];
    assert_eq!(check["status"], json!("valid"), "{saved}");
    assert_eq!(check["vatNumber"], json!("DE123456789"));
    assert_eq!(check["requestDate"], json!("2026-03-02T10:15:00.000Z"));
    assert_eq!(check["name"], json!("ACME GMBH"));
    let settings = assert_ok(app.get_auth("/api/settings", &ann.token).await).await;
    assert_eq!(&settings["billingInfo"]["vatCheck"], check);
    let plans = assert_ok(app.get_auth("/api/plans", &ann.token).await).await;
    assert_eq!(plans["vat"]["treatment"], json!("reverse_charge"));

    let payment = start_checkout(&app, &ann).await;
    assert_eq!(payment["vatTreatment"], json!("reverse_charge"));
    assert_eq!(payment["vatRate"], json!(0.0));
    assert_eq!(&payment["vatCheck"], check);
    // A fresh check is not asked again.
    assert_eq!(vies.requests().len(), 1);
    app.pay_demo(&ann, payment["_id"].as_str().unwrap()).await;
    let invoice = invoices(&app, &ann).await.remove(0);
    assert_eq!(invoice["vatTreatment"], json!("reverse_charge"));
    assert_eq!(&invoice["vatCheck"], check);
    assert_eq!(invoice["buyer"].get("vatCheck"), None);
    // Kept with the invoice: new billing info changes neither.
    set_billing(&app, &ann, billing("private", "Ann", "DE", None)).await;
    let settings = assert_ok(app.get_auth("/api/settings", &ann.token).await).await;
    assert_eq!(settings["billingInfo"].get("vatCheck"), None);
    assert_eq!(&invoices(&app, &ann).await[0]["vatCheck"], check);
    let text = pdf_text(&pdf(&app, &ann, &invoice).await.bytes().await.unwrap());
    assert!(
        text.contains("VAT number confirmed in VIES: DE123456789"),
        "{text}"
    );
}

#[actix_web::test]
async fn a_number_vies_does_not_know_pays_domestic_vat_and_the_buyer_is_told_why() {
    let (app, vies) = spawn_with_vies().await;
    let ann = app.register("Ann", "ann@example.com", "secret1").await;
    // Well-formed, but not registered.
    let saved = set_billing(&app, &ann, german_company("DE000000000")).await;
    let check = &saved["billingInfo"]["vatCheck"];
    assert_eq!(check["status"], json!("invalid"), "{saved}");
    assert_eq!(check["name"], json!(null), "VIES's '---' is no name");
    let plans = assert_ok(app.get_auth("/api/plans", &ann.token).await).await;
    assert_eq!(plans["vat"]["treatment"], json!("standard"));
    assert_eq!(plans["vat"]["rate"], json!(0.19));
    let payment = start_checkout(&app, &ann).await;
    assert_eq!(payment["vatTreatment"], json!("standard"));
    assert_eq!(payment["vatRate"], json!(0.19));
    assert_eq!(payment["vatAmount"], json!(0.95));
    assert_eq!(&payment["vatCheck"], check);
    // A recent "not registered" is not asked again at the checkout.
    assert_eq!(vies.requests().len(), 1);
    app.pay_demo(&ann, payment["_id"].as_str().unwrap()).await;
    let invoice = invoices(&app, &ann).await.remove(0);
    assert_eq!(invoice["vatTreatment"], json!("standard"));
    assert_eq!(invoice["vatRate"], json!(0.19));
    assert_eq!(&invoice["vatCheck"], check);
}

#[actix_web::test]
async fn vies_down_means_domestic_vat_with_the_reason_until_a_checkout_finds_it_back() {
    let (app, vies) = spawn_with_vies().await;
    let ann = app.register("Ann", "ann@example.com", "secret1").await;
    vies.set(Answer::Down);
    let saved = set_billing(&app, &ann, german_company("DE123456789")).await;
    let check = &saved["billingInfo"]["vatCheck"];
    assert_eq!(check["status"], json!("unavailable"), "{saved}");
    assert_eq!(check["error"], json!("MS_UNAVAILABLE"));
    let plans = assert_ok(app.get_auth("/api/plans", &ann.token).await).await;
    assert_eq!(plans["vat"]["rate"], json!(0.19));
    // Still down at the checkout: asked again, domestic VAT.
    let payment = start_checkout(&app, &ann).await;
    assert_eq!(vies.requests().len(), 2);
    assert_eq!(payment["vatTreatment"], json!("standard"));
    assert_eq!(payment["vatRate"], json!(0.19));
    assert_eq!(payment["vatCheck"]["status"], json!("unavailable"));
    // Back: the next checkout asks again, is reverse charged, and the billing info shows it.
    vies.set(Answer::ByNumber);
    let body = json!({"planType": "pro", "currency": "EUR"});
    let started = assert_ok(app.put_auth("/api/subscription/change", &ann.token, body).await).await;
    assert_eq!(vies.requests().len(), 3);
    assert_eq!(started["payment"]["vatTreatment"], json!("reverse_charge"));
    assert_eq!(started["payment"]["vatCheck"]["status"], json!("valid"));
    let settings = assert_ok(app.get_auth("/api/settings", &ann.token).await).await;
    assert_eq!(settings["billingInfo"]["vatCheck"]["status"], json!("valid"));
}

#[actix_web::test]
async fn vies_unreachable_or_slow_is_unavailable_within_the_timeout() {
    // spawn_app's VIES is a port nothing listens on.
    let app = spawn_app_with(|_| {}).await;
    let ann = app.register("Ann", "ann@example.com", "secret1").await;
    let saved = set_billing(&app, &ann, german_company("DE123456789")).await;
    assert_eq!(saved["billingInfo"]["vatCheck"]["status"], json!("unavailable"));
    assert_eq!(saved["billingInfo"]["vatCheck"]["error"], json!("unreachable"));
    assert_eq!(start_checkout(&app, &ann).await["vatRate"], json!(0.19));

    let (url, vies) = vies_stub::start();
    vies.set(Answer::Slow);
    let app = spawn_app_with(move |s| {
        s.billing.vies_url = url;
        s.billing.vies_timeout_secs = 1;
    })
    .await;
    let ann = app.register("Ann", "ann@example.com", "secret1").await;
    let started = std::time::Instant::now();
    let saved = set_billing(&app, &ann, german_company("DE123456789")).await;
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(vies.requests().len(), 1);
    assert_eq!(saved["billingInfo"]["vatCheck"]["status"], json!("unavailable"));
    assert_eq!(saved["billingInfo"]["vatCheck"]["error"], json!("unreachable"));
}

#[actix_web::test]
async fn a_checkout_asks_vies_again_once_the_check_is_a_week_old() {
    let (app, vies) = spawn_with_vies().await;
    let ann = app.register("Ann", "ann@example.com", "secret1").await;
    set_billing(&app, &ann, german_company("DE123456789")).await;
    app.clock.advance_ms(6 * 24 * 3600 * 1000);
    assert_eq!(
        start_checkout(&app, &ann).await["vatTreatment"],
        json!("reverse_charge")
    );
    assert_eq!(vies.requests().len(), 1);
    // Eight days on, VIES is down: the old "valid" is not relied on.
    app.clock.advance_ms(2 * 24 * 3600 * 1000);
    vies.set(Answer::Down);
    let body = json!({"planType": "pro", "currency": "EUR"});
    let started = assert_ok(app.put_auth("/api/subscription/change", &ann.token, body).await).await;
    assert_eq!(vies.requests().len(), 2);
    assert_eq!(started["payment"]["vatTreatment"], json!("standard"));
    assert_eq!(started["payment"]["vatRate"], json!(0.19));
}

#[actix_web::test]
async fn vies_is_asked_only_where_its_answer_decides_the_vat() {
    let (app, vies) = spawn_with_vies().await;
    let ann = app.register("Ann", "ann@example.com", "secret1").await;
    for info in [
        billing("private", "Ann", "DE", None),
        billing("company", "Ann", "HU", Some("HU12345678")),
        billing("company", "Ann", "US", Some("12-3456789")),
    ] {
        let saved = set_billing(&app, &ann, info).await;
        assert_eq!(saved["billingInfo"].get("vatCheck"), None, "{saved}");
        start_checkout(&app, &ann).await;
    }
    assert_eq!(vies.requests(), Vec::<Value>::new());
    // Greece's numbers start with EL, which VIES takes as its code.
    set_billing(&app, &ann, billing("company", "Ann", "GR", Some("EL123456789"))).await;
    assert_eq!(
        vies.requests(),
        vec![json!({"countryCode": "EL", "vatNumber": "123456789"})]
    );
}
