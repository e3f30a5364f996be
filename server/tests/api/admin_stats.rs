//! The operator's stats (`GET /api/admin/stats`): every figure of a seeded range checked
//! against what was seeded, the days cut in the operator's time zone, and the refusals.
//!
//! Payments, the refund, the cancellations and the accounts go through the real calls;
//! model calls (written by the answers' metering, tested with it) and what the demo
//! provider cannot do (a failed renewal) are seeded with SQL.

use chat_server::clock::{DAY_MS, HOUR_MS, MINUTE_MS};
use chat_server::db::Db;
use chrono::{DateTime, Days, NaiveDate};
use serde_json::{json, Value};

use crate::helpers::{assert_error, assert_ok, spawn_app, spawn_app_with, TestApp, TestUser};
use crate::mnb_stub;

async fn exec(app: &TestApp, sql: &str) {
    match &app.state.db {
        Db::Sqlite(pool, _) => sqlx::query(sql).execute(pool).await.map(drop),
        Db::Postgres(pool) => sqlx::query(sql).execute(pool).await.map(drop),
    }
    .unwrap_or_else(|e| panic!("{sql}: {e}"));
}

/// One model call, as the answers' metering writes it.
struct Call<'a> {
    at: i64,
    user: Option<&'a str>,
    plan: &'a str,
    kind: &'a str,
    model: &'a str,
    message: Option<&'a str>,
    input: i64,
    output: i64,
    images: i64,
    cost_nanos: i64,
}

async fn seed_call(app: &TestApp, c: Call<'_>) {
    let text = |v: Option<&str>| v.map_or("NULL".to_owned(), |v| format!("'{v}'"));
    exec(
        app,
        &format!(
            "INSERT INTO model_calls (id, at, user_id, plan_type, kind, model, message_id, input_tokens, \
             output_tokens, images, estimated, outcome, cost_nanos) VALUES ('{id}', {at}, {user}, '{plan}', \
             '{kind}', '{model}', {message}, {input}, {output}, {images}, FALSE, 'complete', {cost})",
            id = uuid::Uuid::now_v7(),
            at = c.at,
            user = text(c.user),
            plan = c.plan,
            kind = c.kind,
            model = c.model,
            message = text(c.message),
            input = c.input,
            output = c.output,
            images = c.images,
            cost = c.cost_nanos,
        ),
    )
    .await;
}

/// A renewal closed at `at`, as the demo provider cannot fail one; its id.
async fn seed_payment(
    app: &TestApp,
    user: &str,
    plan: &str,
    status: &str,
    currency: &str,
    net: i64,
    at: i64,
) -> String {
    let id = uuid::Uuid::now_v7();
    exec(
        app,
        &format!(
            "INSERT INTO payments (id, user_id, plan_type, billing_cycle, kind, status, currency, net_amount, \
             vat_rate, vat_amount, total_amount, provider, payment_method, created_at, completed_at) \
             VALUES ('{id}', '{user}', '{plan}', 'monthly', 'renewal', '{status}', '{currency}', {net}, 0, 0, \
             {net}, 'demo', 'credit_card', {at}, {at})",
        ),
    )
    .await;
    id.to_string()
}

/// Moves the test's clock on to the next 12:00 UTC, so that what the test does now
/// happens on one UTC day and one Budapest day; answers that day.
fn to_noon(app: &TestApp) -> NaiveDate {
    let now = app.clock_now();
    let noon = now - now.rem_euclid(DAY_MS) + 12 * HOUR_MS;
    let noon = if noon > now { noon } else { noon + DAY_MS };
    app.clock.advance_ms(noon - now);
    DateTime::from_timestamp_millis(noon).unwrap().date_naive()
}

fn utc(date: NaiveDate, hours: i64, minutes: i64) -> i64 {
    date.and_hms_opt(0, 0, 0).unwrap().and_utc().timestamp_millis() + hours * HOUR_MS + minutes * MINUTE_MS
}

async fn stats(app: &TestApp, admin: &TestUser, query: &str) -> Value {
    assert_ok(
        app.get_auth(&format!("/api/admin/stats{query}"), &admin.token)
            .await,
    )
    .await["data"]
        .clone()
}

