//! Code checks are counted per account (or registration e-mail) and flow across resends
//! and new requests, and parallel guesses cannot pass the cap.

use serde_json::{json, Value};

use crate::helpers::{assert_error, assert_ok, spawn_app, spawn_app_with, TestApp};

fn wrong_for(code: &str) -> &'static str {
    if code == "000000" {
        "111111"
    } else {
        "000000"
    }
}

async fn verify_registration(app: &TestApp, token: &Value, code: &str) -> reqwest::Response {
    app.post("/api/auth/register/verify", json!({"token": token, "code": code}))
        .await
}

#[actix_web::test]
async fn ten_wrong_registration_codes_across_resends_lock_the_registration_for_an_hour() {
    let app = spawn_app().await;
    let mut token =
        assert_ok(app.send_code("Ann", "ann@example.com", "secret1").await).await["token"].clone();
    let mut code = app.mailbox.take_for("ann@example.com").await.code();
    // 4 wrong codes per token (the fifth would kill it), then a resend: 4 + 4 + 2.
    for round in [4, 4, 2] {
        for _ in 0..round {
            assert_error(
                verify_registration(&app, &token, wrong_for(&code)).await,
                400,
                "invalid_code",
            )
            .await;
        }
        if round == 4 {
            let resent = assert_ok(
                app.post("/api/auth/register/resend-code", json!({"token": token}))
                    .await,
            )
            .await;
            token = resent["token"].clone();
            code = app.mailbox.take_for("ann@example.com").await.code();
        }
    }
    // Even the right code is refused now, and no new code is mailed.
    let response = verify_registration(&app, &token, &code).await;
    let retry_after: u64 = response.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(retry_after > 50 * 60, "{retry_after}");
    assert_error(response, 429, "too_many_attempts").await;
    let response = app
        .post("/api/auth/register/resend-code", json!({"token": token}))
        .await;
    assert_error(response, 429, "too_many_attempts").await;
    // Starting over with send-code does not reset the count either.
    let again = assert_ok(app.send_code("Ann", "ann@example.com", "secret1").await).await;
    let new_code = app.mailbox.take_for("ann@example.com").await.code();
    assert_error(
        verify_registration(&app, &again["token"], &new_code).await,
        429,
        "too_many_attempts",
    )
    .await;

    // An hour later the flow works again.
    app.advance_minutes(61);
    let again = assert_ok(app.send_code("Ann", "ann@example.com", "secret1").await).await;
    let new_code = app.mailbox.take_for("ann@example.com").await.code();
    assert_ok(verify_registration(&app, &again["token"], &new_code).await).await;
}

#[actix_web::test]
async fn ten_wrong_reset_codes_across_new_requests_lock_the_reset_for_an_hour() {
    let app = spawn_app().await;
    app.register_ann().await;
    let forgot = || app.post("/api/auth/forgot-password", json!({"email": "ann@example.com"}));
    let verify = |token: Value, code: String| {
        app.post(
            "/api/auth/verify-reset-code",
            json!({"email": "ann@example.com", "code": code, "token": token}),
        )
    };
    let mut last = None;
    for round in [4, 4, 2] {
        let token = assert_ok(forgot().await).await["token"].clone();
        let code = app.mailbox.take_for("ann@example.com").await.code();
        for _ in 0..round {
            let response = verify(token.clone(), wrong_for(&code).to_owned()).await;
            assert_error(response, 400, "invalid_code").await;
        }
        last = Some((token, code));
    }
    let (token, code) = last.unwrap();
    assert_error(verify(token, code).await, 429, "too_many_attempts").await;
    let token = assert_ok(forgot().await).await["token"].clone();
    let code = app.mailbox.take_for("ann@example.com").await.code();
    assert_error(verify(token, code).await, 429, "too_many_attempts").await;
    // The password is unchanged.
    assert_ok(app.login("ann@example.com", "secret1").await).await;
}

#[actix_web::test]
async fn twenty_parallel_wrong_codes_never_exceed_the_cap() {
    // Only the per-account cap stands between the guesses and the code.
    let app = spawn_app_with(|s| s.auth.max_code_attempts = 1000).await;
    app.register_ann().await;
    let token = assert_ok(
        app.post("/api/auth/forgot-password", json!({"email": "ann@example.com"}))
            .await,
    )
    .await["token"]
        .clone();
    let code = app.mailbox.take_for("ann@example.com").await.code();
    let guesses = (0..20).map(|i| {
        // Twenty different wrong codes.
        let guess = format!("{:06}", (code.parse::<u32>().unwrap() + 1 + i) % 1_000_000);
        app.post(
            "/api/auth/verify-reset-code",
            json!({"email": "ann@example.com", "code": guess, "token": token}),
        )
    });
    let responses = futures_util::future::join_all(guesses).await;
    let statuses: Vec<u16> = responses.iter().map(|r| r.status().as_u16()).collect();
    let checked = statuses.iter().filter(|s| **s == 400).count();
    let refused = statuses.iter().filter(|s| **s == 429).count();
    assert_eq!((checked, refused), (10, 10), "{statuses:?}");
}
