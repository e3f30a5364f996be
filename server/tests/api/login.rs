use serde_json::json;

use crate::helpers::{assert_error, assert_ok, spawn_app, spawn_app_with};

#[actix_web::test]
async fn login_returns_a_token_and_the_user() {
    let app = spawn_app().await;
    let ann = app.register_ann().await;
    let body = assert_ok(app.login("ANN@example.com", "secret1").await).await;
    let keys: Vec<&String> = body.as_object().unwrap().keys().collect();
    for key in ["token", "_id", "name", "email", "profileImage", "settings"] {
        assert!(keys.iter().any(|k| k.as_str() == key), "missing {key} in {body}");
    }
    assert_eq!(body["_id"], json!(ann.id));
    assert_eq!(body["profileImage"], json!(null));
    let token = body["token"].as_str().unwrap();
    assert_ok(app.get_auth("/api/auth/profile", token).await).await;
}

#[actix_web::test]
async fn a_wrong_password_and_an_unknown_email_get_the_same_answer() {
    let app = spawn_app().await;
    app.register_ann().await;
    let wrong_password = assert_error(
        app.login("ann@example.com", "wrong-one").await,
        401,
        "invalid_credentials",
    )
    .await;
    let unknown = assert_error(
        app.login("nobody@example.com", "secret1").await,
        401,
        "invalid_credentials",
    )
    .await;
    assert_eq!(wrong_password, unknown);
    assert_eq!(unknown["message"], json!("Invalid email or password"));
    let hu = app
        .post_lang(
            "/api/auth/login",
            "hu",
            json!({"email": "nobody@example.com", "password": "secret1"}),
        )
        .await;
    let hu = assert_error(hu, 401, "invalid_credentials").await;
    assert_eq!(hu["message"], json!("Érvénytelen e-mail cím vagy jelszó"));
}

#[actix_web::test]
async fn remember_me_keeps_the_token_for_thirty_days_instead_of_one() {
    let app = spawn_app().await;
    app.register_ann().await;
    let short = assert_ok(app.login("ann@example.com", "secret1").await).await;
    let long = assert_ok(
        app.post(
            "/api/auth/login",
            json!({"email": "ann@example.com", "password": "secret1", "rememberMe": true}),
        )
        .await,
    )
    .await;
    // The answers say when each token expires, so the client can set its cookie to match.
    let expiry = |body: &serde_json::Value| {
        chrono::DateTime::parse_from_rfc3339(body["expiresAt"].as_str().unwrap())
            .unwrap()
            .timestamp_millis()
    };
    let day = 24 * 3600 * 1000;
    assert!((expiry(&short) - app.clock_now() - day).abs() < 2000);
    assert!((expiry(&long) - app.clock_now() - 30 * day).abs() < 2000);
    let (short, long) = (short["token"].as_str().unwrap(), long["token"].as_str().unwrap());
    app.advance_minutes(23 * 60);
    assert_ok(app.get_auth("/api/auth/profile", short).await).await;
    app.advance_minutes(2 * 60);
    assert_error(
        app.get_auth("/api/auth/profile", short).await,
        401,
        "unauthorized",
    )
    .await;
    assert_ok(app.get_auth("/api/auth/profile", long).await).await;
    app.advance_minutes(29 * 24 * 60);
    assert_error(app.get_auth("/api/auth/profile", long).await, 401, "unauthorized").await;
}

#[actix_web::test]
async fn missing_malformed_and_foreign_tokens_are_401() {
    let app = spawn_app().await;
    let response = app.client.get(app.url("/api/auth/profile")).send().await.unwrap();
    let body = assert_error(response, 401, "unauthorized").await;
    assert_eq!(body["message"], json!("Unauthorized action"));
    assert_error(
        app.get_auth("/api/auth/profile", "garbage").await,
        401,
        "unauthorized",
    )
    .await;
    let foreign = chat_server::accounts::jwt::Tokens::new(b"another-secret")
        .issue("someone", 0, app.clock_now(), 1)
        .unwrap();
    assert_error(
        app.get_auth("/api/auth/profile", &foreign).await,
        401,
        "unauthorized",
    )
    .await;
}

#[actix_web::test]
async fn the_token_cookie_authenticates_too() {
    let app = spawn_app().await;
    let ann = app.register_ann().await;
    let response = app
        .client
        .get(app.url("/api/auth/profile"))
        .header("Cookie", format!("token={}", ann.token))
        .send()
        .await
        .unwrap();
    assert_eq!(assert_ok(response).await["_id"], json!(ann.id));
}

#[actix_web::test]
async fn past_its_queue_password_hashing_answers_429() {
    let app = spawn_app_with(|s| {
        s.auth.hash_concurrency = 1;
        s.auth.hash_queue = 0;
        // Slow enough that the calls below overlap.
        s.auth.argon2_memory_kib = 64 * 1024;
        s.auth.argon2_iterations = 8;
    })
    .await;
    let emails: Vec<String> = (0..6).map(|i| format!("ann{i}@example.com")).collect();
    let calls = emails.iter().map(|email| app.send_code("Ann", email, "secret1"));
    let responses = futures_util::future::join_all(calls).await;
    let statuses: Vec<u16> = responses.iter().map(|r| r.status().as_u16()).collect();
    assert!(statuses.contains(&200), "{statuses:?}");
    assert!(statuses.contains(&429), "{statuses:?}");
    for r in responses.into_iter().filter(|r| r.status() == 429) {
        assert!(r.headers().contains_key("retry-after"));
        assert_error(r, 429, "server_busy").await;
    }
}
