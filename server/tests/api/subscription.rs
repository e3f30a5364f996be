use serde_json::{json, Value};

use crate::helpers::{assert_error, assert_ok, spawn_app_with, TestApp, TestUser};

const DAY_MINUTES: i64 = 24 * 60;

/// These tests move the clock months ahead; sessions outlast that so the same tokens
/// keep working.
async fn spawn_app() -> TestApp {
    spawn_app_with(|s| s.auth.remember_days = 400).await
}

async fn subscription(app: &TestApp, user: &TestUser) -> Value {
    assert_ok(app.get_auth("/api/subscription", &user.token).await).await
}

async fn change(app: &TestApp, user: &TestUser, body: Value) -> reqwest::Response {
    app.put_auth("/api/subscription/change", &user.token, body).await
}

/// A plan change carrying an `Idempotency-Key`, as a client retrying would send it.
async fn change_with_key(app: &TestApp, user: &TestUser, key: &str, body: Value) -> reqwest::Response {
    app.client
        .put(app.url("/api/subscription/change"))
        .bearer_auth(&user.token)
        .header("Idempotency-Key", key)
        .json(&body)
        .send()
        .await
        .unwrap()
}

/// The body of a GET as the user (the demo checkout page is HTML).
async fn text_of(app: &TestApp, path: &str, token: &str) -> String {
    let response = app
        .client
        .get(app.url(path))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    response.text().await.unwrap()
}

/// Upgrades through the demo checkout page's "Pay" button, logged in as its owner.
async fn buy(app: &TestApp, user: &TestUser, body: Value) -> Value {
    let started = assert_ok(change(app, user, body).await).await;
    assert_eq!(started["requiresPayment"], json!(true));
    let id = started["payment"]["_id"].as_str().unwrap();
    let paid = app
        .client
        .post(app.url(&format!("/api/payments/demo/{id}/pay")))
        .bearer_auth(&user.token)
        .send()
        .await
        .unwrap();
    assert_eq!(paid.status(), 303);
    assert_eq!(
        paid.headers()["location"],
        format!("/payment/status?paymentId={id}").as_str()
    );
    started
}

async fn payments(app: &TestApp, user: &TestUser) -> Value {
    assert_ok(app.get_auth("/api/payments", &user.token).await).await
}

#[actix_web::test]
async fn every_new_user_is_on_free() {
    let app = spawn_app().await;
    let ann = app.register_ann().await;
    let body = subscription(&app, &ann).await;
    assert_eq!(body["data"]["planType"], json!("free"));
    assert_eq!(body["data"]["status"], json!("active"));
    assert_eq!(body["data"]["endDate"], json!(null));
    assert!(body["data"]["_id"].as_str().is_some_and(|id| !id.is_empty()));
    assert_eq!(body["subscriptionPlan"]["planType"], json!("free"));
    assert_eq!(
        body["subscriptionPlan"]["limits"]["responseLimit"],
        json!({"daily": 50, "monthly": null})
    );
    assert_eq!(
        body["subscriptionPlan"]["features"]["openaiWebSearch"],
        json!(false)
    );
    assert_eq!(body["pendingSubscription"], json!(null));
    assert_eq!(body["pendingSubscriptionPlan"], json!(null));
}

#[actix_web::test]
async fn the_plan_catalogue_lists_net_prices_with_vat_apart() {
    let app = spawn_app().await;
    let body = assert_ok(app.client.get(app.url("/api/plans")).send().await.unwrap()).await;
    let plans = body["data"].as_array().unwrap();
    let names: Vec<&str> = plans.iter().map(|p| p["planType"].as_str().unwrap()).collect();
    assert_eq!(names, ["free", "base", "plus", "pro"]);
    assert_eq!(
        plans[1]["prices"]["EUR"],
        json!({"net": 5.0, "vat": 1.35, "total": 6.35})
    );
    assert_eq!(plans[3]["prices"]["HUF"]["net"], json!(6000.0));
    assert_eq!(plans[3]["maxImagesPerMessage"], json!(5));
    assert_eq!(body["vatRate"], json!(0.27));
}

