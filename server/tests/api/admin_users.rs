//! The operator's users (`/api/admin/users`): the table with its search, filters and
//! pages, a user's page, a plan granted and a day's usage given back, each with its audit
//! row and announced to the user's open tabs; and every refusal.

use chat_contract::states::Service;
use chat_server::db::Db;
use chat_server::operator::{seed, set_plan, Seed};
use serde_json::{json, Value};

use crate::helpers::{assert_error, assert_ok, spawn_app, TestApp, TestUser};
use crate::ws::WsClient;

/// Root, an admin, and their token.
async fn admin(app: &TestApp) -> TestUser {
    let root = app.register("Root", "root@example.com", "secret1").await;
    app.grant_admin("root@example.com").await;
    root
}

async fn users(app: &TestApp, admin: &TestUser, query: &str) -> Value {
    assert_ok(
        app.get_auth(&format!("/api/admin/users{query}"), &admin.token)
            .await,
    )
    .await
}

fn emails(page: &Value) -> Vec<String> {
    page["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["email"].as_str().unwrap().to_owned())
        .collect()
}

async fn suspend(app: &TestApp, id: &str) {
    let sql = "UPDATE users SET suspended_at = $2 WHERE id = $1";
    let now = app.clock_now();
    match &app.state.db {
        Db::Sqlite(pool, _) => sqlx::query(sql).bind(id).bind(now).execute(pool).await.map(drop),
        Db::Postgres(pool) => sqlx::query(sql).bind(id).bind(now).execute(pool).await.map(drop),
    }
    .unwrap();
}

async fn audit_of(app: &TestApp, admin: &TestUser, user_id: &str) -> Vec<Value> {
    let page = assert_ok(
        app.get_auth(&format!("/api/admin/audit?userId={user_id}"), &admin.token)
            .await,
    )
    .await;
    page["data"].as_array().unwrap().clone()
}

#[actix_web::test]
async fn the_table_finds_users_by_the_start_of_their_email_or_name_in_any_case_and_filters_them() {
    let app = spawn_app().await;
    let root = admin(&app).await;
    let ann = app.register("Annabel Lee", "ann@example.com", "secret1").await;
    let bob = app.register("Bob", "bob@example.com", "secret1").await;
    app.register("Zed Anders", "zed@example.com", "secret1").await;
    app.register("Percent", "100%off@example.com", "secret1").await;

    // The e-mail's start, any case; the name's start (not a word inside it).
    assert_eq!(emails(&users(&app, &root, "?q=ANN").await), ["ann@example.com"]);
    assert_eq!(
        emails(&users(&app, &root, "?q=zED%20a").await),
        ["zed@example.com"]
    );
    assert_eq!(
        emails(&users(&app, &root, "?q=anders").await),
        Vec::<String>::new()
    );
    // `%` and `_` match themselves, not anything.
    assert_eq!(emails(&users(&app, &root, "?q=%25").await), Vec::<String>::new());
    assert_eq!(
        emails(&users(&app, &root, "?q=100%25").await),
        ["100%off@example.com"]
    );
    assert_eq!(emails(&users(&app, &root, "?q=_").await), Vec::<String>::new());
    // Newest first, everyone by default.
    assert_eq!(
        emails(&users(&app, &root, "").await),
        [
            "100%off@example.com",
            "zed@example.com",
            "bob@example.com",
            "ann@example.com",
            "root@example.com"
        ]
    );

    // By plan: a row shows the plan and its end, and the counters of today and the month.
    app.set_plan(&ann.id, "plus").await;
    for _ in 0..2 {
        app.state.quotas.consume_response(&ann.id).await.unwrap();
    }
    app.state
        .quotas
        .consume(&ann.id, Service::WebSearches)
        .await
        .unwrap();
    let plus = users(&app, &root, "?plan=plus").await;
    assert_eq!(emails(&plus), ["ann@example.com"]);
    let row = &plus["data"][0];
    assert_eq!(row["_id"], json!(ann.id));
    assert_eq!(row["name"], json!("Annabel Lee"));
    assert_eq!(row["role"], json!("user"));
    assert_eq!(row["status"], json!("active"));
    assert_eq!(row["planType"], json!("plus"));
    assert!(row["planEndDate"].is_string(), "{row}");
    assert_eq!(
        row["usage"]["today"],
        json!({"responses": 2, "webSearches": 1, "imageGenerations": 0})
    );
    assert_eq!(
        row["usage"]["month"],
        json!({"responses": 2, "webSearches": 1, "imageGenerations": 0})
    );
    let free = emails(&users(&app, &root, "?plan=free").await);
    assert!(!free.contains(&"ann@example.com".to_owned()) && free.contains(&"bob@example.com".to_owned()));

    // By status: suspended accounts are listed by default and on their own.
    suspend(&app, &bob.id).await;
    let suspended = users(&app, &root, "?status=suspended").await;
    assert_eq!(emails(&suspended), ["bob@example.com"]);
    assert_eq!(suspended["data"][0]["status"], json!("suspended"));
    assert!(!emails(&users(&app, &root, "?status=active").await).contains(&"bob@example.com".to_owned()));
    assert!(emails(&users(&app, &root, "").await).contains(&"bob@example.com".to_owned()));
    assert_eq!(
        emails(&users(&app, &root, "?status=active&q=a").await),
        ["ann@example.com"]
    );

    // Unknown filters are refused, about their field, in both languages.
    for (query, field) in [
        ("?plan=gold", "plan"),
        ("?status=banned", "status"),
        ("?cursor=x", "cursor"),
    ] {
        let refused = assert_error(
            app.get_auth(&format!("/api/admin/users{query}"), &root.token)
                .await,
            400,
            "validation_error",
        )
        .await;
        assert_eq!(refused["field"], json!(field), "{refused}");
    }
}

#[actix_web::test]
async fn the_table_pages_fifty_at_a_time_with_a_cursor_even_when_users_share_a_created_time() {
    let app = spawn_app().await;
    let root = admin(&app).await;
    // 55 users made in one go: all with the same created time.
    let ask = Seed {
        count: 55,
        password: "load-password",
        prefix: "load",
        plan: "free",
        tokens: None,
        messages: 0,
    };
    seed(&app.state.settings, &ask).await.unwrap();
    let first = users(&app, &root, "?q=load").await;
    assert_eq!(first["data"].as_array().unwrap().len(), 50);
    let cursor = first["nextCursor"].as_str().expect("a next page").to_owned();
    let second = users(&app, &root, &format!("?q=load&cursor={}", urlencode(&cursor))).await;
    assert_eq!(second["data"].as_array().unwrap().len(), 5);
    assert_eq!(second["nextCursor"], Value::Null);
    let mut all = emails(&first);
    all.extend(emails(&second));
    all.sort();
    all.dedup();
    assert_eq!(all.len(), 55, "each user once");
    // Root and the load users together: 56, over two pages.
    let everyone = users(&app, &root, "").await;
    let rest = users(
        &app,
        &root,
        &format!("?cursor={}", urlencode(everyone["nextCursor"].as_str().unwrap())),
    )
    .await;
    assert_eq!(emails(&rest).len(), 6);
    assert_eq!(emails(&rest).last().unwrap(), "root@example.com");
}

async fn post(app: &TestApp, path: &str, token: &str, body: Value) -> reqwest::Response {
    app.client
        .post(app.url(path))
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .unwrap()
}

fn urlencode(text: &str) -> String {
    text.replace('%', "%25").replace('@', "%40").replace('+', "%2B")
}

#[actix_web::test]
async fn pending_registrations_and_deleted_accounts_have_lists_of_their_own() {
    let app = spawn_app().await;
    let root = admin(&app).await;
    assert_ok(app.send_code("Pending Pat", "pat@example.com", "secret1").await).await;
    let gone = app.register("Gone", "gone@example.com", "secret1").await;
    assert_ok(app.delete_auth("/api/auth/profile", &gone.token).await).await;

    let unverified = users(&app, &root, "?status=unverified").await;
    assert_eq!(emails(&unverified), ["pat@example.com"]);
    let row = &unverified["data"][0];
    assert_eq!(row["_id"], Value::Null);
    assert_eq!(row["name"], json!("Pending Pat"));
    assert_eq!(row["status"], json!("unverified"));
    assert_eq!(row["planType"], json!("free"));
    assert_eq!(row["usage"]["today"]["responses"], json!(0));
    assert_eq!(
        emails(&users(&app, &root, "?status=unverified&q=PENDING").await),
        ["pat@example.com"]
    );
    assert_eq!(
        emails(&users(&app, &root, "?status=unverified&plan=pro").await),
        Vec::<String>::new()
    );

    let deleted = users(&app, &root, "?status=deleted").await;
    assert_eq!(emails(&deleted), ["gone@example.com"]);
    assert_eq!(deleted["data"][0]["_id"], json!(gone.id));
    assert_eq!(deleted["data"][0]["status"], json!("deleted"));
    // Neither is an account: the default list has neither.
    assert_eq!(emails(&users(&app, &root, "").await), ["root@example.com"]);
    // The deleted account is not found as a user any more.
    assert_error(
        app.get_auth(&format!("/api/admin/users/{}", gone.id), &root.token)
            .await,
        404,
        "not_found",
    )
    .await;
}

#[actix_web::test]
async fn last_active_is_noted_on_login_and_socket_connect_at_most_once_an_hour() {
    let app = spawn_app().await;
    let root = admin(&app).await;
    let ann = app.register("Ann", "ann@example.com", "secret1").await;
    let row = |page: Value| page["data"][0]["lastActiveAt"].clone();
    assert_eq!(row(users(&app, &root, "?q=ann").await), Value::Null);
    assert_ok(app.login("ann@example.com", "secret1").await).await;
    let first = row(users(&app, &root, "?q=ann").await);
    assert!(first.is_string());
    // Within the hour nothing is written again.
    app.advance_minutes(30);
    WsClient::ready(&app, &ann.token).await;
    assert_eq!(row(users(&app, &root, "?q=ann").await), first);
    // After it, a socket connecting notes the time.
    app.advance_minutes(31);
    WsClient::ready(&app, &ann.token).await;
    let later = row(users(&app, &root, "?q=ann").await);
    assert_ne!(later, first);
    assert!(later.as_str() > first.as_str());
}

#[actix_web::test]
async fn a_users_page_shows_the_subscription_usage_payments_invoices_and_audit() {
    let app = spawn_app().await;
    let root = admin(&app).await;
    let ann = app.register_paying("ann@example.com").await;
    let body = json!({"planType": "base", "currency": "EUR"});
    let started = assert_ok(app.put_auth("/api/subscription/change", &ann.token, body).await).await;
    let payment_id = started["payment"]["_id"].as_str().unwrap().to_owned();
    app.pay_demo(&ann, &payment_id).await;
    app.state.quotas.consume_response(&ann.id).await.unwrap();
    let change = json!({"planType": "plus", "days": 10, "reason": "goodwill"});
    assert_ok(
        app.put_auth(&format!("/api/admin/users/{}/plan", ann.id), &root.token, change)
            .await,
    )
    .await;

    let page = assert_ok(
        app.get_auth(&format!("/api/admin/users/{}", ann.id), &root.token)
            .await,
    )
    .await;
    let d = &page["data"];
    assert_eq!(d["user"]["email"], json!("ann@example.com"));
    assert_eq!(d["user"]["planType"], json!("plus"));
    assert_eq!(d["user"]["usage"]["today"]["responses"], json!(1));
    assert_eq!(d["suspendedAt"], Value::Null);
    // The subscription and usage as Ann's own calls show them.
    let own_sub = assert_ok(app.get_auth("/api/subscription", &ann.token).await).await;
    assert_eq!(d["subscription"]["data"], own_sub["data"], "{d}");
    assert_eq!(d["subscription"]["subscriptionPlan"], own_sub["subscriptionPlan"]);
    let own_usage = assert_ok(app.get_auth("/api/usage/limits", &ann.token).await).await;
    assert_eq!(d["usage"]["limitInfo"], own_usage["limitInfo"]);
    assert_eq!(
        d["usage"]["limitInfo"]["services"]["responses"]["daily"]["used"],
        json!(1)
    );
    let payments = d["payments"].as_array().unwrap();
    assert_eq!(payments.len(), 1);
    assert_eq!(payments[0]["_id"], json!(payment_id));
    let own_invoices = assert_ok(app.get_auth("/api/invoices", &ann.token).await).await;
    assert_eq!(d["invoices"], own_invoices["data"]);
    assert_eq!(d["invoices"].as_array().unwrap().len(), 1);
    let audit = d["audit"].as_array().unwrap();
    assert_eq!(audit.len(), 1);
    assert_eq!(audit[0]["action"], json!("plan.changed"));
    assert_eq!(audit[0]["reason"], json!("goodwill"));

    assert_error(
        app.get_auth("/api/admin/users/no-such-user", &root.token).await,
        404,
        "not_found",
    )
    .await;
}

#[actix_web::test]
async fn an_admin_grants_a_plan_the_users_tab_follows_and_the_change_is_logged() {
    let app = spawn_app().await;
    let root = admin(&app).await;
    let ann = app.register("Ann", "ann@example.com", "secret1").await;
    let (mut tab, ready) = WsClient::ready(&app, &ann.token).await;
    assert_eq!(ready["usage"]["limitInfo"]["limitType"], json!("free"));
    let path = format!("/api/admin/users/{}/plan", ann.id);

    let change = json!({"planType": "pro", "days": 10, "reason": "  support ticket 42 "});
    let answer = assert_ok(app.put_auth(&path, &root.token, change).await).await;
    let end = app.clock_now() + 10 * 24 * 3600 * 1000;
    let end_iso = chat_server::quota::iso(end);
    assert_eq!(answer["data"]["user"]["planType"], json!("pro"));
    assert_eq!(answer["data"]["user"]["planEndDate"], json!(end_iso));
    assert_eq!(answer["data"]["subscription"]["data"]["planType"], json!("pro"));
    // The open tab follows at once: the subscription, then the counters of the plan.
    let frame = tab.expect("subscription.updated").await;
    assert_eq!(frame["subscription"]["data"]["planType"], json!("pro"), "{frame}");
    let usage = tab.expect("usage.updated").await;
    assert_eq!(usage["limitInfo"]["limitType"], json!("pro"));
    let row = &answer["data"]["audit"][0];
    assert_eq!(row["action"], json!("plan.changed"));
    assert_eq!(row["actor"], json!("root@example.com"));
    assert_eq!(row["actorId"], json!(root.id));
    assert_eq!(row["target"], json!("ann@example.com"));
    assert_eq!(row["reason"], json!("support ticket 42"));
    assert_eq!(row["before"], json!({"planType": "free", "endDate": ""}));
    assert_eq!(row["after"], json!({"planType": "pro", "endDate": end_iso}));

    // Without days: 30. Free ends the paid plan at once.
    let change = json!({"planType": "base", "reason": "downgrade"});
    let answer = assert_ok(app.put_auth(&path, &root.token, change).await).await;
    let end30 = chat_server::quota::iso(app.clock_now() + 30 * 24 * 3600 * 1000);
    assert_eq!(answer["data"]["user"]["planEndDate"], json!(end30));
    let change = json!({"planType": "free", "days": 99999, "reason": "ended"});
    let answer = assert_ok(app.put_auth(&path, &root.token, change).await).await;
    assert_eq!(answer["data"]["user"]["planType"], json!("free"));
    assert_eq!(answer["data"]["user"]["planEndDate"], Value::Null);
    assert_eq!(
        answer["data"]["audit"][0]["before"],
        json!({"planType": "base", "endDate": end30})
    );
    tab.until("subscription.updated").await;
    let frame = tab.until("subscription.updated").await.pop().unwrap();
    assert_eq!(frame["subscription"]["data"]["planType"], json!("free"));

    // The command line keeps its rule, and now logs its change too.
    let summary = set_plan(&app.state.settings, "ann@example.com", "plus", 5)
        .await
        .unwrap();
    assert!(
        summary.starts_with("ann@example.com is now on plus until "),
        "{summary}"
    );
    let too_long = set_plan(&app.state.settings, "ann@example.com", "plus", 3651).await;
    assert!(too_long
        .unwrap_err()
        .to_string()
        .contains("--days must be 1 to 3650"));
    let unknown = set_plan(&app.state.settings, "ann@example.com", "gold", 5).await;
    assert!(unknown.unwrap_err().to_string().contains("unknown plan"));
    let audit = audit_of(&app, &root, &ann.id).await;
    assert_eq!(audit.len(), 4);
    assert_eq!(audit[0]["actor"], json!("command line"));
    assert_eq!(audit[0]["actorId"], Value::Null);
    assert_eq!(audit[0]["after"]["planType"], json!("plus"));
    assert_eq!(audit[0]["reason"], json!("set with chat-server users set-plan"));
}

#[actix_web::test]
async fn a_plan_change_is_refused_for_bad_input_and_then_changes_and_logs_nothing() {
    let app = spawn_app().await;
    let root = admin(&app).await;
    let ann = app.register("Ann", "ann@example.com", "secret1").await;
    let path = format!("/api/admin/users/{}/plan", ann.id);
    let cases = [
        (
            json!({"planType": "gold", "reason": "r"}),
            "validation_error",
            Some("planType"),
        ),
        (json!({"reason": "r"}), "validation_error", Some("planType")),
        (
            json!({"planType": "plus", "days": 0, "reason": "r"}),
            "validation_error",
            Some("days"),
        ),
        (
            json!({"planType": "plus", "days": 3651, "reason": "r"}),
            "validation_error",
            Some("days"),
        ),
        (
            json!({"planType": "plus", "days": 10}),
            "field_required",
            Some("reason"),
        ),
        (
            json!({"planType": "plus", "reason": "   "}),
            "field_required",
            Some("reason"),
        ),
        (
            json!({"planType": "plus", "reason": "x".repeat(501)}),
            "field_too_long",
            Some("reason"),
        ),
    ];
    for (body, code, field) in cases {
        let refused = assert_error(app.put_auth(&path, &root.token, body.clone()).await, 400, code).await;
        assert_eq!(refused["field"].as_str(), field, "{body}: {refused}");
    }
    // In the admin's language.
    let missing = assert_error(
        app.put_auth(&path, &root.token, json!({"planType": "plus"}))
            .await,
        400,
        "field_required",
    )
    .await;
    assert_eq!(missing["message"], json!("The reason is required"));
    assert_ok(
        app.put_auth("/api/settings", &root.token, json!({"language": "hu-HU"}))
            .await,
    )
    .await;
    let missing = assert_error(
        app.put_auth(&path, &root.token, json!({"planType": "plus"}))
            .await,
        400,
        "field_required",
    )
    .await;
    assert_eq!(missing["message"], json!("Az indoklás megadása kötelező"));
    // 500 characters are fine.
    assert_ok(
        app.put_auth(
            &path,
            &root.token,
            json!({"planType": "plus", "days": 3650, "reason": "x".repeat(500)}),
        )
        .await,
    )
    .await;
    assert_eq!(
        audit_of(&app, &root, &ann.id).await.len(),
        1,
        "only the change that was made"
    );
    assert_error(
        app.put_auth(
            "/api/admin/users/nobody/plan",
            &root.token,
            json!({"planType": "plus", "reason": "r"}),
        )
        .await,
        404,
        "not_found",
    )
    .await;
}

#[actix_web::test]
async fn a_usage_reset_gives_back_todays_count_tells_the_tab_and_is_logged() {
    let app = spawn_app().await;
    let root = admin(&app).await;
    let ann = app.register("Ann", "ann@example.com", "secret1").await;
    app.set_plan(&ann.id, "base").await;
    // Units of an earlier day this month (when there is one), then of today.
    let yesterday = app.state.quotas.window().periods;
    for _ in 0..2 {
        app.state.quotas.consume_response(&ann.id).await.unwrap();
    }
    app.advance_minutes(24 * 60);
    let today = app.state.quotas.window().periods;
    let earlier = if today.month == yesterday.month { 2 } else { 0 };
    for _ in 0..3 {
        app.state.quotas.consume_response(&ann.id).await.unwrap();
    }
    app.state
        .quotas
        .consume(&ann.id, Service::WebSearches)
        .await
        .unwrap();
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;

    let path = format!("/api/admin/users/{}/usage-reset", ann.id);
    let body = json!({"service": "responses", "reason": "model outage"});
    let answer = assert_ok(post(&app, &path, &root.token, body).await).await;
    let responses = &answer["data"]["limitInfo"]["services"]["responses"];
    assert_eq!(responses["daily"]["used"], json!(0));
    // The month goes down by what today had, and keeps the earlier days.
    assert_eq!(responses["monthly"]["used"], json!(earlier));
    // The other services keep theirs.
    assert_eq!(
        answer["data"]["limitInfo"]["services"]["searches"]["daily"]["used"],
        json!(1)
    );
    let frame = tab.expect("usage.updated").await;
    assert_eq!(
        frame["limitInfo"]["services"]["responses"]["daily"]["used"],
        json!(0)
    );
    assert_eq!(app.used_today(&ann.token, "responses").await, json!(0));

    let audit = audit_of(&app, &root, &ann.id).await;
    assert_eq!(audit[0]["action"], json!("usage.reset"));
    assert_eq!(audit[0]["reason"], json!("model outage"));
    assert_eq!(audit[0]["before"], json!({"service": "responses", "used": "3"}));
    assert_eq!(audit[0]["after"], json!({"service": "responses", "used": "0"}));

    // The usage record has it too: a restarted server counts from there.
    app.state.quotas.flush().await.unwrap();
    let restarted = app.another_instance(|_| {}).await;
    assert_eq!(restarted.used_today(&ann.token, "responses").await, json!(0));
    assert_eq!(restarted.used_today(&ann.token, "searches").await, json!(1));
    // Counting goes on from zero.
    app.state.quotas.consume_response(&ann.id).await.unwrap();
    assert_eq!(app.used_today(&ann.token, "responses").await, json!(1));

    // Redis lost the counters (a restart without persistence): the reset rebuilds them
    // from the usage record first, and takes exactly what was counted.
    if let Some((url, prefix)) = app.backends.redis.clone() {
        app.state.quotas.flush().await.unwrap();
        let mut conn = redis::Client::open(url)
            .unwrap()
            .get_multiplexed_async_connection()
            .await
            .unwrap();
        let pattern = format!("{prefix}quota:{{{}}}*", ann.id);
        for read_first in [true, false] {
            let keys: Vec<String> = redis::cmd("KEYS")
                .arg(&pattern)
                .query_async(&mut conn)
                .await
                .unwrap();
            assert!(!keys.is_empty());
            let _: i64 = redis::cmd("DEL").arg(&keys).query_async(&mut conn).await.unwrap();
            if read_first {
                // The table reads them back from the record.
                let row = users(&app, &root, "?q=ann").await;
                assert_eq!(row["data"][0]["usage"]["today"]["responses"], json!(1), "{row}");
            }
        }
        let body = json!({"service": "responses", "reason": "after a Redis restart"});
        assert_ok(post(&app, &path, &root.token, body).await).await;
        let audit = audit_of(&app, &root, &ann.id).await;
        assert_eq!(audit[0]["before"], json!({"service": "responses", "used": "1"}));
        assert_eq!(app.used_today(&ann.token, "responses").await, json!(0));
        assert_eq!(app.used_today(&ann.token, "searches").await, json!(1));
    }

    // A reset of nothing is a reset of 0, logged as such.
    let body = json!({"service": "imageGenerations", "reason": "check"});
    assert_ok(post(&app, &path, &root.token, body).await).await;
    let audit = audit_of(&app, &root, &ann.id).await;
    assert_eq!(
        audit[0]["before"],
        json!({"service": "imageGenerations", "used": "0"})
    );
}

#[actix_web::test]
async fn a_usage_reset_is_refused_for_bad_input_and_then_changes_and_logs_nothing() {
    let app = spawn_app().await;
    let root = admin(&app).await;
    let ann = app.register("Ann", "ann@example.com", "secret1").await;
    app.state.quotas.consume_response(&ann.id).await.unwrap();
    let path = format!("/api/admin/users/{}/usage-reset", ann.id);
    let cases = [
        (
            json!({"service": "chats", "reason": "r"}),
            "validation_error",
            Some("service"),
        ),
        (
            json!({"service": "searches", "reason": "r"}),
            "validation_error",
            Some("service"),
        ),
        (json!({"reason": "r"}), "validation_error", Some("service")),
        (json!({"service": "responses"}), "field_required", Some("reason")),
        (
            json!({"service": "responses", "reason": ""}),
            "field_required",
            Some("reason"),
        ),
        (
            json!({"service": "responses", "reason": "x".repeat(501)}),
            "field_too_long",
            Some("reason"),
        ),
    ];
    for (body, code, field) in cases {
        let refused = assert_error(post(&app, &path, &root.token, body.clone()).await, 400, code).await;
        assert_eq!(refused["field"].as_str(), field, "{body}: {refused}");
    }
    assert_eq!(app.used_today(&ann.token, "responses").await, json!(1));
    assert!(audit_of(&app, &root, &ann.id).await.is_empty());
    assert_error(
        post(
            &app,
            "/api/admin/users/nobody/usage-reset",
            &root.token,
            json!({"service": "responses", "reason": "r"}),
        )
        .await,
        404,
        "not_found",
    )
    .await;
}

#[actix_web::test]
async fn a_user_who_is_not_an_admin_is_refused_on_every_users_route() {
    let app = spawn_app().await;
    let ann = app.register("Ann", "ann@example.com", "secret1").await;
    let bob = app.register("Bob", "bob@example.com", "secret1").await;
    app.state.quotas.consume_response(&ann.id).await.unwrap();
    assert_error(
        app.get_auth("/api/admin/users", &bob.token).await,
        403,
        "forbidden",
    )
    .await;
    assert_error(
        app.get_auth(&format!("/api/admin/users/{}", ann.id), &bob.token)
            .await,
        403,
        "forbidden",
    )
    .await;
    let plan = json!({"planType": "pro", "reason": "r"});
    assert_error(
        app.put_auth(&format!("/api/admin/users/{}/plan", ann.id), &bob.token, plan)
            .await,
        403,
        "forbidden",
    )
    .await;
    let reset = json!({"service": "responses", "reason": "r"});
    assert_error(
        post(
            &app,
            &format!("/api/admin/users/{}/usage-reset", ann.id),
            &bob.token,
            reset,
        )
        .await,
        403,
        "forbidden",
    )
    .await;
    let anonymous = app.client.get(app.url("/api/admin/users")).send().await.unwrap();
    assert_error(anonymous, 401, "unauthorized").await;
    // Nothing changed.
    let sub = assert_ok(app.get_auth("/api/subscription", &ann.token).await).await;
    assert_eq!(sub["data"]["planType"], json!("free"), "{sub}");
    assert_eq!(app.used_today(&ann.token, "responses").await, json!(1));
}

/// Makes the database refuse audit rows whose reason is `fail`, as a failing write would.
async fn refuse_audit_rows(app: &TestApp) {
    match &app.state.db {
        Db::Sqlite(pool, _) => {
            sqlx::query(
                "CREATE TRIGGER refuse_audit BEFORE INSERT ON audit_log WHEN NEW.reason = 'fail' \
                 BEGIN SELECT RAISE(ABORT, 'refused'); END",
            )
            .execute(pool)
            .await
            .unwrap();
        }
        Db::Postgres(pool) => {
            sqlx::query(
                "CREATE FUNCTION refuse_audit() RETURNS trigger AS $$ BEGIN \
                 IF NEW.reason = 'fail' THEN RAISE EXCEPTION 'refused'; END IF; RETURN NEW; END $$ \
                 LANGUAGE plpgsql",
            )
            .execute(pool)
            .await
            .unwrap();
            sqlx::query(
                "CREATE TRIGGER refuse_audit BEFORE INSERT ON audit_log FOR EACH ROW \
                 EXECUTE FUNCTION refuse_audit()",
            )
            .execute(pool)
            .await
            .unwrap();
        }
    }
}

#[actix_web::test]
async fn a_change_whose_audit_row_cannot_be_written_is_not_made() {
    let app = spawn_app().await;
    let root = admin(&app).await;
    let ann = app.register("Ann", "ann@example.com", "secret1").await;
    for _ in 0..3 {
        app.state.quotas.consume_response(&ann.id).await.unwrap();
    }
    refuse_audit_rows(&app).await;

    // The plan: one transaction with its row, so neither is kept.
    let plan = json!({"planType": "pro", "reason": "fail"});
    assert_error(
        app.put_auth(&format!("/api/admin/users/{}/plan", ann.id), &root.token, plan)
            .await,
        500,
        "server_error",
    )
    .await;
    let sub = assert_ok(app.get_auth("/api/subscription", &ann.token).await).await;
    assert_eq!(sub["data"]["planType"], json!("free"));

    // The counters: reset first, undone when the row fails.
    let path = format!("/api/admin/users/{}/usage-reset", ann.id);
    let reset = json!({"service": "responses", "reason": "fail"});
    assert_error(post(&app, &path, &root.token, reset).await, 500, "server_error").await;
    assert_eq!(app.used_today(&ann.token, "responses").await, json!(3));
    app.state.quotas.flush().await.unwrap();
    let restarted = app.another_instance(|_| {}).await;
    assert_eq!(restarted.used_today(&ann.token, "responses").await, json!(3));
    assert!(audit_of(&app, &root, &ann.id).await.is_empty());

    // Any other reason is written, and the reset made.
    let reset = json!({"service": "responses", "reason": "fine"});
    assert_ok(post(&app, &path, &root.token, reset).await).await;
    assert_eq!(app.used_today(&ann.token, "responses").await, json!(0));
    assert_eq!(audit_of(&app, &root, &ann.id).await.len(), 1);
}
