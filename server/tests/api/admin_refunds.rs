//! Refunds from the operator console (`POST /api/admin/payments/{id}/refund`), their credit
//! notes, and refunds made in Stripe's dashboard (`charge.refunded`).

use chat_server::db::Db;
use futures_util::future::join;
use serde_json::{json, Value};

use crate::helpers::{assert_error, assert_ok, spawn_app, TestApp, TestUser};
use crate::invoices::pdf_text;
use crate::stripe::{change, deliver, eventually, plan_of, spawn_stripe_app, subscribe_monthly, StripeApp};
use crate::ws::WsClient;

async fn refund_with(
    app: &TestApp,
    admin: &TestUser,
    payment_id: &str,
    key: Option<&str>,
    body: Value,
) -> reqwest::Response {
    let mut request = app
        .client
        .post(app.url(&format!("/api/admin/payments/{payment_id}/refund")))
        .bearer_auth(&admin.token)
        .json(&body);
    if let Some(key) = key {
        request = request.header("Idempotency-Key", key);
    }
    request.send().await.unwrap()
}

pub(crate) async fn refund(
    app: &TestApp,
    admin: &TestUser,
    payment_id: &str,
    body: Value,
) -> reqwest::Response {
    refund_with(app, admin, payment_id, None, body).await
}

/// An admin, and a paying user (billed in Hungary, 27 % VAT).
async fn admin_and_payer(app: &TestApp) -> (TestUser, TestUser) {
    let admin = app.register("Ada", "ada@example.com", "secret1").await;
    app.grant_admin("ada@example.com").await;
    let payer = app.register_paying("payer@example.com").await;
    (admin, payer)
}

/// Starts a checkout of `plan` in euros on the demo provider; answers the pending payment.
async fn demo_checkout(app: &TestApp, user: &TestUser, plan: &str) -> Value {
    let body = json!({"planType": plan, "currency": "EUR"});
    let started = assert_ok(app.put_auth("/api/subscription/change", &user.token, body).await).await;
    started["payment"].clone()
}

/// A demo payment of `plan`, paid on the demo page: its id.
async fn demo_paid(app: &TestApp, user: &TestUser, plan: &str) -> String {
    let id = demo_checkout(app, user, plan).await["_id"]
        .as_str()
        .unwrap()
        .to_owned();
    app.pay_demo(user, &id).await;
    id
}

/// A one-time plus plan paid by card at Stripe: the payment's id and its PaymentIntent.
async fn stripe_paid(s: &StripeApp, user: &TestUser) -> (String, String) {
    let started = change(
        &s.app,
        user,
        json!({"planType": "plus", "billingCycle": "one_time", "currency": "EUR"}),
    )
    .await;
    let secret = started["clientSecret"].as_str().unwrap().to_owned();
    let id = started["payment"]["_id"].as_str().unwrap().to_owned();
    assert_eq!(s.fake.pay(&secret, "4242424242424242").await, 200);
    // The invoice is issued right after the plan starts.
    eventually("the card payment succeeded and is invoiced", || async {
        plan_of(&s.app, user).await == "plus" && !invoices(&s.app, user).await.is_empty()
    })
    .await;
    let pi = secret.split("_secret_").next().unwrap().to_owned();
    (id, pi)
}

async fn payment(app: &TestApp, user: &TestUser, id: &str) -> Value {
    assert_ok(app.get_auth(&format!("/api/payments/{id}"), &user.token).await).await["data"].clone()
}

async fn invoices(app: &TestApp, user: &TestUser) -> Vec<Value> {
    let body = assert_ok(app.get_auth("/api/invoices", &user.token).await).await;
    body["data"].as_array().unwrap().clone()
}

async fn refunds_at_stripe(s: &StripeApp, pi: &str) -> Vec<Value> {
    let list = s.fake.get(&format!("/v1/refunds?payment_intent={pi}")).await;
    list["data"].as_array().cloned().unwrap_or_default()
}

/// The audit log's rows about `user`, newest first.
async fn audit_of(app: &TestApp, admin: &TestUser, user: &TestUser) -> Vec<Value> {
    let path = format!("/api/admin/audit?userId={}", user.id);
    let page = assert_ok(app.get_auth(&path, &admin.token).await).await;
    page["data"].as_array().unwrap().clone()
}