/// Starts a checkout on the demo provider and pays it: `body` as the subscription page sends.
async fn buy(app: &TestApp, user: &TestUser, body: Value) -> String {
    let started = assert_ok(app.put_auth("/api/subscription/change", &user.token, body).await).await;
    let id = started["payment"]["_id"].as_str().unwrap().to_owned();
    app.pay_demo(user, &id).await;
    id
}

fn eur(nanos: i64) -> f64 {
    nanos as f64 / 1e9
}

/// Compares numbers to a billionth (money and cost are sums of f64), the rest exactly.
#[track_caller]
fn assert_same(actual: &Value, expected: &Value) {
    match (actual, expected) {
        (Value::Number(a), Value::Number(e)) => {
            let (a, e) = (a.as_f64().unwrap(), e.as_f64().unwrap());
            assert!((a - e).abs() < 1e-9, "{a} != {e}");
        }
        (Value::Object(a), Value::Object(e)) => {
            let keys = |o: &serde_json::Map<String, Value>| o.keys().cloned().collect::<Vec<_>>();
            assert_eq!(keys(a), keys(e), "in {actual}");
            for (k, v) in e {
                assert_same(&a[k], v);
            }
        }
        (Value::Array(a), Value::Array(e)) => {
            assert_eq!(a.len(), e.len(), "{actual} != {expected}");
            for (a, e) in a.iter().zip(e) {
                assert_same(a, e);
            }
        }
        _ => assert_eq!(actual, expected),
    }
}

#[allow(clippy::too_many_arguments)]
fn day(
    date: NaiveDate,
    sign_ups: u32,
    active: u32,
    messages: u32,
    tokens: (u64, u64),
    cost_nanos: i64,
    subs: (u32, u32, u32),
    revenue: (f64, f64),
    refunds: (f64, f64),
) -> Value {
    json!({
        "date": date.to_string(), "signUps": sign_ups, "activeUsers": active, "messages": messages,
        "inputTokens": tokens.0, "outputTokens": tokens.1, "cost": eur(cost_nanos),
        "newSubscriptions": subs.0, "cancelled": subs.1, "failedRenewals": subs.2,
        "revenue": {"eur": revenue.0, "huf": revenue.1}, "refunds": {"eur": refunds.0, "huf": refunds.1},
    })
}

