//! Card payments through Stripe, against localstripe; and the locked-down demo routes.

use std::time::Duration;

use hmac::{Hmac, Mac};
use secrecy::SecretString;
use serde_json::{json, Value};
use sha2::Sha256;

use crate::helpers::{assert_error, assert_ok, spawn_app_with, TestApp, TestUser};
use crate::localstripe::{self, Fake};

/// A server on Stripe (localstripe), its webhook secret and the fake itself.
pub(crate) struct StripeApp {
    pub(crate) app: TestApp,
    pub(crate) fake: Fake,
    pub(crate) secret: String,
    /// The name of the webhook that sends localstripe's events to `app`, if any.
    webhook: Option<String>,
}

/// The server goes with the test; its webhook must not outlive it (see `retire_webhook`).
impl Drop for StripeApp {
    fn drop(&mut self) {
        if let Some(name) = &self.webhook {
            let url = self.app.url("/api/payments/stripe/webhook");
            let retired = self.fake.retire_webhook(name, &url, &self.secret);
            // Not a second panic in a failing test's unwinding: that would abort the run.
            assert!(
                retired || std::thread::panicking(),
                "localstripe did not retire webhook {name}"
            );
        }
    }
}

/// None when localstripe is not installed (outside CI): the test then passes as skipped.
pub(crate) async fn spawn_stripe_app() -> Option<StripeApp> {
    spawn_stripe_app_with(true).await
}

/// `webhooks: false` leaves the server without localstripe's deliveries.
async fn spawn_stripe_app_with(webhooks: bool) -> Option<StripeApp> {
    let base = localstripe::base_url().await?;
    let secret = format!("whsec_{}", uuid::Uuid::new_v4().simple());
    let (api_base, webhook_secret) = (base.clone(), secret.clone());
    let app = spawn_app_with(move |s| {
        s.auth.remember_days = 400;
        s.billing.stripe_secret_key = SecretString::from("sk_test_localstripe");
        s.billing.stripe_publishable_key = "pk_test_localstripe".into();
        s.billing.stripe_webhook_secret = SecretString::from(webhook_secret);
        s.billing.stripe_api_base = api_base.clone();
        s.billing.stripe_js_url = format!("{api_base}/js.stripe.com/v3/");
    })
    .await;
    let fake = Fake::new(&base);
    let webhook = webhooks.then(|| uuid::Uuid::new_v4().simple().to_string());
    if let Some(name) = &webhook {
        fake.register_webhook(name, &app.url("/api/payments/stripe/webhook"), &secret)
            .await;
    }
    Some(StripeApp {
        app,
        fake,
        secret,
        webhook,
    })
}

async fn subscription(app: &TestApp, user: &TestUser) -> Value {
    assert_ok(app.get_auth("/api/subscription", &user.token).await).await
}

pub(crate) async fn change(app: &TestApp, user: &TestUser, body: Value) -> Value {
    assert_ok(app.put_auth("/api/subscription/change", &user.token, body).await).await
}

/// Waits (localstripe delivers webhooks after a second) until `check` holds. One
/// localstripe serves every test of the run, so under the parallel suite a delivery can
/// take many seconds: the bound is generous, and met as soon as the check holds.
pub(crate) async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    for _ in 0..240 {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    panic!("timed out waiting until {what}");
}

