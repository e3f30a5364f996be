//! Rate limits: failures count per e-mail and address and per address, successes cost
//! nothing, and the client address is believed from trusted proxies only.

use serde_json::json;

use crate::helpers::{assert_error, assert_ok, spawn_app_with, TestApp};

const ATTACKER: &str = "203.0.113.7";
const OWNER: &str = "198.51.100.20";

/// An app behind a reverse proxy on 127.0.0.1 (and 10.0.0.0/8), with the production
/// failure budgets.
async fn behind_proxy() -> TestApp {
    spawn_app_with(|s| {
        s.rate_limit.trusted_proxies = vec!["127.0.0.1/32".into(), "10.0.0.0/8".into()];
        s.rate_limit.pair_failures = 5;
        s.rate_limit.address_failures = 30;
    })
    .await
}

#[actix_web::test]
async fn a_strangers_failed_logins_do_not_lock_the_owner_out() {
    let app = behind_proxy().await;
    app.register_ann().await;
    let mut statuses = Vec::new();
    for _ in 0..12 {
        let response = app
            .login_via_proxy(ATTACKER, "ann@example.com", "guess-123")
            .await;
        statuses.push(response.status().as_u16());
    }
    assert_eq!(statuses[..5], [401; 5], "{statuses:?}");
    assert_eq!(statuses[5..], [429; 7], "{statuses:?}");

    // The owner, from their own address, logs in at once.
    assert_ok(app.login_via_proxy(OWNER, "ann@example.com", "secret1").await).await;
    // The abusive address stays locked for Ann, even with the right password.
    let response = app.login_via_proxy(ATTACKER, "ann@example.com", "secret1").await;
    assert!(response.headers().contains_key("retry-after"));
    let body = assert_error(response, 429, "rate_limited").await;
    assert_eq!(
        body["message"],
        json!("Too many requests. Please try again later.")
    );
    // Its budget is back after the window.
    app.advance_minutes(11);
    assert_ok(app.login_via_proxy(ATTACKER, "ann@example.com", "secret1").await).await;
}

#[actix_web::test]
async fn an_address_guessing_across_emails_is_stopped() {
    let app = spawn_app_with(|s| {
        s.rate_limit.trusted_proxies = vec!["127.0.0.1/32".into()];
        s.rate_limit.address_failures = 4;
    })
    .await;
    app.register_ann().await;
    for i in 0..4 {
        let email = format!("u{i}@example.com");
        assert_error(
            app.login_via_proxy(ATTACKER, &email, "guess-123").await,
            401,
            "invalid_credentials",
        )
        .await;
    }
    assert_error(
        app.login_via_proxy(ATTACKER, "ann@example.com", "secret1").await,
        429,
        "rate_limited",
    )
    .await;
    assert_ok(app.login_via_proxy(OWNER, "ann@example.com", "secret1").await).await;
}

#[actix_web::test]
async fn a_typo_in_the_reset_flow_does_not_end_in_429() {
    let app = spawn_app_with(|s| {
        let defaults = chat_server::config::Settings::defaults().rate_limit;
        s.rate_limit = defaults;
    })
    .await;
    app.register_ann().await;
    // Ann uses several devices: successful logins cost nothing.
    for _ in 0..6 {
        assert_ok(app.login("ann@example.com", "secret1").await).await;
    }
    assert_error(
        app.login("ann@example.com", "secret-typo").await,
        401,
        "invalid_credentials",
    )
    .await;
    let started = assert_ok(
        app.post("/api/auth/forgot-password", json!({"email": "ann@example.com"}))
            .await,
    )
    .await;
    let code = app.mailbox.take_for("ann@example.com").await.code();
    let wrong = if code == "000000" { "111111" } else { "000000" };
    let verify = |c: &str| {
        app.post(
            "/api/auth/verify-reset-code",
            json!({"email": "ann@example.com", "code": c, "token": started["token"]}),
        )
    };
    assert_error(verify(wrong).await, 400, "invalid_code").await;
    let verified = assert_ok(verify(&code).await).await;
    assert_ok(
        app.post(
            "/api/auth/reset-password",
            json!({"token": verified["token"], "newPassword": "newsecret"}),
        )
        .await,
    )
    .await;
    assert_error(
        app.login("ann@example.com", "newsecert").await,
        401,
        "invalid_credentials",
    )
    .await;
    assert_ok(app.login("ann@example.com", "newsecret").await).await;
}

#[actix_web::test]
async fn forwarded_for_is_ignored_from_an_untrusted_peer() {
    // The test client (127.0.0.1) is not among the proxies.
    let app = spawn_app_with(|s| {
        s.rate_limit.trusted_proxies = vec!["10.0.0.0/8".into()];
        s.rate_limit.pair_failures = 2;
    })
    .await;
    app.register_ann().await;
    for spoofed in ["1.1.1.1", "2.2.2.2"] {
        assert_error(
            app.login_via_proxy(spoofed, "ann@example.com", "guess-123").await,
            401,
            "invalid_credentials",
        )
        .await;
    }
    // A third made-up address does not buy a fresh budget.
    assert_error(
        app.login_via_proxy("3.3.3.3", "ann@example.com", "secret1").await,
        429,
        "rate_limited",
    )
    .await;
}