#[actix_web::test]
async fn the_stats_of_a_range_are_what_was_seeded_in_utc_and_in_budapest() {
    let (mnb, _stub) = mnb_stub::start("400,00");
    let app = spawn_app_with(move |s| s.billing.huf_rate_url = mnb).await;
    let today = to_noon(&app);
    let d = |back: u64| today - Days::new(back);

    let ada = app.register("Ada", "ada@example.com", "secret1").await;
    app.grant_admin("ada@example.com").await;
    let ann = app.register_paying("ann@example.com").await;
    let bob = app.register_paying("bob@example.com").await;
    let cy = app.register_paying("cy@example.com").await;
    let dan = app.register("Dan", "dan@example.com", "secret1").await;
    // Bob signed up two days ago, Dan long before the range.
    exec(
        &app,
        &format!(
            "UPDATE users SET created_at = {} WHERE id = '{}'",
            utc(d(2), 10, 0),
            bob.id
        ),
    )
    .await;
    exec(
        &app,
        &format!(
            "UPDATE users SET created_at = {} WHERE id = '{}'",
            utc(d(40), 10, 0),
            dan.id
        ),
    )
    .await;

    // Today: Ann buys plus monthly in euros, cancels it, and is refunded half of it
    // (6.35 of 12.70 with 27 % VAT: 5.00 net). Bob buys base monthly in forints, cancels
    // and takes it back. Cy buys pro for 30 days, then deletes the account. Dan gets pro
    // from an operator (no payment).
    let ann_payment = buy(&app, &ann, json!({"planType": "plus", "currency": "EUR"})).await;
    buy(&app, &bob, json!({"planType": "base", "currency": "HUF"})).await;
    buy(
        &app,
        &cy,
        json!({"planType": "pro", "billingCycle": "one_time", "currency": "EUR"}),
    )
    .await;
    app.set_plan(&dan.id, "pro").await;
    assert_ok(
        app.put_auth("/api/subscription/cancel", &ann.token, json!({}))
            .await,
    )
    .await;
    assert_ok(
        app.put_auth("/api/subscription/cancel", &bob.token, json!({}))
            .await,
    )
    .await;
    assert_ok(
        app.put_auth("/api/subscription/cancel-pending", &bob.token, json!({}))
            .await,
    )
    .await;
    let refund = json!({"amount": 6.35, "reason": "half a month of outage", "endPlan": false});
    assert_ok(
        app.client
            .post(app.url(&format!("/api/admin/payments/{ann_payment}/refund")))
            .bearer_auth(&ada.token)
            .json(&refund)
            .send()
            .await
            .unwrap(),
    )
    .await;
    // Yesterday: a renewal in forints, and one that failed; neither a pending nor a
    // canceled payment counts.
    seed_payment(
        &app,
        &ann.id,
        "plus",
        "succeeded",
        "HUF",
        300_000,
        utc(d(1), 10, 0),
    )
    .await;
    seed_payment(&app, &ann.id, "plus", "failed", "EUR", 1_000, utc(d(1), 10, 5)).await;
    seed_payment(&app, &ann.id, "plus", "canceled", "EUR", 1_000, utc(d(1), 10, 6)).await;
    let pending = seed_payment(&app, &ann.id, "plus", "succeeded", "EUR", 1_000, utc(d(1), 10, 7)).await;
    exec(
        &app,
        &format!("UPDATE payments SET status = 'pending', completed_at = NULL WHERE id = '{pending}'"),
    )
    .await;

    let call = |at, user, plan, kind, model, message, input, output, images, cost_nanos| Call {
        at,
        user,
        plan,
        kind,
        model,
        message,
        input,
        output,
        images,
        cost_nanos,
    };
    let (a, b, c) = (Some(ann.id.as_str()), Some(bob.id.as_str()), Some(cy.id.as_str()));
    for seeded in [
        // Two days ago: Ann's answer and its title; at 23:30 UTC another answer, which
        // is yesterday in Budapest.
        call(
            utc(d(2), 10, 0),
            a,
            "free",
            "answer",
            "gpt-4o-mini",
            Some("m1"),
            100,
            50,
            0,
            1_000_000,
        ),
        call(
            utc(d(2), 10, 1),
            a,
            "free",
            "title",
            "gpt-4o-mini",
            Some("m1"),
            20,
            5,
            0,
            100_000,
        ),
        call(
            utc(d(2), 23, 30),
            a,
            "plus",
            "answer",
            "gpt-4o",
            Some("m2"),
            1000,
            500,
            0,
            10_000_000,
        ),
        // Yesterday: Bob's answer with a search step, an embedding of a document, and
        // Cy's answer that was an image.
        call(
            utc(d(1), 9, 0),
            b,
            "plus",
            "answer",
            "gpt-4o",
            Some("m3"),
            2000,
            1000,
            0,
            20_000_000,
        ),
        call(
            utc(d(1), 9, 0),
            b,
            "plus",
            "search",
            "gpt-4o",
            Some("m3"),
            300,
            30,
            0,
            3_000_000,
        ),
        call(
            utc(d(1), 9, 1),
            b,
            "plus",
            "embedding",
            "text-embedding-3-small",
            None,
            5000,
            0,
            0,
            100_000,
        ),
        call(
            utc(d(1), 15, 0),
            c,
            "base",
            "image",
            "gpt-image-1",
            Some("m4"),
            50,
            0,
            1,
            40_000_000,
        ),
        // Today: Cy's answer, and Ann's.
        call(
            utc(d(0), 8, 0),
            c,
            "base",
            "answer",
            "gpt-4o-mini",
            Some("m5"),
            10,
            10,
            0,
            10_000,
        ),
        call(
            utc(d(0), 11, 0),
            a,
            "pro",
            "answer",
            "gpt-4o",
            Some("m6"),
            400,
            200,
            0,
            5_000_000,
        ),
        // Before the range: Ada five days ago (weekly), Dan 20 days ago (monthly), Ada
        // 40 days ago (neither).
        call(
            utc(d(5), 12, 0),
            Some(&ada.id),
            "free",
            "answer",
            "gpt-4o-mini",
            Some("m7"),
            1,
            1,
            0,
            2_000_000,
        ),
        call(
            utc(d(20), 12, 0),
            Some(&dan.id),
            "free",
            "answer",
            "gpt-4o-mini",
            Some("m8"),
            1,
            1,
            0,
            3_000_000,
        ),
        call(
            utc(d(40), 12, 0),
            Some(&ada.id),
            "free",
            "answer",
            "gpt-4o-mini",
            Some("m9"),
            1,
            1,
            0,
            1,
        ),
    ] {
        seed_call(&app, seeded).await;
    }
    // Cy goes: the costs and the payment stay, without the account.
    assert_ok(app.delete_auth("/api/auth/profile", &cy.token).await).await;

    let range = format!("?from={}&to={}&by=day", d(2), d(0));
    let got = stats(&app, &ada, &range).await;
    let expected = json!({
        "from": d(2).to_string(), "to": d(0).to_string(), "timeZone": "UTC",
        "days": [
            day(d(2), 1, 1, 2, (1120, 555), 11_100_000, (0, 0, 0), (0.0, 0.0), (0.0, 0.0)),
            day(d(1), 0, 1, 2, (7350, 1030), 63_100_000, (0, 0, 1), (0.0, 3000.0), (0.0, 0.0)),
            day(d(0), 3, 1, 2, (410, 210), 5_010_000, (3, 1, 0), (30.0, 1500.0), (5.0, 0.0)),
        ],
        // Cy's account is gone: their answers count, but not as an active user.
        "activeUsers": {"daily": 1, "weekly": 3, "monthly": 4},
        "byModel": [
            {"model": "gpt-image-1", "messages": 1, "calls": 1, "inputTokens": 50, "outputTokens": 0,
             "images": 1, "cost": eur(40_000_000)},
            {"model": "gpt-4o", "messages": 3, "calls": 4, "inputTokens": 3700, "outputTokens": 1730,
             "images": 0, "cost": eur(38_000_000)},
            {"model": "gpt-4o-mini", "messages": 2, "calls": 3, "inputTokens": 130, "outputTokens": 65,
             "images": 0, "cost": eur(1_110_000)},
            {"model": "text-embedding-3-small", "messages": 0, "calls": 1, "inputTokens": 5000,
             "outputTokens": 0, "images": 0, "cost": eur(100_000)},
        ],
        // Forints at MNB's 400.00 a euro.
        "byPlan": [
            {"planType": "free", "messages": 1, "inputTokens": 120, "outputTokens": 55, "cost": eur(1_100_000),
             "revenue": {"eur": 0.0, "huf": 0.0}, "grossMargin": -eur(1_100_000)},
            {"planType": "base", "messages": 2, "inputTokens": 60, "outputTokens": 10, "cost": eur(40_010_000),
             "revenue": {"eur": 0.0, "huf": 1500.0}, "grossMargin": 1500.0 / 400.0 - eur(40_010_000)},
            {"planType": "plus", "messages": 2, "inputTokens": 8300, "outputTokens": 1530, "cost": eur(33_100_000),
             "revenue": {"eur": 5.0, "huf": 3000.0}, "grossMargin": 5.0 + 3000.0 / 400.0 - eur(33_100_000)},
            {"planType": "pro", "messages": 1, "inputTokens": 400, "outputTokens": 200, "cost": eur(5_000_000),
             "revenue": {"eur": 20.0, "huf": 0.0}, "grossMargin": 20.0 - eur(5_000_000)},
        ],
        "topUsers": [
            {"_id": null, "email": null, "planType": "base", "messages": 2, "tokens": 70, "cost": eur(40_010_000)},
            {"_id": bob.id, "email": "bob@example.com", "planType": "plus", "messages": 1, "tokens": 8330,
             "cost": eur(23_100_000)},
            {"_id": ann.id, "email": "ann@example.com", "planType": "pro", "messages": 3, "tokens": 2275,
             "cost": eur(16_100_000)},
        ],
        // Cy's plan went with the account; Dan's is an operator's grant.
        "subscriptions": [
            {"planType": "base", "billingCycle": "monthly", "count": 1},
            {"planType": "plus", "billingCycle": "monthly", "count": 1},
            {"planType": "pro", "billingCycle": "one_time", "count": 1},
        ],
        // Only Bob's plan renews (Ann's is cancelled).
        "mrr": {"eur": 0.0, "huf": 1500.0},
    });
    assert_same(&got, &expected);

    // In Budapest, the answer at 23:30 UTC two days ago is yesterday's.
    let got = stats(&app, &ada, &format!("{range}&tz=Europe/Budapest")).await;
    assert_eq!(got["timeZone"], json!("Europe/Budapest"));
    let mut days = expected["days"].clone();
    days[0] = day(
        d(2),
        1,
        1,
        1,
        (120, 55),
        1_100_000,
        (0, 0, 0),
        (0.0, 0.0),
        (0.0, 0.0),
    );
    days[1] = day(
        d(1),
        0,
        2,
        3,
        (8350, 1530),
        73_100_000,
        (0, 0, 1),
        (0.0, 3000.0),
        (0.0, 0.0),
    );
    assert_same(&got["days"], &days);
    for same in [
        "activeUsers",
        "byModel",
        "byPlan",
        "topUsers",
        "subscriptions",
        "mrr",
    ] {
        assert_same(&got[same], &expected[same]);
    }

    // By default: the 30 days ending today, zeros included.
    let got = stats(&app, &ada, "").await;
    assert_eq!(
        (got["from"].as_str(), got["to"].as_str()),
        (Some(&*d(29).to_string()), Some(&*d(0).to_string()))
    );
    let days = got["days"].as_array().unwrap();
    assert_eq!(days.len(), 30);
    assert_same(
        &days[20],
        &day(d(9), 0, 0, 0, (0, 0), 0, (0, 0, 0), (0.0, 0.0), (0.0, 0.0)),
    );
    assert_same(&days[29], &expected["days"][2]);
    assert_eq!(days[9]["messages"], json!(1), "Dan's answer 20 days ago");

    // The hours read are summed again while calls may still come for them: an answer
    // written now for 20 minutes ago counts at once, by day, model, plan and user.
    let late = app.clock_now() - 20 * MINUTE_MS;
    seed_call(
        &app,
        call(late, a, "pro", "answer", "gpt-4o", Some("m10"), 1, 2, 0, 7),
    )
    .await;
    let got = stats(&app, &ada, &range).await;
    let mut today = expected["days"][2].clone();
    today["messages"] = json!(3);
    today["inputTokens"] = json!(411);
    today["outputTokens"] = json!(212);
    today["cost"] = json!(eur(5_010_007));
    assert_same(&got["days"][2], &today);
    assert_eq!(got["byModel"][1]["messages"], json!(4));
    assert_eq!(got["byPlan"][3]["messages"], json!(2));
    assert_eq!(got["topUsers"][2]["messages"], json!(4));
}