pub(crate) async fn plan_of(app: &TestApp, user: &TestUser) -> String {
    subscription(app, user).await["data"]["planType"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// The user's Stripe customer with a saved default card, as a returning customer has:
/// localstripe charges a new subscription's first invoice to it at once (its fake
/// Stripe.js cannot attach a card to a subscription's first invoice).
async fn customer_with_card(s: &StripeApp, user: &TestUser) -> String {
    let pm = s.fake.card("4242424242424242").await;
    let (_, customer) = s
        .fake
        .post("/v1/customers", &[("metadata[user_id]", &user.id)])
        .await;
    let customer = customer["id"].as_str().unwrap().to_owned();
    let (status, body) = s
        .fake
        .post(
            &format!("/v1/payment_methods/{pm}/attach"),
            &[("customer", &customer)],
        )
        .await;
    assert_eq!(status, 200, "{body}");
    s.fake
        .post(
            &format!("/v1/customers/{customer}"),
            &[("invoice_settings[default_payment_method]", &pm)],
        )
        .await;
    s.app
        .state
        .db
        .insert_stripe_customer(&user.id, &customer)
        .await
        .unwrap();
    customer
}

/// Buys monthly `plan`; answers the Stripe subscription id once the plan is active.
pub(crate) async fn subscribe_monthly(s: &StripeApp, user: &TestUser, plan: &str) -> String {
    customer_with_card(s, user).await;
    let started = change(&s.app, user, json!({"planType": plan, "billingCycle": "monthly"})).await;
    assert!(started["clientSecret"].as_str().is_some(), "{started}");
    // The webhook activates the plan. One localstripe serves the whole parallel suite and
    // its deliveries can lag by a minute under load, so after 10 s the payment's status
    // page (which asks Stripe itself, as a returning tab would) is asked too, once a second.
    let path = format!("/api/payments/{}", started["payment"]["_id"].as_str().unwrap());
    let mut waited = 0u32;
    eventually("the monthly plan is active", || {
        waited += 1;
        let poll = waited > 40 && waited.is_multiple_of(4);
        let path = path.clone();
        async move {
            if poll {
                let _ = s.app.get_auth(&path, &user.token).await;
            }
            plan_of(&s.app, user).await == plan
        }
    })
    .await;
    let sub = s
        .app
        .state
        .db
        .subscription(&user.id, s.app.clock_now())
        .await
        .unwrap();
    sub.provider_subscription_id
        .expect("the stripe subscription is stored")
}

pub(crate) fn signature(secret: &str, payload: &str, t: i64) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(format!("{t}.{payload}").as_bytes());
    let sig: String = mac
        .finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("t={t},v1={sig}")
}

/// Delivers an event as Stripe would, signed with `secret` at the server's time.
pub(crate) async fn deliver(app: &TestApp, secret: &str, event: &Value) -> reqwest::Response {
    deliver_at(app, secret, event, app.clock_now() / 1000).await
}

async fn deliver_at(app: &TestApp, secret: &str, event: &Value, t: i64) -> reqwest::Response {
    let payload = event.to_string();
    app.client
        .post(app.url("/api/payments/stripe/webhook"))
        .header("Stripe-Signature", signature(secret, &payload, t))
        .header("Content-Type", "application/json")
        .body(payload)
        .send()
        .await
        .unwrap()
}

/// An `invoice.paid` event for a renewal of `subscription` from `start` (seconds).
fn renewal_paid(subscription: &str, price: &str, amount: i64, start: i64) -> Value {
    let invoice = format!("in_{}", uuid::Uuid::new_v4().simple());
    json!({
        "id": format!("evt_{}", uuid::Uuid::new_v4().simple()),
        "type": "invoice.paid",
        "data": {"object": {
            "id": invoice, "object": "invoice", "subscription": subscription,
            "amount_paid": amount, "currency": "eur", "status": "paid",
            "billing_reason": "subscription_cycle",
            "lines": {"data": [{"plan": {"id": price}, "price": {"id": price},
                                "period": {"start": start, "end": start + 30 * 86400}}]},
        }},
    })
}

async fn payments(app: &TestApp, user: &TestUser) -> Vec<Value> {
    assert_ok(app.get_auth("/api/payments", &user.token).await).await["data"]
        .as_array()
        .unwrap()
        .clone()
}

#[actix_web::test]
async fn the_demo_exploit_is_refused_paying_needs_the_owners_login() {
    let app = spawn_app_with(|_| {}).await;
    let config = assert_ok(
        app.client
            .get(app.url("/api/payments/config"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(
        config["data"],
        json!({"provider": "demo", "publishableKey": null, "jsUrl": null})
    );
    let eve = app.register_paying("eve@example.com").await;
    let bob = app.register_paying("bob@example.com").await;
    let started = change(&app, &eve, json!({"planType": "pro"})).await;
    assert_eq!(started["clientSecret"], Value::Null);
    assert!(started["checkoutUrl"].as_str().is_some());
    let id = started["payment"]["_id"].as_str().unwrap();
    let pay = format!("/api/payments/demo/{id}/pay");

    // No token: the pay URL alone is worth nothing.
    let anonymous = app.client.post(app.url(&pay)).send().await.unwrap();
    assert_error(anonymous, 401, "unauthorized").await;
    let page = app
        .client
        .get(app.url(&format!("/api/payments/demo/{id}")))
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), 401);
    // Another user's payment is not found.
    let other = app
        .client
        .post(app.url(&pay))
        .bearer_auth(&bob.token)
        .send()
        .await
        .unwrap();
    assert_error(other, 404, "not_found").await;
    let cancel = app
        .client
        .post(app.url(&format!("/api/payments/demo/{id}/cancel")))
        .bearer_auth(&bob.token)
        .send()
        .await
        .unwrap();
    assert_error(cancel, 404, "not_found").await;

    assert_eq!(plan_of(&app, &eve).await, "free");
    assert_eq!(plan_of(&app, &bob).await, "free");
    let payment = assert_ok(app.get_auth(&format!("/api/payments/{id}"), &eve.token).await).await;
    assert_eq!(payment["data"]["status"], json!("pending"));
}

#[actix_web::test]
async fn with_stripe_configured_every_demo_route_is_not_found() {
    let Some(s) = spawn_stripe_app().await else { return };
    let app = &s.app;
    let config = assert_ok(
        app.client
            .get(app.url("/api/payments/config"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(config["data"]["provider"], json!("stripe"));
    assert_eq!(config["data"]["publishableKey"], json!("pk_test_localstripe"));
    assert!(config["data"]["jsUrl"]
        .as_str()
        .unwrap()
        .ends_with("/js.stripe.com/v3/"));

    let eve = app.register_paying("eve@example.com").await;
    let started = change(app, &eve, json!({"planType": "pro", "billingCycle": "one_time"})).await;
    let id = started["payment"]["_id"].as_str().unwrap();
    for (method, path) in [
        ("GET", format!("/api/payments/demo/{id}")),
        ("POST", format!("/api/payments/demo/{id}/pay")),
        ("POST", format!("/api/payments/demo/{id}/cancel")),
    ] {
        let request = match method {
            "GET" => app.client.get(app.url(&path)),
            _ => app.client.post(app.url(&path)),
        };
        let response = request.bearer_auth(&eve.token).send().await.unwrap();
        assert_error(response, 404, "not_found").await;
    }
    assert_eq!(plan_of(app, &eve).await, "free");
}

#[actix_web::test]
async fn a_one_time_stripe_checkout_grants_the_plan_only_once_its_webhook_says_paid() {
    let Some(s) = spawn_stripe_app().await else { return };
    let app = &s.app;
    let ann = app.register_paying("ann@example.com").await;
    let started = change(
        app,
        &ann,
        json!({"planType": "plus", "billingCycle": "one_time", "currency": "EUR"}),
    )
    .await;
    assert_eq!(started["requiresPayment"], json!(true));
    assert_eq!(started["checkoutUrl"], Value::Null);
    let secret = started["clientSecret"]
        .as_str()
        .expect("a client secret")
        .to_owned();
    let id = started["payment"]["_id"].as_str().unwrap().to_owned();
    // Stripe holds a PaymentIntent for exactly the payment's total, VAT included.
    let pi = secret.split("_secret_").next().unwrap();
    let intent = s.fake.get(&format!("/v1/payment_intents/{pi}")).await;
    let total = (started["payment"]["totalAmount"].as_f64().unwrap() * 100.0).round() as i64;
    assert_eq!(intent["amount"], json!(total));
    assert_eq!(intent["currency"], json!("eur"));
    assert_eq!(intent["metadata"]["payment_id"], json!(id));

    // Started, not paid: nothing yet.
    assert_eq!(plan_of(app, &ann).await, "free");

    assert_eq!(s.fake.pay(&secret, "4242424242424242").await, 200);
    eventually("the webhook grants plus", || async {
        plan_of(app, &ann).await == "plus"
    })
    .await;
    let sub = subscription(app, &ann).await;
    assert_eq!(sub["data"]["billingCycle"], json!("one_time"));
    let payment = assert_ok(app.get_auth(&format!("/api/payments/{id}"), &ann.token).await).await;
    assert_eq!(payment["data"]["status"], json!("succeeded"));
    assert_eq!(payment["data"]["provider"], json!("stripe"));
}

#[actix_web::test]
async fn a_retried_stripe_checkout_gets_the_same_payment_intent() {
    let Some(s) = spawn_stripe_app().await else { return };
    let app = &s.app;
    let ann = app.register_paying("ann@example.com").await;
    let send = || async {
        let response = app
            .client
            .put(app.url("/api/subscription/change"))
            .bearer_auth(&ann.token)
            .header("Idempotency-Key", "retry-1")
            .json(&json!({"planType": "base", "billingCycle": "one_time"}))
            .send()
            .await
            .unwrap();
        assert_ok(response).await
    };
    let first = send().await;
    let second = send().await;
    assert_eq!(first["payment"]["_id"], second["payment"]["_id"]);
    assert_eq!(first["clientSecret"], second["clientSecret"]);
}

#[actix_web::test]
async fn a_declined_card_fails_the_payment_and_grants_nothing() {
    let Some(s) = spawn_stripe_app().await else { return };
    let app = &s.app;
    let ann = app.register_paying("ann@example.com").await;
    let started = change(app, &ann, json!({"planType": "pro", "billingCycle": "one_time"})).await;
    let id = started["payment"]["_id"].as_str().unwrap().to_owned();
    let declined = s
        .fake
        .pay(started["clientSecret"].as_str().unwrap(), "4000000000000341")
        .await;
    assert_eq!(declined, 402);
    let path = format!("/api/payments/{id}");
    eventually("the payment is failed", || async {
        assert_ok(app.get_auth(&path, &ann.token).await).await["data"]["status"] == "failed"
    })
    .await;
    assert_eq!(plan_of(app, &ann).await, "free");
}

#[actix_web::test]
async fn a_monthly_plan_starts_on_its_paid_invoice_and_renews_on_the_next_one_once() {
    let Some(s) = spawn_stripe_app().await else { return };
    let app = &s.app;
    let ann = app.register_paying("ann@example.com").await;
    let stripe_sub = subscribe_monthly(&s, &ann, "pro").await;
    let remote = s.fake.get(&format!("/v1/subscriptions/{stripe_sub}")).await;
    assert_eq!(remote["metadata"]["user_id"], json!(ann.id));
    let price = remote["items"]["data"][0]["plan"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let amount = remote["items"]["data"][0]["plan"]["amount"].as_i64().unwrap();
    let sub = subscription(app, &ann).await;
    assert_eq!(sub["data"]["billingCycle"], json!("monthly"));
    assert_eq!(sub["data"]["autoRenew"], json!(true));
    let first_end = app
        .state
        .db
        .subscription(&ann.id, app.clock_now())
        .await
        .unwrap()
        .end_date
        .unwrap();
    assert_eq!(payments(app, &ann).await.len(), 1);

    // Stripe charged the renewal: the period moves to the invoice's.
    let start = first_end / 1000;
    let event = renewal_paid(&stripe_sub, &price, amount, start);
    assert_ok(deliver(app, &s.secret, &event).await).await;
    let renewed = app.state.db.subscription(&ann.id, app.clock_now()).await.unwrap();
    assert_eq!(renewed.end_date, Some((start + 30 * 86400) * 1000));
    assert_eq!(renewed.plan_type.as_str(), "pro");
    let list = payments(app, &ann).await;
    assert_eq!(list.len(), 2);
    assert_eq!(list[0]["kind"], json!("renewal"));
    assert_eq!(list[0]["status"], json!("succeeded"));

    // The same event again, and the same invoice under another event id: applied once.
    assert_ok(deliver(app, &s.secret, &event).await).await;
    let mut again = event.clone();
    again["id"] = json!("evt_same_invoice_other_event");
    again["type"] = json!("invoice.payment_succeeded");
    assert_ok(deliver(app, &s.secret, &again).await).await;
    assert_eq!(payments(app, &ann).await.len(), 2);
    let after = app.state.db.subscription(&ann.id, app.clock_now()).await.unwrap();
    assert_eq!(after.end_date, renewed.end_date);
    // The checkout and the renewal each got their invoice, at once (no scheduler run).
    let invoices = assert_ok(app.get_auth("/api/invoices", &ann.token).await).await;
    let totals: Vec<_> = invoices["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["totalAmount"].clone())
        .collect();
    assert_eq!(totals.len(), 2, "{invoices}");
}

#[actix_web::test]
async fn a_wrong_or_stale_webhook_signature_is_refused_and_changes_nothing() {
    let Some(s) = spawn_stripe_app().await else { return };
    let app = &s.app;
    let ann = app.register_paying("ann@example.com").await;
    let stripe_sub = subscribe_monthly(&s, &ann, "base").await;
    let before = app.state.db.subscription(&ann.id, app.clock_now()).await.unwrap();
    let price = price_of(&s.fake, &stripe_sub).await;
    let event = renewal_paid(&stripe_sub, &price.0, price.1, before.end_date.unwrap() / 1000);

    let forged = deliver(app, "whsec_not_ours", &event).await;
    assert_error(forged, 400, "webhook_signature_invalid").await;
    let stale = deliver_at(app, &s.secret, &event, app.clock_now() / 1000 - 301).await;
    assert_error(stale, 400, "webhook_signature_invalid").await;
    let unsigned = app
        .client
        .post(app.url("/api/payments/stripe/webhook"))
        .body(event.to_string())
        .send()
        .await
        .unwrap();
    assert_error(unsigned, 400, "webhook_signature_invalid").await;
    // A renewal of the wrong amount is signed, yet grants nothing.
    let cheap = renewal_paid(&stripe_sub, &price.0, 1, before.end_date.unwrap() / 1000);
    assert_ok(deliver(app, &s.secret, &cheap).await).await;
    // An event type we do not use is taken and ignored.
    let unknown =
        json!({"id": "evt_unknown_type", "type": "customer.tax_id.created", "data": {"object": {}}});
    assert_ok(deliver(app, &s.secret, &unknown).await).await;

    let after = app.state.db.subscription(&ann.id, app.clock_now()).await.unwrap();
    assert_eq!(after.end_date, before.end_date);
    assert_eq!(payments(app, &ann).await.len(), 1);
}

#[actix_web::test]
async fn cancel_is_scheduled_at_stripe_for_the_period_end_and_can_be_taken_back() {
    let Some(s) = spawn_stripe_app().await else { return };
    let app = &s.app;
    let ann = app.register_paying("ann@example.com").await;
    let stripe_sub = subscribe_monthly(&s, &ann, "plus").await;
    let remote = || async { s.fake.get(&format!("/v1/subscriptions/{stripe_sub}")).await };

    let cancelled = assert_ok(
        app.put_auth("/api/subscription/cancel", &ann.token, json!({}))
            .await,
    )
    .await;
    assert_eq!(cancelled["data"]["cancelAtPeriodEnd"], json!(true));
    assert_eq!(remote().await["cancel_at_period_end"], json!(true));
    let kept = assert_ok(
        app.put_auth("/api/subscription/cancel-pending", &ann.token, json!({}))
            .await,
    )
    .await;
    assert_eq!(kept["data"]["cancelAtPeriodEnd"], json!(false));
    assert_eq!(remote().await["cancel_at_period_end"], json!(false));

    // A downgrade to free is a cancellation too; access lasts to the end date.
    let scheduled = change(app, &ann, json!({"planType": "free"})).await;
    assert_eq!(scheduled["pendingSubscription"]["planType"], json!("free"));
    assert_eq!(remote().await["cancel_at_period_end"], json!(true));
    assert_eq!(plan_of(app, &ann).await, "plus");
    app.advance_minutes(32 * 24 * 60);
    app.run_scheduler().await;
    assert_eq!(plan_of(app, &ann).await, "free");
    // Stripe then ends the subscription; nothing renews the plan any more.
    let ended = json!({"id": "evt_sub_deleted", "type": "customer.subscription.deleted",
                       "data": {"object": {"id": stripe_sub, "object": "subscription", "status": "canceled"}}});
    assert_ok(deliver(app, &s.secret, &ended).await).await;
    let sub = app.state.db.subscription(&ann.id, app.clock_now()).await.unwrap();
    assert_eq!(sub.provider_subscription_id, None);
    assert_eq!(sub.plan_type.as_str(), "free");
}

#[actix_web::test]
async fn deleting_the_account_ends_its_stripe_subscription_first_or_deletes_nothing() {
    let Some(s) = spawn_stripe_app().await else { return };
    let app = &s.app;
    let ann = app.register_paying("ann@example.com").await;
    let stripe_sub = subscribe_monthly(&s, &ann, "plus").await;
    let remote = || async { s.fake.get(&format!("/v1/subscriptions/{stripe_sub}")).await };
    assert_eq!(remote().await["status"], json!("active"));

    // An instance that cannot reach Stripe deletes nothing: the plan would renew on.
    let webhook_secret = s.secret.clone();
    let cut_off = app
        .another_instance(move |settings| {
            settings.billing.stripe_secret_key = SecretString::from("sk_test_localstripe");
            settings.billing.stripe_publishable_key = "pk_test_localstripe".into();
            settings.billing.stripe_webhook_secret = SecretString::from(webhook_secret);
            settings.billing.stripe_api_base = "http://127.0.0.1:1".into();
        })
        .await;
    let refused = cut_off.delete_auth("/api/auth/profile", &ann.token).await;
    assert_error(refused, 502, "payment_provider_error").await;
    assert_eq!(plan_of(app, &ann).await, "plus");
    assert_eq!(remote().await["status"], json!("active"));

    assert_ok(app.delete_auth("/api/auth/profile", &ann.token).await).await;
    assert_eq!(remote().await["status"], json!("canceled"));
    assert!(app.state.db.user_by_id(&ann.id).await.unwrap().is_none());
}

#[actix_web::test]
async fn an_unpaid_renewal_mails_the_user_and_ends_on_free_until_stripe_is_paid() {
    let Some(s) = spawn_stripe_app().await else { return };
    let app = &s.app;
    let ann = app.register_paying("ann@example.com").await;
    let stripe_sub = subscribe_monthly(&s, &ann, "pro").await;
    let end = app
        .state
        .db
        .subscription(&ann.id, app.clock_now())
        .await
        .unwrap()
        .end_date
        .unwrap();
    let failed = json!({"id": "evt_renewal_failed", "type": "invoice.payment_failed",
                        "data": {"object": {"id": "in_failed_1", "object": "invoice", "subscription": stripe_sub,
                                            "amount_paid": 0, "currency": "eur", "status": "open"}}});
    assert_ok(deliver(app, &s.secret, &failed).await).await;
    let mail = app.mailbox.take_for("ann@example.com").await;
    assert!(
        mail.subject().contains("could not be renewed"),
        "{}",
        mail.subject()
    );
    // Delivered again: the event is applied once, so one mail.
    assert_ok(deliver(app, &s.secret, &failed).await).await;
    assert_eq!(app.mailbox.count_for("ann@example.com"), 0);

    // Past the end date Stripe is still charging: the plan holds through the grace…
    app.advance_minutes((end - app.clock_now()) / 60_000 + 1);
    app.run_scheduler().await;
    assert_eq!(plan_of(app, &ann).await, "pro");
    // …and the period ends unpaid: free, never a month on credit.
    let grace_minutes = app.state.settings.billing.renewal_grace_hours * 60;
    app.advance_minutes(grace_minutes);
    app.run_scheduler().await;
    assert_eq!(plan_of(app, &ann).await, "free");

    // Stripe's retry goes through later: the plan is back for the paid period.
    let price = price_of(&s.fake, &stripe_sub).await;
    let paid = renewal_paid(&stripe_sub, &price.0, price.1, end / 1000);
    assert_ok(deliver(app, &s.secret, &paid).await).await;
    assert_eq!(plan_of(app, &ann).await, "pro");
}

#[actix_web::test]
async fn the_status_page_poll_confirms_a_payment_whose_webhook_never_came() {
    let Some(s) = spawn_stripe_app_with(false).await else {
        return;
    };
    let app = &s.app;
    let ann = app.register_paying("ann@example.com").await;
    let started = change(app, &ann, json!({"planType": "base", "billingCycle": "one_time"})).await;
    let id = started["payment"]["_id"].as_str().unwrap();
    let path = format!("/api/payments/{id}");
    // Not paid yet: Stripe says so, and the poll changes nothing.
    let pending = assert_ok(app.get_auth(&path, &ann.token).await).await;
    assert_eq!(pending["data"]["status"], json!("pending"));
    assert_eq!(
        s.fake
            .pay(started["clientSecret"].as_str().unwrap(), "4242424242424242")
            .await,
        200
    );
    let paid = assert_ok(app.get_auth(&path, &ann.token).await).await;
    assert_eq!(paid["data"]["status"], json!("succeeded"));
    assert_eq!(plan_of(app, &ann).await, "base");
}

#[actix_web::test]
async fn a_payment_event_for_the_wrong_amount_or_another_user_grants_nothing() {
    let Some(s) = spawn_stripe_app_with(false).await else {
        return;
    };
    let app = &s.app;
    let ann = app.register_paying("ann@example.com").await;
    let bob = app.register_paying("bob@example.com").await;
    let started = change(app, &ann, json!({"planType": "pro", "billingCycle": "one_time"})).await;
    let id = started["payment"]["_id"].as_str().unwrap();
    let pi = started["clientSecret"]
        .as_str()
        .unwrap()
        .split("_secret_")
        .next()
        .unwrap();
    let total = (started["payment"]["totalAmount"].as_f64().unwrap() * 100.0).round() as i64;
    let succeeded = |pi: &str, amount: i64, currency: &str, user: &str| {
        json!({"id": format!("evt_{}", uuid::Uuid::new_v4().simple()), "type": "payment_intent.succeeded",
               "data": {"object": {"id": pi, "object": "payment_intent", "status": "succeeded",
                                   "amount": amount, "amount_received": amount, "currency": currency,
                                   "metadata": {"payment_id": id, "user_id": user}}}})
    };
    for event in [
        succeeded(pi, 1, "eur", &ann.id),
        succeeded(pi, total, "huf", &ann.id),
        // Another PaymentIntent naming Ann's payment, as Bob's.
        succeeded("pi_not_the_payments", total, "eur", &bob.id),
    ] {
        assert_ok(deliver(app, &s.secret, &event).await).await;
    }
    assert_eq!(plan_of(app, &ann).await, "free");
    assert_eq!(plan_of(app, &bob).await, "free");
    // The right one does.
    assert_ok(deliver(app, &s.secret, &succeeded(pi, total, "eur", &ann.id)).await).await;
    assert_eq!(plan_of(app, &ann).await, "pro");
}

/// Makes `number` the card Stripe charges the user's customer without them.
async fn set_default_card(s: &StripeApp, user: &TestUser, number: &str) -> String {
    let customer = s.app.state.db.stripe_customer(&user.id).await.unwrap().unwrap();
    let pm = s.fake.card(number).await;
    let attach = format!("/v1/payment_methods/{pm}/attach");
    let (status, body) = s.fake.post(&attach, &[("customer", &customer)]).await;
    assert_eq!(status, 200, "{body}");
    let update = format!("/v1/customers/{customer}");
    let (status, body) = s
        .fake
        .post(&update, &[("invoice_settings[default_payment_method]", &pm)])
        .await;
    assert_eq!(status, 200, "{body}");
    customer
}

/// Monthly `plan` in EUR, VAT included, in cents, for a private buyer in the seller's
/// country (the payers of `register_paying`).
fn monthly_total(app: &TestApp, plan: chat_server::plans::PlanType) -> i64 {
    let net = app
        .state
        .catalogue
        .plan(plan)
        .net_price_minor(chat_server::plans::Currency::Eur);
    chat_server::plans::vat_of(net, app.state.billing.vat_for(None).rate).1
}

async fn stripe_subscriptions_of(fake: &Fake, customer: &str) -> Vec<Value> {
    fake.get(&format!("/v1/subscriptions?customer={customer}")).await["data"]
        .as_array()
        .unwrap()
        .clone()
}

/// Buys monthly `plan` on an app without localstripe's webhooks, confirmed by the status
/// page's poll; answers the Stripe customer.
async fn subscribe_monthly_by_poll(s: &StripeApp, user: &TestUser, plan: &str) -> String {
    let customer = customer_with_card(s, user).await;
    let started = change(&s.app, user, json!({"planType": plan, "billingCycle": "monthly"})).await;
    let path = format!("/api/payments/{}", started["payment"]["_id"].as_str().unwrap());
    eventually("the monthly plan is paid", || async {
        let paid = assert_ok(s.app.get_auth(&path, &user.token).await).await;
        paid["data"]["status"] == json!("succeeded")
    })
    .await;
    customer
}

#[actix_web::test]
async fn the_status_page_poll_completes_a_monthly_upgrade_whose_invoice_event_never_came() {
    let Some(s) = spawn_stripe_app_with(false).await else {
        return;
    };
    let app = &s.app;
    let ann = app.register_paying("ann@example.com").await;
    subscribe_monthly_by_poll(&s, &ann, "plus").await;
    let end = app
        .state
        .db
        .subscription(&ann.id, app.clock_now())
        .await
        .unwrap()
        .end_date;
    app.advance_minutes(24 * 60);
    let started = change(app, &ann, json!({"planType": "pro", "billingCycle": "monthly"})).await;
    assert_eq!(plan_of(app, &ann).await, "plus");
    let path = format!("/api/payments/{}", started["payment"]["_id"].as_str().unwrap());
    let polled = assert_ok(app.get_auth(&path, &ann.token).await).await;
    assert_eq!(polled["data"]["status"], json!("succeeded"), "{polled}");
    let after = app.state.db.subscription(&ann.id, app.clock_now()).await.unwrap();
    assert_eq!((after.plan_type.as_str(), after.end_date), ("pro", end));
}

#[actix_web::test]
async fn a_monthly_upgrade_moves_the_one_stripe_subscription_to_the_new_price_and_switches_when_its_invoice_is_paid(
) {
    let Some(s) = spawn_stripe_app_with(false).await else {
        return;
    };
    let app = &s.app;
    let ann = app.register_paying("ann@example.com").await;
    // Monthly base, confirmed by the status page's poll (no webhooks here: the test
    // delivers the upgrade's event itself, when it chooses).
    let customer = subscribe_monthly_by_poll(&s, &ann, "base").await;
    let before = app.state.db.subscription(&ann.id, app.clock_now()).await.unwrap();
    let stripe_sub = before.provider_subscription_id.clone().unwrap();
    let (base_total, pro_total) = (
        monthly_total(app, chat_server::plans::PlanType::Base),
        monthly_total(app, chat_server::plans::PlanType::Pro),
    );

    // Ten days into the month: a new period would end ten days later than this one.
    app.advance_minutes(10 * 24 * 60);
    let started = change(app, &ann, json!({"planType": "pro", "billingCycle": "monthly"})).await;
    // The saved card was charged by the server: nothing for the web client to confirm.
    assert_eq!(started["requiresPayment"], json!(true));
    assert_eq!(started["clientSecret"], Value::Null, "{started}");
    assert_eq!(started["checkoutUrl"], Value::Null);
    // The difference for the rest of the period, not a second full month.
    let charged = (started["payment"]["totalAmount"].as_f64().unwrap() * 100.0).round() as i64;
    assert_eq!(charged, pro_total - base_total, "{started}");
    assert_eq!(started["payment"]["status"], json!("pending"));

    // One Stripe subscription, now on pro's price; the plan here waits for the event.
    let subs = stripe_subscriptions_of(&s.fake, &customer).await;
    assert_eq!(subs.len(), 1, "{subs:?}");
    assert_eq!(subs[0]["id"], json!(stripe_sub));
    assert_eq!(
        price_of(&s.fake, &stripe_sub).await,
        (format!("chat-pro-monthly-eur-{pro_total}"), pro_total)
    );
    let invoice = s.fake.get(&format!("/v1/subscriptions/{stripe_sub}")).await["latest_invoice"]
        .as_str()
        .unwrap()
        .to_owned();
    let invoice = s.fake.get(&format!("/v1/invoices/{invoice}")).await;
    assert_eq!(invoice["status"], json!("paid"), "{invoice}");
    assert_eq!(invoice["amount_paid"], json!(charged));
    assert_eq!(plan_of(app, &ann).await, "base");

    let paid = json!({"id": format!("evt_{}", uuid::Uuid::new_v4().simple()), "type": "invoice.paid",
                      "data": {"object": invoice}});
    assert_ok(deliver(app, &s.secret, &paid).await).await;
    let after = app.state.db.subscription(&ann.id, app.clock_now()).await.unwrap();
    assert_eq!(after.plan_type.as_str(), "pro");
    // The billing cycle stays: paid through the same end, renewed by the same subscription.
    assert_eq!(after.end_date, before.end_date);
    assert_eq!(after.provider_subscription_id, Some(stripe_sub.clone()));
    let list = payments(app, &ann).await;
    assert_eq!(list.len(), 2, "{list:?}");
    assert_eq!(list[0]["planType"], json!("pro"));
    assert_eq!(list[0]["status"], json!("succeeded"));
    assert_eq!(list[0]["totalAmount"], started["payment"]["totalAmount"]);

    // Delivered again, and as Stripe's other event for the same invoice: applied once,
    // and never taken for a renewal.
    assert_ok(deliver(app, &s.secret, &paid).await).await;
    let mut again = paid.clone();
    again["id"] = json!(format!("evt_{}", uuid::Uuid::new_v4().simple()));
    again["type"] = json!("invoice.payment_succeeded");
    assert_ok(deliver(app, &s.secret, &again).await).await;
    assert_eq!(payments(app, &ann).await.len(), 2);
    let last = app.state.db.subscription(&ann.id, app.clock_now()).await.unwrap();
    assert_eq!((last.plan_type.as_str(), last.end_date), ("pro", before.end_date));
    assert_eq!(stripe_subscriptions_of(&s.fake, &customer).await.len(), 1);
}

#[actix_web::test]
async fn a_declined_monthly_upgrade_keeps_the_plan_and_puts_the_stripe_price_back() {
    let Some(s) = spawn_stripe_app().await else { return };
    let app = &s.app;
    let ann = app.register_paying("ann@example.com").await;
    let stripe_sub = subscribe_monthly(&s, &ann, "base").await;
    let before = app.state.db.subscription(&ann.id, app.clock_now()).await.unwrap();
    let base_price = price_of(&s.fake, &stripe_sub).await;
    // The saved card now declines charges.
    let customer = set_default_card(&s, &ann, "4000000000000341").await;

    let answer = change(app, &ann, json!({"planType": "pro", "billingCycle": "monthly"})).await;
    assert_eq!(answer["requiresPayment"], json!(true));
    assert_eq!(answer["payment"]["status"], json!("failed"), "{answer}");
    assert_eq!(answer["clientSecret"], Value::Null);

    // Whatever Stripe still reports, the plan stays base.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let after = app.state.db.subscription(&ann.id, app.clock_now()).await.unwrap();
    assert_eq!(after.plan_type.as_str(), "base");
    assert_eq!(after.end_date, before.end_date);
    assert_eq!(after.provider_subscription_id, Some(stripe_sub.clone()));
    // At Stripe: the same subscription, back on base's price, so the next renewal
    // charges base; no proration left over for it; the upgrade invoice voided.
    assert_eq!(price_of(&s.fake, &stripe_sub).await, base_price);
    let items = s.fake.get(&format!("/v1/invoiceitems?customer={customer}")).await;
    assert_eq!(items["data"], json!([]), "{items}");
    let invoices = s
        .fake
        .get(&format!("/v1/invoices?subscription={stripe_sub}"))
        .await;
    let statuses: Vec<&str> = invoices["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["void", "paid"], "{invoices}");
    // Only base's checkout was paid, once.
    let list = payments(app, &ann).await;
    let paid: Vec<&Value> = list
        .iter()
        .filter(|p| p["status"] == json!("succeeded"))
        .collect();
    assert_eq!(paid.len(), 1, "{list:?}");
    assert_eq!(paid[0]["planType"], json!("base"));
    assert_eq!(list[0]["status"], json!("failed"));
}

#[actix_web::test]
async fn a_cancellation_made_in_the_stripe_dashboard_is_followed_whatever_the_event_order() {
    let Some(s) = spawn_stripe_app().await else { return };
    let app = &s.app;
    let ann = app.register_paying("ann@example.com").await;
    let stripe_sub = subscribe_monthly(&s, &ann, "plus").await;
    let (status, _) = s
        .fake
        .post(
            &format!("/v1/subscriptions/{stripe_sub}"),
            &[("cancel_at_period_end", "true")],
        )
        .await;
    assert_eq!(status, 200);
    // An older snapshot arriving last still leads to Stripe's current state.
    let stale = json!({"id": "evt_updated_stale", "type": "customer.subscription.updated",
                       "data": {"object": {"id": stripe_sub, "object": "subscription", "cancel_at_period_end": false}}});
    assert_ok(deliver(app, &s.secret, &stale).await).await;
    let sub = subscription(app, &ann).await;
    assert_eq!(sub["data"]["cancelAtPeriodEnd"], json!(true));
    assert_eq!(sub["data"]["planType"], json!("plus"));
}

#[actix_web::test]
async fn a_downgrade_stripe_cannot_take_changes_nothing_here() {
    let Some(s) = spawn_stripe_app().await else { return };
    let app = &s.app;
    let ann = app.register_paying("ann@example.com").await;
    let stripe_sub = subscribe_monthly(&s, &ann, "pro").await;
    // localstripe refuses a price change without proration (`proration_behavior`), as
    // Stripe refuses calls when it is down: the downgrade must not be half made.
    let response = app
        .put_auth(
            "/api/subscription/change",
            &ann.token,
            json!({"planType": "base"}),
        )
        .await;
    assert_error(response, 502, "payment_provider_error").await;
    let sub = subscription(app, &ann).await;
    assert_eq!(sub["pendingSubscription"], Value::Null);
    assert_eq!(sub["data"]["planType"], json!("pro"));
    let remote = s.fake.get(&format!("/v1/subscriptions/{stripe_sub}")).await;
    assert_eq!(remote["cancel_at_period_end"], json!(false));
}

#[actix_web::test]
async fn a_renewal_paid_at_a_lower_price_switches_to_that_plan_at_the_period_end() {
    let Some(s) = spawn_stripe_app().await else { return };
    let app = &s.app;
    let ann = app.register_paying("ann@example.com").await;
    let stripe_sub = subscribe_monthly(&s, &ann, "pro").await;
    let (_, pro_amount) = price_of(&s.fake, &stripe_sub).await;
    // The base price made at start-up, as a scheduled downgrade puts on the subscription.
    let base = s
        .fake
        .get(&format!(
            "/v1/plans/chat-base-monthly-eur-{}",
            monthly_total(app, chat_server::plans::PlanType::Base)
        ))
        .await;
    let base_id = base["id"]
        .as_str()
        .expect("the base price exists at Stripe")
        .to_owned();
    let end = app
        .state
        .db
        .subscription(&ann.id, app.clock_now())
        .await
        .unwrap()
        .end_date
        .unwrap();
    let amount = base["amount"].as_i64().unwrap();
    assert!(amount < pro_amount);
    assert_ok(
        deliver(
            app,
            &s.secret,
            &renewal_paid(&stripe_sub, &base_id, amount, end / 1000),
        )
        .await,
    )
    .await;
    let sub = subscription(app, &ann).await;
    assert_eq!(sub["data"]["planType"], json!("base"));
    assert_eq!(sub["pendingSubscription"], Value::Null);
}

/// The price (id, amount) a Stripe subscription charges, read from localstripe.
async fn price_of(fake: &Fake, subscription: &str) -> (String, i64) {
    let remote = fake.get(&format!("/v1/subscriptions/{subscription}")).await;
    let plan = &remote["items"]["data"][0]["plan"];
    (
        plan["id"].as_str().unwrap().to_owned(),
        plan["amount"].as_i64().unwrap(),
    )
}
