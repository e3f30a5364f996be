use chat_contract::states::Service;
use chat_server::quota::window;
use serde_json::{json, Value};

use crate::helpers::{assert_error, assert_ok, spawn_app, spawn_app_with, TestApp};

async fn limits(app: &TestApp, token: &str) -> Value {
    assert_ok(app.get_auth("/api/usage/limits", token).await).await
}

/// Moves the clock to just after the next midnight (or the next month's first).
fn advance_to_next(app: &TestApp, month: bool) {
    let w = window(app.clock_now(), app.state.catalogue.timezone);
    let target = if month { w.month_end } else { w.day_end };
    app.clock.advance_ms(target - app.clock_now() + 1000);
}

#[actix_web::test]
async fn a_free_user_sees_fifty_responses_a_day_and_no_searches() {
    let app = spawn_app().await;
    let ann = app.register_ann().await;
    let body = limits(&app, &ann.token).await;
    assert_eq!(body["success"], json!(true));
    assert_eq!(body["hasActiveLimit"], json!(true));
    let info = &body["limitInfo"];
    assert_eq!(info["limitType"], json!("free"));
    assert!(info["startDate"].is_string() && info["endDate"].is_string());
    let responses = &info["services"]["responses"];
    assert_eq!(responses["daily"]["limit"], json!(50));
    assert_eq!(responses["daily"]["used"], json!(0));
    assert_eq!(responses["daily"]["remaining"], json!(50));
    assert_eq!(responses["monthly"]["unlimited"], json!(true));
    assert_eq!(responses["monthly"]["remaining"], json!(null));
    assert_eq!(info["services"]["searches"]["daily"]["limit"], json!(0));
    assert_eq!(info["services"]["images"]["monthly"]["limit"], json!(0));
    let response = app.client.get(app.url("/api/usage/limits")).send().await.unwrap();
    assert_error(response, 401, "unauthorized").await;
}

#[actix_web::test]
async fn the_fifty_first_response_of_the_day_is_refused_with_the_upgrade_text() {
    let app = spawn_app().await;
    let ann = app.register_ann().await;
    for _ in 0..50 {
        app.state.quotas.consume_response(&ann.id).await.unwrap();
    }
    let refused = app.state.quotas.consume_response(&ann.id).await.unwrap_err();
    assert_eq!(refused.code().as_str(), "limit_reached");
    assert_eq!(
        refused.message(chat_server::i18n::Lang::EnUs),
        "You have reached your daily message limit. Upgrade your plan to continue."
    );
    assert_eq!(
        refused.message(chat_server::i18n::Lang::HuHu),
        "Elérte a napi üzenetkorlátját. A folytatáshoz váltson nagyobb csomagra."
    );
    let info = limits(&app, &ann.token).await;
    assert_eq!(
        info["limitInfo"]["services"]["responses"]["daily"]["used"],
        json!(50)
    );
    assert_eq!(
        info["limitInfo"]["services"]["responses"]["daily"]["remaining"],
        json!(0)
    );
}

#[actix_web::test]
async fn each_plan_has_its_own_limits() {
    let app = spawn_app().await;
    let ann = app.register_ann().await;
    let pro_user = app.register("Pro", "pro@example.com", "secret1").await;
    app.set_plan(&ann.id, "base").await;
    app.set_plan(&pro_user.id, "pro").await;
    let base = limits(&app, &ann.token).await;
    assert_eq!(
        base["limitInfo"]["services"]["responses"]["daily"]["limit"],
        json!(300)
    );
    assert_eq!(
        base["limitInfo"]["services"]["searches"]["monthly"]["limit"],
        json!(300)
    );
    let pro = limits(&app, &pro_user.token).await;
    assert_eq!(
        pro["limitInfo"]["services"]["responses"]["daily"]["unlimited"],
        json!(true)
    );
    for _ in 0..60 {
        app.state.quotas.consume_response(&pro_user.id).await.unwrap();
    }
    // Searches are metered on their own.
    assert!(matches!(
        app.state
            .quotas
            .consume(&ann.id, Service::WebSearches)
            .await
            .unwrap(),
        chat_actors::quota::Decision::Allowed { .. }
    ));
    let free_user = app.register("Free", "free@example.com", "secret1").await;
    assert!(matches!(
        app.state
            .quotas
            .consume(&free_user.id, Service::WebSearches)
            .await
            .unwrap(),
        chat_actors::quota::Decision::Refused { .. }
    ));
}

#[actix_web::test]
async fn tabs_racing_at_forty_nine_of_fifty_cannot_both_pass() {
    let app = spawn_app().await;
    let ann = app.register_ann().await;
    for _ in 0..49 {
        app.state.quotas.consume_response(&ann.id).await.unwrap();
    }
    let racers = (0..30).map(|_| app.state.quotas.consume_response(&ann.id));
    let results = futures_util::future::join_all(racers).await;
    assert_eq!(results.iter().filter(|r| r.is_ok()).count(), 1);
    let info = limits(&app, &ann.token).await;
    assert_eq!(
        info["limitInfo"]["services"]["responses"]["daily"]["used"],
        json!(50)
    );
}