#[actix_web::test]
async fn only_admins_get_stats_and_each_wrong_parameter_is_named() {
    let app = spawn_app().await;
    let ada = app.register("Ada", "ada@example.com", "secret1").await;
    app.grant_admin("ada@example.com").await;
    let bob = app.register("Bob", "bob@example.com", "secret1").await;

    let anonymous = app.client.get(app.url("/api/admin/stats")).send().await.unwrap();
    assert_error(anonymous, 401, "unauthorized").await;
    assert_error(
        app.get_auth("/api/admin/stats", &bob.token).await,
        403,
        "forbidden",
    )
    .await;

    for (query, field) in [
        ("?from=2026-02-30", "from"),
        ("?from=yesterday", "from"),
        ("?to=2026-13-01", "to"),
        ("?from=2026-03-02&to=2026-03-01", "to"),
        ("?from=2025-01-01&to=2026-01-02", "from"),
        ("?tz=Mars/Olympus", "tz"),
        ("?by=week", "by"),
    ] {
        let body = assert_error(
            app.get_auth(&format!("/api/admin/stats{query}"), &ada.token)
                .await,
            400,
            "validation_error",
        )
        .await;
        assert_eq!(body["field"], json!(field), "{query}: {body}");
    }
    // The longest range: 366 days.
    let leap = stats(&app, &ada, "?from=2024-01-01&to=2024-12-31&tz=Asia/Kathmandu").await;
    assert_eq!(leap["days"].as_array().unwrap().len(), 366);
}