#[actix_web::test]
async fn an_unknown_plan_is_refused_in_both_languages_and_nothing_changes() {
    let app = spawn_app().await;
    let ann = app.register_paying("ann@example.com").await;
    for bad in [json!({"planType": "gold"}), json!({}), json!({"planType": "PRO"})] {
        let error = assert_error(change(&app, &ann, bad).await, 400, "invalid_plan").await;
        assert_eq!(
            error["message"],
            json!("Invalid plan: choose free, base, plus or pro")
        );
    }
    assert_ok(
        app.put_auth("/api/settings", &ann.token, json!({"language": "hu-HU"}))
            .await,
    )
    .await;
    let error = assert_error(
        change(&app, &ann, json!({"planType": "gold"})).await,
        400,
        "invalid_plan",
    )
    .await;
    assert_eq!(
        error["message"],
        json!("Érvénytelen csomag: free, base, plus vagy pro választható")
    );
    assert_eq!(subscription(&app, &ann).await["data"]["planType"], json!("free"));
    assert_eq!(payments(&app, &ann).await["data"], json!([]));
}

#[actix_web::test]
async fn bad_payment_options_are_refused() {
    let app = spawn_app().await;
    let ann = app.register_paying("ann@example.com").await;
    let cases = [
        (
            json!({"planType": "base", "paymentMethod": "paypal"}),
            "invalid_payment_method",
        ),
        (
            json!({"planType": "base", "billingCycle": "weekly"}),
            "invalid_billing_cycle",
        ),
        (json!({"planType": "base", "currency": "USD"}), "invalid_currency"),
    ];
    for (body, code) in cases {
        assert_error(change(&app, &ann, body).await, 400, code).await;
    }
    assert_error(
        change(&app, &ann, json!({"planType": "free"})).await,
        409,
        "already_on_plan",
    )
    .await;
    assert_eq!(payments(&app, &ann).await["data"], json!([]));
}

#[actix_web::test]
async fn paying_needs_billing_info_first() {
    let app = spawn_app().await;
    let ann = app.register_ann().await;
    let error = assert_error(
        change(&app, &ann, json!({"planType": "base"})).await,
        400,
        "billing_info_required",
    )
    .await;
    assert_eq!(
        error["message"],
        json!("Please fill in your billing information before paying")
    );
    assert_eq!(payments(&app, &ann).await["data"], json!([]));
}

