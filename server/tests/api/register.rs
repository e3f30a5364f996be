use serde_json::json;

use crate::helpers::{assert_error, assert_ok, spawn_app};

#[actix_web::test]
async fn registration_mails_a_code_and_verifying_it_logs_the_user_in() {
    let app = spawn_app().await;
    let sent = assert_ok(app.send_code("Ann", "Ann@Example.com", "secret1").await).await;
    assert_eq!(sent.as_object().unwrap().keys().collect::<Vec<_>>(), ["token"]);

    let mail = app.mailbox.take_for("ann@example.com").await;
    let code = mail.code();
    assert!(mail.subject().contains(&code));
    assert!(mail.body().contains("Hello Ann"));

    let user = assert_ok(
        app.post(
            "/api/auth/register/verify",
            json!({"token": sent["token"], "code": code}),
        )
        .await,
    )
    .await;
    assert_eq!(user["name"], json!("Ann"));
    assert_eq!(user["email"], json!("ann@example.com"));
    assert_eq!(user["settings"]["language"], json!("en-US"));
    assert_eq!(user["settings"]["aiPersonalization"]["enabled"], json!(false));
    assert!(user["_id"].as_str().is_some_and(|id| !id.is_empty()));

    let token = user["token"].as_str().unwrap();
    let profile = assert_ok(app.get_auth("/api/auth/profile", token).await).await;
    assert_eq!(profile["_id"], user["_id"]);
    // A registration logs in for 30 days.
    app.advance_minutes(29 * 24 * 60);
    assert_ok(app.get_auth("/api/auth/profile", token).await).await;
    app.advance_minutes(2 * 24 * 60);
    assert_error(
        app.get_auth("/api/auth/profile", token).await,
        401,
        "unauthorized",
    )
    .await;
}

#[actix_web::test]
async fn the_code_mail_speaks_the_registration_language() {
    let app = spawn_app().await;
    let body = json!({"name": "Anna", "email": "anna@example.hu", "password": "titok12", "privacyAccepted": true, "language": "hu-HU"});
    let sent = assert_ok(app.post("/api/auth/register/send-code", body).await).await;
    let mail = app.mailbox.take_for("anna@example.hu").await;
    assert!(
        mail.subject().starts_with("Az Ön ellenőrző kódja"),
        "{}",
        mail.subject()
    );
    assert!(mail.body().contains("Kedves Anna!"));
    let user = assert_ok(
        app.post(
            "/api/auth/register/verify",
            json!({"token": sent["token"], "code": mail.code()}),
        )
        .await,
    )
    .await;
    assert_eq!(user["settings"]["language"], json!("hu-HU"));
}

#[actix_web::test]
async fn a_taken_email_answers_like_a_new_one_and_the_owner_is_told_in_their_language() {
    let app = spawn_app().await;
    let ann = app.register_ann().await;
    assert_ok(
        app.put_auth("/api/settings", &ann.token, json!({"language": "hu-HU"}))
            .await,
    )
    .await;

    let taken = assert_ok(app.send_code("Other", "ANN@example.COM", "secret2").await).await;
    let fresh = assert_ok(app.send_code("Bob", "bob@example.com", "secret2").await).await;
    let keys = |v: &serde_json::Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(keys(&taken), keys(&fresh));
    assert_eq!(
        taken["token"].as_str().unwrap().len(),
        fresh["token"].as_str().unwrap().len()
    );

    // The owner gets a notice in Hungarian, their setting, not a code.
    let notice = app.mailbox.take_for("ann@example.com").await;
    assert_eq!(notice.subject(), "Valaki az Ön címével próbált regisztrálni");
    assert!(notice.body().contains("már tartozik fiók"), "{}", notice.body());
    assert!(!notice.body().contains("ellenőrző kód"), "{}", notice.body());

    // Guessing a code or resending answers as it would for a new address.
    let response = app
        .post(
            "/api/auth/register/verify",
            json!({"token": taken["token"], "code": "123456"}),
        )
        .await;
    assert_error(response, 400, "invalid_code").await;
    let resent = app
        .post("/api/auth/register/resend-code", json!({"token": taken["token"]}))
        .await;
    assert_ok(resent).await;
    let again = app.mailbox.take_for("ann@example.com").await;
    assert_eq!(again.subject(), "Valaki az Ön címével próbált regisztrálni");
    // Nothing about Ann changed.
    assert_ok(app.login("ann@example.com", "secret1").await).await;
    assert_error(
        app.login("ann@example.com", "secret2").await,
        401,
        "invalid_credentials",
    )
    .await;
}

#[actix_web::test]
async fn a_wrong_code_is_refused_and_creates_no_user() {
    let app = spawn_app().await;
    let sent = assert_ok(app.send_code("Ann", "ann@example.com", "secret1").await).await;
    let code = app.mailbox.take_for("ann@example.com").await.code();
    let wrong = if code == "000000" { "111111" } else { "000000" };
    let response = app
        .post(
            "/api/auth/register/verify",
            json!({"token": sent["token"], "code": wrong}),
        )
        .await;
    let body = assert_error(response, 400, "invalid_code").await;
    assert_eq!(body["message"], json!("Invalid code"));
    assert_error(
        app.login("ann@example.com", "secret1").await,
        401,
        "invalid_credentials",
    )
    .await;
}

#[actix_web::test]
async fn codes_expire_after_ten_minutes() {
    let app = spawn_app().await;
    let sent = assert_ok(app.send_code("Ann", "ann@example.com", "secret1").await).await;
    let code = app.mailbox.take_for("ann@example.com").await.code();
    app.advance_minutes(11);
    let response = app
        .post(
            "/api/auth/register/verify",
            json!({"token": sent["token"], "code": code}),
        )
        .await;
    assert_error(response, 400, "code_expired").await;
    assert_error(
        app.login("ann@example.com", "secret1").await,
        401,
        "invalid_credentials",
    )
    .await;
}