async fn count(app: &TestApp, sql: &str) -> i64 {
    match &app.state.db {
        Db::Sqlite(pool, _) => sqlx::query_scalar(sql).fetch_one(pool).await.unwrap(),
        Db::Postgres(pool) => sqlx::query_scalar(sql).fetch_one(pool).await.unwrap(),
    }
}

fn sequence(invoice: &Value) -> u32 {
    let number = invoice["number"].as_str().unwrap();
    number.split_once('-').unwrap().1.parse().unwrap()
}

fn cents(major: &Value) -> i64 {
    (major.as_f64().unwrap() * 100.0).round() as i64
}

#[actix_web::test]
async fn a_stripe_payment_is_refunded_in_part_then_in_full_each_with_a_credit_note() {
    let Some(s) = spawn_stripe_app().await else { return };
    let app = &s.app;
    let (admin, payer) = admin_and_payer(app).await;
    let (id, pi) = stripe_paid(&s, &payer).await;
    let total = cents(&payment(app, &payer, &id).await["totalAmount"]);
    let invoice = invoices(app, &payer).await[0].clone();
    assert_eq!(sequence(&invoice), 1);

    // A part: the plan runs on.
    let body = json!({"amount": 2.0, "reason": "two days of outage", "endPlan": false});
    let partial = assert_ok(refund(app, &admin, &id, body).await).await["data"].clone();
    assert_eq!(partial["amount"], json!(2.0));
    assert_eq!(partial["provider"], json!("stripe"));
    assert_eq!(partial["actor"], json!("ada@example.com"));
    assert_eq!(partial["actorId"], json!(admin.id));
    let re = partial["providerRef"].as_str().unwrap().to_owned();
    assert!(re.starts_with("re_"), "{partial}");
    let at_stripe = refunds_at_stripe(&s, &pi).await;
    assert_eq!(at_stripe.len(), 1);
    assert_eq!(at_stripe[0]["id"], json!(re));
    assert_eq!(at_stripe[0]["amount"], json!(200));
    let note = &partial["creditNote"];
    assert_eq!(note["kind"], json!("credit_note"));
    assert_eq!(note["creditNoteOf"], invoice["number"]);
    assert_eq!(sequence(note), 2, "the credit note is numbered with the invoices");
    assert_eq!(note["totalAmount"], json!(-2.0));
    // 2.00 gross at 27 %: 1.57 net and 0.43 VAT, both given back.
    assert_eq!(note["netAmount"], json!(-1.57));
    assert_eq!(note["vatAmount"], json!(-0.43));
    assert_eq!(note["vatRate"], invoice["vatRate"]);
    assert_eq!(note["vatTreatment"], invoice["vatTreatment"]);
    assert_eq!(note["buyer"], invoice["buyer"]);
    assert_eq!(note["seller"], invoice["seller"]);
    assert_eq!(partial["payment"]["refundedAmount"], json!(2.0));
    assert_eq!(payment(app, &payer, &id).await["refundedAmount"], json!(2.0));
    assert_eq!(plan_of(app, &payer).await, "plus");

    // More than remains is refused, and nothing moves at Stripe.
    let too_much = json!({"amount": (total - 200 + 1) as f64 / 100.0, "reason": "too much"});
    assert_error(refund(app, &admin, &id, too_much).await, 400, "refund_too_large").await;
    assert_eq!(refunds_at_stripe(&s, &pi).await.len(), 1);

    // The rest, by default.
    let rest =
        assert_ok(refund(app, &admin, &id, json!({"reason": "cancelled"})).await).await["data"].clone();
    assert_eq!(cents(&rest["amount"]), total - 200);
    assert_eq!(cents(&rest["payment"]["refundedAmount"]), total);
    assert_eq!(sequence(&rest["creditNote"]), 3);
    let at_stripe = refunds_at_stripe(&s, &pi).await;
    assert_eq!(at_stripe.len(), 2);
    let given_back: i64 = at_stripe.iter().map(|r| r["amount"].as_i64().unwrap()).sum();
    assert_eq!(given_back, total);
    // Nothing remains.
    assert_error(
        refund(app, &admin, &id, json!({"reason": "again"})).await,
        400,
        "refund_too_large",
    )
    .await;

    // The user's list: newest first, the credit notes with the invoice they refer to.
    let list = invoices(app, &payer).await;
    let kinds: Vec<_> = list.iter().map(|i| i["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["credit_note", "credit_note", "invoice"]);
    assert_eq!(list[1]["_id"], note["_id"]);

    // One audit row per refund: what was refunded before and after, and the credit note.
    let audit = audit_of(app, &admin, &payer).await;
    let refunds: Vec<_> = audit
        .iter()
        .filter(|r| r["action"] == "payment.refunded")
        .collect();
    assert_eq!(refunds.len(), 2);
    assert_eq!(refunds[1]["reason"], json!("two days of outage"));
    assert_eq!(refunds[1]["before"]["refundedAmount"], json!("0.00 EUR"));
    assert_eq!(refunds[1]["after"]["refundedAmount"], json!("2.00 EUR"));
    assert_eq!(refunds[1]["after"]["amount"], json!("2.00 EUR"));
    assert_eq!(refunds[1]["after"]["creditNote"], note["number"]);
    assert_eq!(refunds[0]["actor"], json!("ada@example.com"));
}

#[actix_web::test]
async fn a_monthly_plan_is_refunded_through_its_first_invoice_and_ending_it_ends_the_stripe_subscription() {
    let Some(s) = spawn_stripe_app().await else { return };
    let app = &s.app;
    let (admin, payer) = admin_and_payer(app).await;
    let subscription = subscribe_monthly(&s, &payer, "base").await;
    let payments = assert_ok(app.get_auth("/api/payments", &payer.token).await).await;
    let id = payments["data"][0]["_id"].as_str().unwrap().to_owned();
    let body = json!({"reason": "wrong plan", "endPlan": true});
    let refunded = assert_ok(refund(app, &admin, &id, body).await).await["data"].clone();
    let re = refunded["providerRef"].as_str().unwrap();
    let at_stripe = s.fake.get(&format!("/v1/refunds/{re}")).await;
    assert_eq!(at_stripe["amount"].as_i64(), Some(cents(&refunded["amount"])));
    assert_eq!(plan_of(app, &payer).await, "free");
    let sub = s.fake.get(&format!("/v1/subscriptions/{subscription}")).await;
    assert_eq!(sub["status"], json!("canceled"), "{sub}");
}

#[actix_web::test]
async fn the_credit_note_pdf_says_credit_note_refers_to_its_invoice_and_shows_negative_amounts() {
    let app = spawn_app().await;
    let (admin, payer) = admin_and_payer(&app).await;
    let id = demo_paid(&app, &payer, "base").await;
    let body = json!({"amount": 2.54, "reason": "goodwill"});
    let refunded = assert_ok(refund(&app, &admin, &id, body).await).await["data"].clone();
    let note = &refunded["creditNote"];
    let response = app.get_auth(note["pdfUrl"].as_str().unwrap(), &payer.token).await;
    assert_eq!(response.status(), 200);
    let disposition = response.headers()["content-disposition"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        disposition.contains(&format!("credit-note-{}.pdf", note["number"].as_str().unwrap())),
        "{disposition}"
    );
    let text = pdf_text(&response.bytes().await.unwrap());
    assert!(text.contains("Credit note"), "{text}");
    assert!(text.contains("Jóváíró számla"), "{text}");
    assert!(text.contains("Refers to invoice"), "{text}");
    assert!(text.contains(note["creditNoteOf"].as_str().unwrap()), "{text}");
    assert!(text.contains(note["number"].as_str().unwrap()), "{text}");
    // 2.54 gross at 27 %: 2.00 net, 0.54 VAT.
    for amount in ["-2.00 EUR", "-0.54 EUR", "-2.54 EUR", "27%"] {
        assert!(text.contains(amount), "{amount} in {text}");
    }
    // Another user cannot read it.
    let other = app.register("Bob", "bob@example.com", "secret1").await;
    let response = app.get_auth(note["pdfUrl"].as_str().unwrap(), &other.token).await;
    assert_error(response, 404, "not_found").await;
}

#[actix_web::test]
async fn a_double_request_refunds_once() {
    let Some(s) = spawn_stripe_app().await else { return };
    let app = &s.app;
    let (admin, payer) = admin_and_payer(app).await;
    let (id, pi) = stripe_paid(&s, &payer).await;

    // A double click, no Idempotency-Key: the same request twice is one refund.
    let body = json!({"amount": 1.0, "reason": "double click"});
    let first = assert_ok(refund(app, &admin, &id, body.clone()).await).await["data"].clone();
    let second = assert_ok(refund(app, &admin, &id, body).await).await["data"].clone();
    assert_eq!(first["_id"], second["_id"]);
    assert_eq!(first["creditNote"]["number"], second["creditNote"]["number"]);
    assert_eq!(second["payment"]["refundedAmount"], json!(1.0));

    // Two at once with the same Idempotency-Key: one refund.
    let body = json!({"amount": 1.0, "reason": "retried"});
    let (a, b) = join(
        refund_with(app, &admin, &id, Some("k-1"), body.clone()),
        refund_with(app, &admin, &id, Some("k-1"), body),
    )
    .await;
    let (a, b) = (assert_ok(a).await, assert_ok(b).await);
    assert_eq!(a["data"]["_id"], b["data"]["_id"]);
    assert_ne!(a["data"]["_id"], first["_id"]);

    assert_eq!(refunds_at_stripe(&s, &pi).await.len(), 2);
    assert_eq!(payment(app, &payer, &id).await["refundedAmount"], json!(2.0));
    let notes = invoices(app, &payer).await;
    assert_eq!(notes.iter().filter(|i| i["kind"] == "credit_note").count(), 2);
    let refunded = format!(
        "SELECT COUNT(*) FROM audit_log WHERE action = 'payment.refunded' AND target_user_id = '{}'",
        payer.id
    );
    assert_eq!(count(app, &refunded).await, 2);
}

#[actix_web::test]
async fn what_cannot_be_refunded_is_refused_and_only_admins_refund() {
    let app = spawn_app().await;
    let (admin, payer) = admin_and_payer(&app).await;
    let id = demo_paid(&app, &payer, "base").await;
    let reason = json!({"reason": "because"});

    // Not an admin: 403, the payer included.
    assert_error(refund(&app, &payer, &id, reason.clone()).await, 403, "forbidden").await;
    // Unknown payment.
    assert_error(
        refund(&app, &admin, "nope", reason.clone()).await,
        404,
        "not_found",
    )
    .await;
    // A reason is required.
    let blank = assert_error(
        refund(&app, &admin, &id, json!({"reason": "   "})).await,
        400,
        "field_required",
    )
    .await;
    assert_eq!(blank["field"], json!("reason"), "{blank}");
    assert_error(refund(&app, &admin, &id, json!({})).await, 400, "field_required").await;
    // Nothing or less, or a fraction of a cent.
    for amount in [json!(0), json!(-1.0), json!(0.001)] {
        let body = json!({"amount": amount, "reason": "because"});
        assert_error(refund(&app, &admin, &id, body).await, 400, "validation_error").await;
    }
    // More than was paid (6.35 EUR), in both languages.
    let body = json!({"amount": 6.36, "reason": "because"});
    let en = assert_error(
        refund(&app, &admin, &id, body.clone()).await,
        400,
        "refund_too_large",
    )
    .await;
    assert_eq!(
        en["message"],
        json!("The refund is more than what remains of the payment to refund")
    );
    let hungarian = json!({"language": "hu-HU"});
    assert_ok(app.put_auth("/api/settings", &admin.token, hungarian).await).await;
    let hu = assert_error(refund(&app, &admin, &id, body).await, 400, "refund_too_large").await;
    assert_eq!(
        hu["message"],
        json!("A visszatérítés több, mint ami a fizetésből még visszatéríthető")
    );

    // A pending payment, and a canceled one: nothing was paid.
    let pending = demo_checkout(&app, &payer, "plus").await["_id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_error(
        refund(&app, &admin, &pending, reason.clone()).await,
        409,
        "refund_not_possible",
    )
    .await;
    let cancel = app
        .client
        .post(app.url(&format!("/api/payments/demo/{pending}/cancel")))
        .bearer_auth(&payer.token)
        .send()
        .await
        .unwrap();
    assert!(cancel.status().is_redirection() || cancel.status().is_success());
    assert_error(
        refund(&app, &admin, &pending, reason).await,
        409,
        "refund_not_possible",
    )
    .await;

    assert_eq!(count(&app, "SELECT COUNT(*) FROM refunds").await, 0);
    assert_eq!(
        count(&app, "SELECT COUNT(*) FROM invoices WHERE kind = 'credit_note'").await,
        0
    );
    assert_eq!(payment(&app, &payer, &id).await["refundedAmount"], json!(0.0));
}

#[actix_web::test]
async fn a_failed_stripe_payment_is_not_refunded() {
    let Some(s) = spawn_stripe_app().await else { return };
    let app = &s.app;
    let (admin, payer) = admin_and_payer(app).await;
    let started = change(
        app,
        &payer,
        json!({"planType": "pro", "billingCycle": "one_time"}),
    )
    .await;
    let id = started["payment"]["_id"].as_str().unwrap().to_owned();
    let declined = s
        .fake
        .pay(started["clientSecret"].as_str().unwrap(), "4000000000000341")
        .await;
    assert_eq!(declined, 402);
    eventually("the payment is failed", || async {
        payment(app, &payer, &id).await["status"] == "failed"
    })
    .await;
    let body = json!({"reason": "declined anyway"});
    assert_error(refund(app, &admin, &id, body).await, 409, "refund_not_possible").await;
    assert_eq!(count(app, "SELECT COUNT(*) FROM refunds").await, 0);
}

#[actix_web::test]
async fn a_demo_payment_is_recorded_only_and_ending_the_plan_tells_the_users_tabs() {
    let app = spawn_app().await;
    let (admin, payer) = admin_and_payer(&app).await;
    let id = demo_paid(&app, &payer, "base").await;
    assert_eq!(sequence(&invoices(&app, &payer).await[0]), 1);
    app.state.realtime.accounts.forget(&payer.id);
    let (mut tab, _) = WsClient::ready(&app, &payer.token).await;

    let body = json!({"reason": "did not work for them", "endPlan": true});
    let refunded = assert_ok(refund(&app, &admin, &id, body).await).await["data"].clone();
    // No money moved: recorded only, with its credit note.
    assert_eq!(refunded["provider"], json!("demo"));
    assert_eq!(refunded["providerRef"], Value::Null);
    assert_eq!(refunded["amount"], json!(6.35));
    assert_eq!(refunded["creditNote"]["totalAmount"], json!(-6.35));
    // A full refund gives back exactly the invoice's net and VAT.
    assert_eq!(refunded["creditNote"]["netAmount"], json!(-5.0));
    assert_eq!(refunded["creditNote"]["vatAmount"], json!(-1.35));
    assert_eq!(sequence(&refunded["creditNote"]), 2);

    let changed = tab.expect("subscription.updated").await;
    assert_eq!(
        changed["subscription"]["data"]["planType"],
        json!("free"),
        "{changed}"
    );
    let sub = assert_ok(app.get_auth("/api/subscription", &payer.token).await).await;
    assert_eq!(sub["data"]["planType"], json!("free"));
    let audit = audit_of(&app, &admin, &payer).await;
    assert_eq!(audit[0]["action"], json!("payment.refunded"));
    assert_eq!(audit[0]["before"]["planType"], json!("base"));
    assert_eq!(audit[0]["after"]["planType"], json!("free"));

    // The next invoice takes the next number: invoice 1, credit note 2, invoice 3.
    demo_paid(&app, &payer, "plus").await;
    let list = invoices(&app, &payer).await;
    let numbers: Vec<_> = list.iter().map(sequence).collect();
    assert_eq!(numbers, [3, 2, 1]);
    assert_eq!(list[0]["kind"], json!("invoice"));
    assert_eq!(list[0]["creditNoteOf"], Value::Null);
}

#[actix_web::test]
async fn a_demo_payment_is_not_refunded_once_the_service_runs_on_stripe() {
    let Some(s) = spawn_stripe_app().await else { return };
    let app = &s.app;
    let (admin, payer) = admin_and_payer(app).await;
    // A demo payment made before the switch to Stripe: a copy of a paid one.
    stripe_paid(&s, &payer).await;
    let mut demo = app.state.db.payments_of(&payer.id).await.unwrap().remove(0);
    demo.id = uuid::Uuid::now_v7().to_string();
    demo.provider = "demo".into();
    demo.provider_ref = None;
    demo.idempotency_key = None;
    app.state.db.insert_payment(&demo).await.unwrap();
    let body = json!({"reason": "money back"});
    assert_error(
        refund(app, &admin, &demo.id, body).await,
        409,
        "refund_not_possible",
    )
    .await;
    assert_eq!(count(app, "SELECT COUNT(*) FROM refunds").await, 0);
}

#[actix_web::test]
async fn a_refund_made_in_the_stripe_dashboard_is_applied_once() {
    let Some(s) = spawn_stripe_app().await else { return };
    let app = &s.app;
    let (admin, payer) = admin_and_payer(app).await;
    let (id, pi) = stripe_paid(&s, &payer).await;
    // One refund of ours first: its `re_…` comes back in the charge's list.
    let ours = assert_ok(refund(app, &admin, &id, json!({"amount": 1.0, "reason": "ours"})).await).await;
    let ours_re = ours["data"]["providerRef"].as_str().unwrap().to_owned();
    // Then one made in Stripe's dashboard.
    let (status, theirs) = s
        .fake
        .post("/v1/refunds", &[("payment_intent", &pi), ("amount", "150")])
        .await;
    assert_eq!(status, 200, "{theirs}");
    let intent = s.fake.get(&format!("/v1/payment_intents/{pi}")).await;
    let charge = intent["latest_charge"]
        .as_str()
        .or_else(|| intent["latest_charge"]["id"].as_str())
        .unwrap_or("ch_unknown")
        .to_owned();
    let refund_of = |re: &str, amount: i64| json!({"id": re, "object": "refund", "amount": amount, "status": "succeeded"});
    let event = json!({"id": format!("evt_{}", uuid::Uuid::new_v4().simple()), "type": "charge.refunded",
        "data": {"object": {"id": charge, "object": "charge", "payment_intent": pi, "amount_refunded": 250,
            "refunds": {"object": "list", "data": [refund_of(theirs["id"].as_str().unwrap(), 150), refund_of(&ours_re, 100)]}}}});
    // Delivered twice, and once more under another event id (Stripe may resend).
    for _ in 0..2 {
        assert_eq!(deliver(app, &s.secret, &event).await.status(), 200);
    }
    let mut again = event.clone();
    again["id"] = json!(format!("evt_{}", uuid::Uuid::new_v4().simple()));
    assert_eq!(deliver(app, &s.secret, &again).await.status(), 200);

    assert_eq!(payment(app, &payer, &id).await["refundedAmount"], json!(2.5));
    let notes: Vec<_> = invoices(app, &payer)
        .await
        .into_iter()
        .filter(|i| i["kind"] == "credit_note")
        .collect();
    assert_eq!(notes.len(), 2, "ours and the dashboard's, each once");
    assert_eq!(notes[0]["totalAmount"], json!(-1.5));
    let audit = audit_of(app, &admin, &payer).await;
    assert_eq!(audit[0]["action"], json!("payment.refunded"));
    assert_eq!(audit[0]["actor"], json!("stripe"));
    assert_eq!(audit[0]["actorId"], Value::Null);
    assert_eq!(audit[0]["after"]["creditNote"], notes[0]["number"]);
    assert_eq!(
        count(
            app,
            "SELECT COUNT(*) FROM audit_log WHERE action = 'payment.refunded'"
        )
        .await,
        2
    );
}

#[actix_web::test]
async fn a_dashboard_refund_of_a_monthly_plan_is_found_through_its_first_invoice() {
    let Some(s) = spawn_stripe_app().await else { return };
    let app = &s.app;
    let (_, payer) = admin_and_payer(app).await;
    let subscription = subscribe_monthly(&s, &payer, "base").await;
    let payments = assert_ok(app.get_auth("/api/payments", &payer.token).await).await;
    let id = payments["data"][0]["_id"].as_str().unwrap().to_owned();
    let invoices = s
        .fake
        .get(&format!("/v1/invoices?subscription={subscription}"))
        .await;
    let invoice = invoices["data"].as_array().unwrap().last().unwrap().clone();
    let pi = invoice["payment_intent"]
        .as_str()
        .or_else(|| invoice["payment_intent"]["id"].as_str())
        .unwrap()
        .to_owned();
    let (status, theirs) = s
        .fake
        .post("/v1/refunds", &[("payment_intent", &pi), ("amount", "100")])
        .await;
    assert_eq!(status, 200, "{theirs}");
    let event = json!({"id": format!("evt_{}", uuid::Uuid::new_v4().simple()), "type": "charge.refunded",
        "data": {"object": {"id": "ch_x", "object": "charge", "payment_intent": pi, "invoice": invoice["id"],
            "refunds": {"object": "list", "data": [
                {"id": theirs["id"], "object": "refund", "amount": 100, "status": "succeeded"}]}}}});
    assert_eq!(deliver(app, &s.secret, &event).await.status(), 200);
    assert_eq!(payment(app, &payer, &id).await["refundedAmount"], json!(1.0));
}

/// Makes every audit row fail to be written, as a database failing mid-transaction would.
async fn refuse_audit_rows(db: &Db, refuse: bool) {
    let statements: &[&str] = match (db, refuse) {
        (Db::Sqlite(..), true) => &["CREATE TRIGGER no_audit BEFORE INSERT ON audit_log \
             BEGIN SELECT RAISE(ABORT, 'no audit'); END"],
        (Db::Sqlite(..), false) => &["DROP TRIGGER no_audit"],
        (Db::Postgres(_), true) => &[
            "CREATE FUNCTION no_audit() RETURNS trigger LANGUAGE plpgsql AS \
             $$ BEGIN RAISE EXCEPTION 'no audit'; END $$",
            "CREATE TRIGGER no_audit BEFORE INSERT ON audit_log FOR EACH ROW EXECUTE FUNCTION no_audit()",
        ],
        (Db::Postgres(_), false) => &["DROP TRIGGER no_audit ON audit_log"],
    };
    for sql in statements {
        match db {
            Db::Sqlite(pool, _) => sqlx::query(sql).execute(pool).await.map(drop),
            Db::Postgres(pool) => sqlx::query(sql).execute(pool).await.map(drop),
        }
        .unwrap();
    }
}

#[actix_web::test]
async fn a_refund_whose_audit_row_cannot_be_written_leaves_nothing_behind() {
    let app = spawn_app().await;
    let (admin, payer) = admin_and_payer(&app).await;
    let id = demo_paid(&app, &payer, "base").await;

    // The refund row and the credit note are written, then the audit row fails: all goes.
    refuse_audit_rows(&app.state.db, true).await;
    let body = json!({"reason": "will fail", "endPlan": true});
    let failed = refund_with(&app, &admin, &id, Some("try-1"), body.clone()).await;
    assert_eq!(failed.status(), 500);
    assert_eq!(count(&app, "SELECT COUNT(*) FROM refunds").await, 0);
    assert_eq!(
        count(&app, "SELECT COUNT(*) FROM invoices WHERE kind = 'credit_note'").await,
        0
    );
    assert_eq!(
        count(
            &app,
            "SELECT COUNT(*) FROM audit_log WHERE action = 'payment.refunded'"
        )
        .await,
        0
    );
    assert_eq!(payment(&app, &payer, &id).await["refundedAmount"], json!(0.0));
    assert_eq!(plan_of(&app, &payer).await, "base", "the plan did not end either");

    // Once the database works again, the same request refunds, and the credit note takes
    // the number the failed one gave back.
    refuse_audit_rows(&app.state.db, false).await;
    let done = assert_ok(refund_with(&app, &admin, &id, Some("try-1"), body).await).await;
    assert_eq!(sequence(&done["data"]["creditNote"]), 2);
    assert_eq!(
        count(
            &app,
            "SELECT COUNT(*) FROM audit_log WHERE action = 'payment.refunded'"
        )
        .await,
        1
    );
}

#[actix_web::test]
async fn an_admin_downloads_any_users_invoice_and_credit_note_and_nobody_else_can() {
    let app = spawn_app().await;
    let (admin, payer) = admin_and_payer(&app).await;
    let id = demo_paid(&app, &payer, "base").await;
    let body = json!({"amount": 1.0, "reason": "goodwill", "endPlan": false});
    assert_ok(refund(&app, &admin, &id, body).await).await;
    let listed = invoices(&app, &payer).await;
    assert_eq!(listed.len(), 2);
    for invoice in &listed {
        let path = format!("/api/admin/invoices/{}.pdf", invoice["_id"].as_str().unwrap());
        let response = app.get_auth(&path, &admin.token).await;
        assert_eq!(response.status(), 200);
        let named = response.headers()["content-disposition"]
            .to_str()
            .unwrap()
            .to_owned();
        let kind = if invoice["kind"] == json!("credit_note") {
            "credit-note"
        } else {
            "invoice"
        };
        assert!(
            named.contains(&format!("{kind}-{}.pdf", invoice["number"].as_str().unwrap())),
            "{named}"
        );
        let text = pdf_text(&response.bytes().await.unwrap());
        assert!(text.contains(invoice["number"].as_str().unwrap()), "{text}");
        // The user is no admin: their own invoice is theirs at /api/invoices only.
        assert_error(app.get_auth(&path, &payer.token).await, 403, "forbidden").await;
    }
    assert_error(
        app.get_auth("/api/admin/invoices/nope.pdf", &admin.token).await,
        404,
        "not_found",
    )
    .await;
}