#[actix_web::test]
async fn an_upgrade_takes_effect_once_paid_and_renews_monthly() {
    let app = spawn_app().await;
    let ann = app.register_paying("ann@example.com").await;
    let started = assert_ok(
        change(
            &app,
            &ann,
            json!({"planType": "base", "paymentMethod": "credit_card"}),
        )
        .await,
    )
    .await;
    assert_eq!(started["payment"]["status"], json!("pending"));
    assert_eq!(started["payment"]["currency"], json!("EUR"));
    assert_eq!(started["payment"]["netAmount"], json!(5.0));
    assert_eq!(started["payment"]["vatAmount"], json!(1.35));
    assert_eq!(started["payment"]["totalAmount"], json!(6.35));
    // Not paid yet: still free.
    assert_eq!(subscription(&app, &ann).await["data"]["planType"], json!("free"));
    let checkout_url = started["checkoutUrl"].as_str().unwrap();
    let path = checkout_url
        .split_once("/api/")
        .map(|(_, p)| format!("/api/{p}"))
        .unwrap();
    let page = text_of(&app, &path, &ann.token).await;
    assert!(
        page.contains("Demo checkout") && page.contains("Pay 6.35 EUR") && page.contains("Base (monthly)"),
        "{page}"
    );
    // In the owner's language.
    assert_ok(
        app.put_auth("/api/settings", &ann.token, json!({"language": "hu-HU"}))
            .await,
    )
    .await;
    let page_hu = text_of(&app, &path, &ann.token).await;
    assert!(
        page_hu.contains(r#"<html lang="hu">"#)
            && page_hu.contains("Bemutató fizetés")
            && page_hu.contains("Fizetés 6,35 EUR")
            && page_hu.contains("Base (havi)")
            && !page_hu.contains("Demo checkout"),
        "{page_hu}"
    );
    assert_ok(
        app.put_auth("/api/settings", &ann.token, json!({"language": "en-US"}))
            .await,
    )
    .await;

    let id = started["payment"]["_id"].as_str().unwrap();
    app.pay_demo(&ann, id).await;
    let sub = subscription(&app, &ann).await;
    assert_eq!(sub["data"]["planType"], json!("base"));
    assert_eq!(sub["data"]["billingCycle"], json!("monthly"));
    assert_eq!(sub["data"]["autoRenew"], json!(true));
    let end = sub["data"]["endDate"].as_str().unwrap().to_owned();
    let payment = assert_ok(app.get_auth(&format!("/api/payments/{id}"), &ann.token).await).await;
    assert_eq!(payment["data"]["status"], json!("succeeded"));
    // A payment is applied once.
    let again = app
        .client
        .post(app.url(&format!("/api/payments/demo/{id}/pay")))
        .bearer_auth(&ann.token)
        .send()
        .await
        .unwrap();
    assert_error(again, 409, "payment_closed").await;

    // At the end of the month the demo provider charges again and the period moves on.
    app.advance_minutes(32 * DAY_MINUTES);
    assert_eq!(app.run_scheduler().await, 1);
    let sub = subscription(&app, &ann).await;
    assert_eq!(sub["data"]["planType"], json!("base"));
    assert!(sub["data"]["endDate"].as_str().unwrap() > end.as_str());
    let list = payments(&app, &ann).await;
    let kinds: Vec<(&str, &str)> = list["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["kind"].as_str().unwrap(), p["status"].as_str().unwrap()))
        .collect();
    assert_eq!(kinds, [("renewal", "succeeded"), ("checkout", "succeeded")]);
}

#[actix_web::test]
async fn hungarian_users_pay_in_forint_by_default() {
    let app = spawn_app().await;
    let ann = app.register_paying("ann@example.com").await;
    assert_ok(
        app.put_auth("/api/settings", &ann.token, json!({"language": "hu-HU"}))
            .await,
    )
    .await;
    let started = assert_ok(change(&app, &ann, json!({"planType": "base"})).await).await;
    assert_eq!(started["payment"]["currency"], json!("HUF"));
    assert_eq!(started["payment"]["netAmount"], json!(1500.0));
    assert_eq!(started["payment"]["vatAmount"], json!(405.0));
    assert_eq!(started["payment"]["totalAmount"], json!(1905.0));
}

#[actix_web::test]
async fn a_one_time_payment_gives_thirty_days_then_free() {
    let app = spawn_app().await;
    let ann = app.register_paying("ann@example.com").await;
    buy(&app, &ann, json!({"planType": "pro", "billingCycle": "one_time"})).await;
    let sub = subscription(&app, &ann).await;
    assert_eq!(sub["data"]["planType"], json!("pro"));
    assert_eq!(sub["data"]["autoRenew"], json!(false));
    app.advance_minutes(29 * DAY_MINUTES);
    assert_eq!(app.run_scheduler().await, 0);
    assert_eq!(subscription(&app, &ann).await["data"]["planType"], json!("pro"));
    app.advance_minutes(2 * DAY_MINUTES);
    assert_eq!(app.run_scheduler().await, 1);
    assert_eq!(subscription(&app, &ann).await["data"]["planType"], json!("free"));
    assert_eq!(payments(&app, &ann).await["data"].as_array().unwrap().len(), 1);
}

#[actix_web::test]
async fn a_downgrade_to_a_lower_paid_plan_waits_for_the_period_end_and_keeps_used_quota() {
    let app = spawn_app().await;
    let ann = app.register_paying("ann@example.com").await;
    buy(&app, &ann, json!({"planType": "plus"})).await;
    for _ in 0..3 {
        app.state.quotas.consume_response(&ann.id).await.unwrap();
    }
    let body = assert_ok(change(&app, &ann, json!({"planType": "base"})).await).await;
    assert_eq!(body["requiresPayment"], json!(false));
    assert_eq!(body["data"]["planType"], json!("plus"));
    assert_eq!(body["pendingSubscription"]["planType"], json!("base"));
    assert_eq!(
        body["pendingSubscription"]["activationDate"],
        body["data"]["endDate"]
    );
    assert_eq!(body["pendingSubscriptionPlan"]["planType"], json!("base"));
    // It renews at the lower plan's price, so it still renews.
    assert_eq!(body["data"]["autoRenew"], json!(true));
    assert_eq!(body["data"]["cancelAtPeriodEnd"], json!(false));
    let usage = assert_ok(app.get_auth("/api/usage/limits", &ann.token).await).await;
    assert_eq!(
        usage["limitInfo"]["services"]["responses"]["daily"]["used"],
        json!(3)
    );

    app.advance_minutes(32 * DAY_MINUTES);
    app.run_scheduler().await;
    let sub = subscription(&app, &ann).await;
    assert_eq!(sub["data"]["planType"], json!("base"));
    assert_eq!(sub["pendingSubscription"], json!(null));
    let renewal = &payments(&app, &ann).await["data"][0];
    assert_eq!(
        (renewal["kind"].clone(), renewal["planType"].clone()),
        (json!("renewal"), json!("base"))
    );
}

#[actix_web::test]
async fn a_downgrade_to_free_and_a_cancel_keep_access_until_the_end_date() {
    let app = spawn_app().await;
    let ann = app.register_paying("ann@example.com").await;
    let bob = app.register_paying("bob@example.com").await;
    buy(&app, &ann, json!({"planType": "base"})).await;
    buy(&app, &bob, json!({"planType": "base"})).await;

    let downgraded = assert_ok(change(&app, &ann, json!({"planType": "free"})).await).await;
    assert_eq!(downgraded["pendingSubscription"]["planType"], json!("free"));
    let cancelled = assert_ok(
        app.put_auth("/api/subscription/cancel", &bob.token, json!({}))
            .await,
    )
    .await;
    assert_eq!(cancelled["data"]["planType"], json!("base"));
    assert_eq!(cancelled["data"]["cancelAtPeriodEnd"], json!(true));
    assert_eq!(cancelled["data"]["autoRenew"], json!(false));

    app.advance_minutes(20 * DAY_MINUTES);
    app.run_scheduler().await;
    assert_eq!(subscription(&app, &ann).await["data"]["planType"], json!("base"));
    assert_eq!(subscription(&app, &bob).await["data"]["planType"], json!("base"));
    app.advance_minutes(12 * DAY_MINUTES);
    assert_eq!(app.run_scheduler().await, 2);
    for user in [&ann, &bob] {
        let sub = subscription(&app, user).await;
        assert_eq!(sub["data"]["planType"], json!("free"));
        assert_eq!(sub["data"]["endDate"], json!(null));
    }
    // No renewal was charged.
    assert_eq!(payments(&app, &ann).await["data"].as_array().unwrap().len(), 1);
}

#[actix_web::test]
async fn a_scheduled_change_can_be_taken_back() {
    let app = spawn_app().await;
    let ann = app.register_paying("ann@example.com").await;
    let error = assert_error(
        app.put_auth("/api/subscription/cancel", &ann.token, json!({}))
            .await,
        400,
        "no_paid_subscription",
    )
    .await;
    assert_eq!(error["message"], json!("You have no paid subscription to cancel"));
    assert_error(
        app.put_auth("/api/subscription/cancel-pending", &ann.token, json!({}))
            .await,
        400,
        "no_pending_change",
    )
    .await;

    buy(&app, &ann, json!({"planType": "base"})).await;
    assert_ok(
        app.put_auth("/api/subscription/cancel", &ann.token, json!({}))
            .await,
    )
    .await;
    let body = assert_ok(
        app.put_auth("/api/subscription/cancel-pending", &ann.token, json!({}))
            .await,
    )
    .await;
    assert_eq!(body["pendingSubscription"], json!(null));
    assert_eq!(body["data"]["autoRenew"], json!(true));
    app.advance_minutes(32 * DAY_MINUTES);
    app.run_scheduler().await;
    assert_eq!(subscription(&app, &ann).await["data"]["planType"], json!("base"));
}

#[actix_web::test]
async fn an_upgrade_while_a_downgrade_is_scheduled_replaces_it() {
    let app = spawn_app().await;
    let ann = app.register_paying("ann@example.com").await;
    buy(&app, &ann, json!({"planType": "plus"})).await;
    assert_ok(change(&app, &ann, json!({"planType": "base"})).await).await;
    buy(&app, &ann, json!({"planType": "pro"})).await;
    let sub = subscription(&app, &ann).await;
    assert_eq!(sub["data"]["planType"], json!("pro"));
    assert_eq!(sub["pendingSubscription"], json!(null));
}

#[actix_web::test]
async fn a_retried_upgrade_with_the_same_idempotency_key_makes_one_payment() {
    let app = spawn_app().await;
    let ann = app.register_paying("ann@example.com").await;
    let send = || change_with_key(&app, &ann, "upgrade-1", json!({"planType": "plus"}));
    let first = assert_ok(send().await).await;
    let second = assert_ok(send().await).await;
    assert_eq!(first["payment"]["_id"], second["payment"]["_id"]);
    assert_eq!(payments(&app, &ann).await["data"].as_array().unwrap().len(), 1);
}

#[actix_web::test]
async fn a_cancelled_checkout_changes_nothing_and_payments_are_private() {
    let app = spawn_app().await;
    let ann = app.register_paying("ann@example.com").await;
    let bob = app.register_paying("bob@example.com").await;
    let started = assert_ok(change(&app, &ann, json!({"planType": "base"})).await).await;
    let id = started["payment"]["_id"].as_str().unwrap();
    let cancelled = app
        .client
        .post(app.url(&format!("/api/payments/demo/{id}/cancel")))
        .bearer_auth(&ann.token)
        .send()
        .await
        .unwrap();
    assert_eq!(cancelled.status(), 303);
    assert_eq!(
        cancelled.headers()["location"],
        format!("/payment-cancel?paymentId={id}").as_str()
    );
    assert_eq!(subscription(&app, &ann).await["data"]["planType"], json!("free"));
    let payment = assert_ok(app.get_auth(&format!("/api/payments/{id}"), &ann.token).await).await;
    assert_eq!(payment["data"]["status"], json!("canceled"));
    let pay_late = app
        .client
        .post(app.url(&format!("/api/payments/demo/{id}/pay")))
        .bearer_auth(&ann.token)
        .send()
        .await
        .unwrap();
    assert_error(pay_late, 409, "payment_closed").await;
    assert_error(
        app.get_auth(&format!("/api/payments/{id}"), &bob.token).await,
        404,
        "not_found",
    )
    .await;
}

#[actix_web::test]
async fn the_scheduler_applies_what_fell_due_while_the_server_was_down() {
    let app = spawn_app().await;
    let ann = app.register_paying("ann@example.com").await;
    buy(&app, &ann, json!({"planType": "base"})).await;
    assert_ok(
        app.put_auth("/api/subscription/cancel", &ann.token, json!({}))
            .await,
    )
    .await;
    app.advance_minutes(40 * DAY_MINUTES);
    // A new instance starts: its scheduler runs at once, with no tick and no request.
    let restarted = app.another_instance(|_| {}).await;
    let mut plan = json!(null);
    for _ in 0..100 {
        plan = subscription(&restarted, &ann).await["data"]["planType"].clone();
        if plan == json!("free") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(plan, json!("free"));
}

#[actix_web::test]
async fn the_operator_command_puts_a_user_on_a_plan() {
    let app = spawn_app().await;
    let ann = app.register_ann().await;
    let run = |args: &[&str]| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_chat-server"));
        cmd.args(args)
            .env("DATA_DIR", app.data_dir.path())
            .env("CONFIG_DIR", app.data_dir.path().join("no-config"))
            .env("RUST_LOG", "warn");
        match &app.backends.database_url {
            Some(url) => cmd.env("DATABASE_URL", url),
            None => cmd.env_remove("DATABASE_URL"),
        };
        cmd.output().unwrap()
    };
    let out = run(&["users", "set-plan", "ann@example.com", "plus", "--days", "7"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("ann@example.com is now on plus"));
    let sub = subscription(&app, &ann).await;
    assert_eq!(sub["data"]["planType"], json!("plus"));
    assert_eq!(sub["data"]["autoRenew"], json!(false));
    assert!(sub["data"]["endDate"].is_string());

    let out = run(&["users", "set-plan", "nobody@example.com", "pro"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no user with e-mail"));
    let out = run(&["users", "set-plan", "ann@example.com", "gold"]);
    assert!(!out.status.success());
    assert_eq!(subscription(&app, &ann).await["data"]["planType"], json!("plus"));

    let out = run(&["users", "set-plan", "ann@example.com", "free"]);
    assert!(out.status.success());
    assert_eq!(subscription(&app, &ann).await["data"]["planType"], json!("free"));
}

#[actix_web::test]
async fn paying_an_old_checkout_late_never_moves_a_user_down() {
    let app = spawn_app().await;
    let ann = app.register_paying("ann@example.com").await;
    let base = assert_ok(change(&app, &ann, json!({"planType": "base"})).await).await;
    buy(&app, &ann, json!({"planType": "pro"})).await;
    let base_id = base["payment"]["_id"].as_str().unwrap();
    // Paying pro closed the other open checkout.
    let closed = assert_ok(
        app.get_auth(&format!("/api/payments/{base_id}"), &ann.token)
            .await,
    )
    .await;
    assert_eq!(closed["data"]["status"], json!("canceled"));
    let late = app
        .client
        .post(app.url(&format!("/api/payments/demo/{base_id}/pay")))
        .bearer_auth(&ann.token)
        .send()
        .await
        .unwrap();
    assert_error(late, 409, "payment_closed").await;
    assert_eq!(subscription(&app, &ann).await["data"]["planType"], json!("pro"));
}

#[actix_web::test]
async fn a_retry_after_the_payment_went_through_gets_the_same_payment() {
    let app = spawn_app().await;
    let ann = app.register_paying("ann@example.com").await;
    let send = || change_with_key(&app, &ann, "upgrade-2", json!({"planType": "plus"}));
    let first = assert_ok(send().await).await;
    let id = first["payment"]["_id"].as_str().unwrap();
    app.client
        .post(app.url(&format!("/api/payments/demo/{id}/pay")))
        .bearer_auth(&ann.token)
        .send()
        .await
        .unwrap();
    let retry = assert_ok(send().await).await;
    assert_eq!(retry["payment"]["_id"], json!(id));
    assert_eq!(retry["payment"]["status"], json!("succeeded"));
    assert_eq!(payments(&app, &ann).await["data"].as_array().unwrap().len(), 1);
}

#[actix_web::test]
async fn a_plan_that_does_not_renew_cannot_schedule_a_lower_paid_plan() {
    let app = spawn_app().await;
    let ann = app.register_paying("ann@example.com").await;
    buy(
        &app,
        &ann,
        json!({"planType": "plus", "billingCycle": "one_time"}),
    )
    .await;
    let error = assert_error(
        change(&app, &ann, json!({"planType": "base"})).await,
        400,
        "plan_not_renewing",
    )
    .await;
    assert_eq!(
        error["message"],
        json!("Your plan does not renew: choose a new plan when it ends")
    );
    assert_eq!(subscription(&app, &ann).await["pendingSubscription"], json!(null));
    // Ending it early to free is still a scheduled change.
    let body = assert_ok(change(&app, &ann, json!({"planType": "free"})).await).await;
    assert_eq!(body["pendingSubscription"]["planType"], json!("free"));
}
