use serde_json::{json, Value};

use crate::helpers::{assert_error, assert_ok, spawn_app, TestApp};

async fn forgot(app: &TestApp, email: &str) -> Value {
    assert_ok(
        app.post(
            "/api/auth/forgot-password",
            json!({"email": email, "lang": "en-US"}),
        )
        .await,
    )
    .await
}

#[actix_web::test]
async fn a_password_can_be_reset_with_the_mailed_code() {
    let app = spawn_app().await;
    let ann = app.register_ann().await;
    let started = forgot(&app, "ann@example.com").await;
    let mail = app.mailbox.take_for("ann@example.com").await;
    assert!(mail.subject().starts_with("Password reset code"));

    let verified = assert_ok(
        app.post(
            "/api/auth/verify-reset-code",
            json!({"email": "ann@example.com", "code": mail.code(), "token": started["token"]}),
        )
        .await,
    )
    .await;
    assert_eq!(verified["success"], json!(true));
    assert_ne!(verified["token"], started["token"]);

    let reset = app
        .post(
            "/api/auth/reset-password",
            json!({"token": verified["token"], "newPassword": "newsecret", "lang": "en-US"}),
        )
        .await;
    assert_eq!(assert_ok(reset).await["success"], json!(true));

    assert_ok(app.login("ann@example.com", "newsecret").await).await;
    assert_error(
        app.login("ann@example.com", "secret1").await,
        401,
        "invalid_credentials",
    )
    .await;
    // The reset revoked every earlier token.
    assert_error(
        app.get_auth("/api/auth/profile", &ann.token).await,
        401,
        "unauthorized",
    )
    .await;
    // And the reset token is single-use.
    let again = app
        .post(
            "/api/auth/reset-password",
            json!({"token": verified["token"], "newPassword": "another1"}),
        )
        .await;
    assert_error(again, 400, "verification_failed").await;
}

#[actix_web::test]
async fn an_unknown_email_gets_a_token_but_no_mail() {
    let app = spawn_app().await;
    app.register_ann().await;
    let unknown = forgot(&app, "nobody@example.com").await;
    assert!(unknown["token"].as_str().is_some_and(|t| t.len() >= 32));
    // A known e-mail's mail arrives; the unknown one never got any.
    forgot(&app, "ann@example.com").await;
    app.mailbox.take_for("ann@example.com").await;
    assert_eq!(app.mailbox.count_for("nobody@example.com"), 0);
    let response = app
        .post(
            "/api/auth/verify-reset-code",
            json!({"email": "nobody@example.com", "code": "123456", "token": unknown["token"]}),
        )
        .await;
    assert_error(response, 400, "invalid_code").await;
}

#[actix_web::test]
async fn the_code_only_works_with_its_own_email_and_only_verified_tokens_reset() {
    let app = spawn_app().await;
    app.register_ann().await;
    app.register("Bob", "bob@example.com", "secret2").await;
    let started = forgot(&app, "ann@example.com").await;
    let code = app.mailbox.take_for("ann@example.com").await.code();
    let response = app
        .post(
            "/api/auth/verify-reset-code",
            json!({"email": "bob@example.com", "code": code, "token": started["token"]}),
        )
        .await;
    assert_error(response, 400, "invalid_code").await;
    // The token from forgot-password cannot reset by itself.
    let response = app
        .post(
            "/api/auth/reset-password",
            json!({"token": started["token"], "newPassword": "newsecret"}),
        )
        .await;
    assert_error(response, 400, "verification_failed").await;
    assert_ok(app.login("ann@example.com", "secret1").await).await;
}

#[actix_web::test]
async fn five_wrong_reset_codes_kill_the_reset() {
    let app = spawn_app().await;
    app.register_ann().await;
    let started = forgot(&app, "ann@example.com").await;
    let code = app.mailbox.take_for("ann@example.com").await.code();
    let wrong = if code == "000000" { "111111" } else { "000000" };
    let attempt = |c: &str| {
        app.post(
            "/api/auth/verify-reset-code",
            json!({"email": "ann@example.com", "code": c, "token": started["token"]}),
        )
    };
    for _ in 0..4 {
        assert_error(attempt(wrong).await, 400, "invalid_code").await;
    }
    assert_error(attempt(wrong).await, 429, "too_many_attempts").await;
    assert_error(attempt(&code).await, 429, "too_many_attempts").await;
}

#[actix_web::test]
async fn reset_codes_expire() {
    let app = spawn_app().await;
    app.register_ann().await;
    let started = forgot(&app, "ann@example.com").await;
    let code = app.mailbox.take_for("ann@example.com").await.code();
    app.advance_minutes(11);
    let response = app
        .post(
            "/api/auth/verify-reset-code",
            json!({"email": "ann@example.com", "code": code, "token": started["token"]}),
        )
        .await;
    let body = assert_error(response, 400, "code_expired").await;
    assert_eq!(
        body["message"],
        json!("The code has expired. Please request a new one.")
    );
}

#[actix_web::test]
async fn the_reset_mail_speaks_the_requested_language() {
    let app = spawn_app().await;
    app.register_ann().await;
    assert_ok(
        app.post(
            "/api/auth/forgot-password",
            json!({"email": "ann@example.com", "lang": "hu-HU"}),
        )
        .await,
    )
    .await;
    let mail = app.mailbox.take_for("ann@example.com").await;
    assert!(
        mail.subject().starts_with("Jelszó-visszaállító kód"),
        "{}",
        mail.subject()
    );
}