#[actix_web::test]
async fn two_instances_sharing_redis_count_together() {
    if std::env::var("TEST_REDIS_URL").is_err() {
        // In-process counters are for one instance; the suite on Redis runs this test.
        return;
    }
    let first = spawn_app().await;
    let ann = first.register_ann().await;
    let second = first.another_instance(|_| {}).await;
    for _ in 0..40 {
        first.state.quotas.consume_response(&ann.id).await.unwrap();
    }
    let racers = (0..30).map(|i| {
        let app = if i % 2 == 0 { &first } else { &second };
        app.state.quotas.consume_response(&ann.id)
    });
    let results = futures_util::future::join_all(racers).await;
    assert_eq!(results.iter().filter(|r| r.is_ok()).count(), 10);
}

#[actix_web::test]
async fn daily_counters_reset_at_midnight_and_monthly_ones_on_the_first() {
    let config = tempfile::tempdir().unwrap();
    let plans = include_str!("../../../config/plans.toml").replace(
        "limits.responses = { day = 50 }",
        "limits.responses = { day = 3, month = 5 }",
    );
    std::fs::write(config.path().join("plans.toml"), plans).unwrap();
    let dir = config.path().to_owned();
    let app = spawn_app_with(|s| {
        s.config_dir = dir;
        s.auth.remember_days = 400;
    })
    .await;
    let ann = app.register_ann().await;
    // Start on a month's first day, so two more days stay in the month.
    advance_to_next(&app, true);
    for _ in 0..3 {
        app.state.quotas.consume_response(&ann.id).await.unwrap();
    }
    assert!(app.state.quotas.consume_response(&ann.id).await.is_err());
    advance_to_next(&app, false);
    let info = limits(&app, &ann.token).await;
    assert_eq!(
        info["limitInfo"]["services"]["responses"]["daily"]["used"],
        json!(0)
    );
    assert_eq!(
        info["limitInfo"]["services"]["responses"]["monthly"]["used"],
        json!(3)
    );
    for _ in 0..2 {
        app.state.quotas.consume_response(&ann.id).await.unwrap();
    }
    let refused = app.state.quotas.consume_response(&ann.id).await.unwrap_err();
    assert_eq!(
        refused.message(chat_server::i18n::Lang::EnUs),
        "You have reached your monthly message limit. Upgrade your plan to continue."
    );
    advance_to_next(&app, true);
    app.state.quotas.consume_response(&ann.id).await.unwrap();
    let info = limits(&app, &ann.token).await;
    assert_eq!(
        info["limitInfo"]["services"]["responses"]["monthly"]["used"],
        json!(1)
    );
}

#[actix_web::test]
async fn a_refunded_unit_can_be_used_again() {
    let app = spawn_app().await;
    let ann = app.register_ann().await;
    for _ in 0..50 {
        app.state.quotas.consume_response(&ann.id).await.unwrap();
    }
    app.state
        .quotas
        .refund(&ann.id, Service::Responses)
        .await
        .unwrap();
    let info = limits(&app, &ann.token).await;
    assert_eq!(
        info["limitInfo"]["services"]["responses"]["daily"]["used"],
        json!(49)
    );
    app.state.quotas.consume_response(&ann.id).await.unwrap();
    assert!(app.state.quotas.consume_response(&ann.id).await.is_err());
}

#[actix_web::test]
async fn usage_survives_a_restart() {
    let app = spawn_app().await;
    let ann = app.register_ann().await;
    for _ in 0..50 {
        app.state.quotas.consume_response(&ann.id).await.unwrap();
    }
    // What a graceful stop does: the usage written behind reaches the database.
    app.state.quotas.flush().await.unwrap();
    let restarted = app.another_instance(|_| {}).await;
    assert!(restarted.state.quotas.consume_response(&ann.id).await.is_err());
    let info = limits(&restarted, &ann.token).await;
    assert_eq!(
        info["limitInfo"]["services"]["responses"]["daily"]["used"],
        json!(50)
    );
}

#[actix_web::test]
async fn usage_records_older_than_24_months_are_deleted_daily() {
    let app = spawn_app().await;
    let ann = app.register_ann().await;
    let db = &app.state.db;
    db.record_usage(&ann.id, "responses", "2020-01-15", 7)
        .await
        .unwrap();
    let today = window(app.clock_now(), app.state.catalogue.timezone).periods;
    db.record_usage(&ann.id, "responses", &today.day, 2)
        .await
        .unwrap();
    app.advance_minutes(24 * 60);
    app.run_scheduler().await;
    assert!(db
        .usage(&ann.id, "2020-01-15", "2020-01")
        .await
        .unwrap()
        .is_empty());
    let kept = db.usage(&ann.id, &today.day, &today.month).await.unwrap();
    assert_eq!(kept[&Service::Responses].day, 2);
}

#[actix_web::test]
async fn usage_written_behind_skips_a_deleted_account_and_keeps_the_others() {
    let app = spawn_app().await;
    let ann = app.register_ann().await;
    let bob = app.register("Bob", "bob@example.com", "Password-1234").await;
    app.state.quotas.consume_response(&ann.id).await.unwrap();
    app.state.quotas.consume_response(&bob.id).await.unwrap();
    app.state.db.delete_user(&ann.id, app.clock_now()).await.unwrap();
    // One batch holds both: the deleted account must not fail Bob's record.
    app.state.quotas.flush().await.unwrap();
    let today = window(app.clock_now(), app.state.catalogue.timezone).periods;
    let db = &app.state.db;
    let bobs = db.usage(&bob.id, &today.day, &today.month).await.unwrap();
    assert_eq!(bobs[&Service::Responses].day, 1);
    assert!(db
        .usage(&ann.id, &today.day, &today.month)
        .await
        .unwrap()
        .is_empty());
}