#[actix_web::test]
async fn five_wrong_codes_kill_the_registration_token() {
    let app = spawn_app().await;
    let sent = assert_ok(app.send_code("Ann", "ann@example.com", "secret1").await).await;
    let code = app.mailbox.take_for("ann@example.com").await.code();
    let wrong = if code == "000000" { "111111" } else { "000000" };
    for _ in 0..4 {
        let response = app
            .post(
                "/api/auth/register/verify",
                json!({"token": sent["token"], "code": wrong}),
            )
            .await;
        assert_error(response, 400, "invalid_code").await;
    }
    let response = app
        .post(
            "/api/auth/register/verify",
            json!({"token": sent["token"], "code": wrong}),
        )
        .await;
    let body = assert_error(response, 429, "too_many_attempts").await;
    assert_eq!(
        body["message"],
        json!("Too many failed attempts. Please try again later.")
    );
    // Even the right code no longer works.
    let response = app
        .post(
            "/api/auth/register/verify",
            json!({"token": sent["token"], "code": code}),
        )
        .await;
    assert_error(response, 429, "too_many_attempts").await;
}

#[actix_web::test]
async fn resending_replaces_both_token_and_code() {
    let app = spawn_app().await;
    let first = assert_ok(app.send_code("Ann", "ann@example.com", "secret1").await).await;
    let first_code = app.mailbox.take_for("ann@example.com").await.code();
    let second = assert_ok(
        app.post("/api/auth/register/resend-code", json!({"token": first["token"]}))
            .await,
    )
    .await;
    assert_ne!(first["token"], second["token"]);
    let second_code = app.mailbox.take_for("ann@example.com").await.code();

    let response = app
        .post(
            "/api/auth/register/verify",
            json!({"token": first["token"], "code": second_code}),
        )
        .await;
    assert_error(response, 400, "verification_failed").await;
    let response = app
        .post("/api/auth/register/resend-code", json!({"token": first["token"]}))
        .await;
    assert_error(response, 400, "verification_failed").await;
    if first_code != second_code {
        let response = app
            .post(
                "/api/auth/register/verify",
                json!({"token": second["token"], "code": first_code}),
            )
            .await;
        assert_error(response, 400, "invalid_code").await;
    }
    assert_ok(
        app.post(
            "/api/auth/register/verify",
            json!({"token": second["token"], "code": second_code}),
        )
        .await,
    )
    .await;
}

#[actix_web::test]
async fn a_resend_revives_an_expired_code() {
    let app = spawn_app().await;
    let first = assert_ok(app.send_code("Ann", "ann@example.com", "secret1").await).await;
    app.mailbox.take_for("ann@example.com").await;
    app.advance_minutes(30);
    let second = assert_ok(
        app.post("/api/auth/register/resend-code", json!({"token": first["token"]}))
            .await,
    )
    .await;
    let code = app.mailbox.take_for("ann@example.com").await.code();
    assert_ok(
        app.post(
            "/api/auth/register/verify",
            json!({"token": second["token"], "code": code}),
        )
        .await,
    )
    .await;
}

#[actix_web::test]
async fn unknown_registration_tokens_fail_verification() {
    let app = spawn_app().await;
    let response = app
        .post(
            "/api/auth/register/verify",
            json!({"token": "nope", "code": "123456"}),
        )
        .await;
    assert_error(response, 400, "verification_failed").await;
    let response = app
        .post("/api/auth/register/verify", json!({"code": "123456"}))
        .await;
    assert_error(response, 400, "verification_failed").await;
    let response = app
        .post("/api/auth/register/resend-code", json!({"token": "nope"}))
        .await;
    assert_error(response, 400, "verification_failed").await;
}

#[actix_web::test]
async fn codes_tokens_and_passwords_are_stored_only_hashed() {
    let app = spawn_app().await;
    let sent = assert_ok(app.send_code("Ann", "ann@example.com", "secret1").await).await;
    let code = app.mailbox.take_for("ann@example.com").await.code();
    let token = sent["token"].as_str().unwrap();
    let rows: Vec<(String, String, String)> = match &app.state.db {
        chat_server::db::Db::Sqlite(pool, _) => {
            sqlx::query_as("SELECT token_hash, code_hash, password_hash FROM pending_registrations")
                .fetch_all(pool)
                .await
                .unwrap()
        }
        chat_server::db::Db::Postgres(pool) => {
            sqlx::query_as("SELECT token_hash, code_hash, password_hash FROM pending_registrations")
                .fetch_all(pool)
                .await
                .unwrap()
        }
    };
    assert_eq!(rows.len(), 1);
    let (token_hash, code_hash, password_hash) = &rows[0];
    assert!(!token_hash.contains(token) && !code_hash.contains(&code));
    assert!(password_hash.starts_with("$argon2id$") && !password_hash.contains("secret1"));
}

#[actix_web::test]
async fn a_second_send_code_makes_the_first_token_useless() {
    let app = spawn_app().await;
    let first = assert_ok(app.send_code("Ann", "ann@example.com", "secret1").await).await;
    let first_code = app.mailbox.take_for("ann@example.com").await.code();
    assert_ok(app.send_code("Ann", "ann@example.com", "secret1").await).await;
    let response = app
        .post(
            "/api/auth/register/verify",
            json!({"token": first["token"], "code": first_code}),
        )
        .await;
    assert_error(response, 400, "verification_failed").await;
}