#[actix_web::test]
async fn behind_trusted_proxies_the_rightmost_untrusted_hop_is_the_client() {
    let app = spawn_app_with(|s| {
        s.rate_limit.trusted_proxies = vec!["127.0.0.1/32".into(), "10.0.0.0/8".into()];
        s.rate_limit.pair_failures = 2;
    })
    .await;
    app.register_ann().await;
    // The client writes whatever it likes on the left; the proxies append what they saw.
    for spoofed in ["1.1.1.1", "2.2.2.2"] {
        let chain = format!("{spoofed}, {ATTACKER}, 10.0.0.5");
        assert_error(
            app.login_via_proxy(&chain, "ann@example.com", "guess-123").await,
            401,
            "invalid_credentials",
        )
        .await;
    }
    let chain = format!("4.4.4.4, {ATTACKER}, 10.0.0.5");
    assert_error(
        app.login_via_proxy(&chain, "ann@example.com", "secret1").await,
        429,
        "rate_limited",
    )
    .await;
    // The same through the standard Forwarded header.
    let response = app
        .client
        .post(app.url("/api/auth/login"))
        .header(
            "Forwarded",
            format!("for=5.5.5.5, for=\"{ATTACKER}:4711\", for=10.0.0.5"),
        )
        .json(&json!({"email": "ann@example.com", "password": "secret1"}))
        .send()
        .await
        .unwrap();
    assert_error(response, 429, "rate_limited").await;
    // Another client behind the same proxies is a different address.
    assert_ok(
        app.login_via_proxy(&format!("{OWNER}, 10.0.0.5"), "ann@example.com", "secret1")
            .await,
    )
    .await;
}

#[actix_web::test]
async fn ipv6_addresses_in_one_64_share_a_budget() {
    let app = spawn_app_with(|s| {
        s.rate_limit.trusted_proxies = vec!["127.0.0.1/32".into()];
        s.rate_limit.pair_failures = 2;
    })
    .await;
    app.register_ann().await;
    for ip in ["2001:db8:1:2::1", "2001:db8:1:2:ffff:ffff:ffff:ffff"] {
        assert_error(
            app.login_via_proxy(ip, "ann@example.com", "guess-123").await,
            401,
            "invalid_credentials",
        )
        .await;
    }
    assert_error(
        app.login_via_proxy("2001:db8:1:2:aaaa::3", "ann@example.com", "secret1")
            .await,
        429,
        "rate_limited",
    )
    .await;
    assert_ok(
        app.login_via_proxy("2001:db8:1:3::1", "ann@example.com", "secret1")
            .await,
    )
    .await;
}

#[actix_web::test]
async fn calls_from_one_address_are_rate_limited_across_emails() {
    let app = spawn_app_with(|s| s.rate_limit.address_calls = 3).await;
    for i in 0..3 {
        let response = app
            .post(
                "/api/auth/forgot-password",
                json!({"email": format!("u{i}@example.com")}),
            )
            .await;
        assert_ok(response).await;
    }
    let response = app
        .post("/api/auth/forgot-password", json!({"email": "u9@example.com"}))
        .await;
    assert!(response.headers().contains_key("retry-after"));
    assert_error(response, 429, "rate_limited").await;
}

#[actix_web::test]
async fn mails_to_one_address_are_limited() {
    let app = spawn_app_with(|s| s.rate_limit.email_mails = 2).await;
    app.register_ann().await;
    // Registration sent Ann one mail already.
    assert_ok(
        app.post("/api/auth/forgot-password", json!({"email": "ann@example.com"}))
            .await,
    )
    .await;
    let response = app
        .post("/api/auth/forgot-password", json!({"email": "ann@example.com"}))
        .await;
    assert_error(response, 429, "rate_limited").await;
}

#[actix_web::test]
async fn two_instances_share_the_rate_limit_budget_through_redis() {
    if std::env::var("TEST_REDIS_URL").is_err() {
        return;
    }
    let configure = |s: &mut chat_server::config::Settings| {
        s.rate_limit.trusted_proxies = vec!["127.0.0.1/32".into()];
        s.rate_limit.pair_failures = 3;
    };
    let first = spawn_app_with(configure).await;
    let second = first.another_instance(configure).await;
    first.register_ann().await;
    assert_error(
        first
            .login_via_proxy(ATTACKER, "ann@example.com", "guess-123")
            .await,
        401,
        "invalid_credentials",
    )
    .await;
    assert_error(
        second
            .login_via_proxy(ATTACKER, "ann@example.com", "guess-123")
            .await,
        401,
        "invalid_credentials",
    )
    .await;
    assert_error(
        first
            .login_via_proxy(ATTACKER, "ann@example.com", "guess-123")
            .await,
        401,
        "invalid_credentials",
    )
    .await;
    assert_error(
        second
            .login_via_proxy(ATTACKER, "ann@example.com", "secret1")
            .await,
        429,
        "rate_limited",
    )
    .await;
}
