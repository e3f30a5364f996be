//! Every validation rule of SPEC §5 with its error, in en-US and hu-HU, and proof that a
//! refused call changed nothing.

use serde_json::{json, Value};

use crate::helpers::{assert_error, assert_ok, spawn_app};

struct Case {
    path: &'static str,
    body: Value,
    status: u16,
    code: &'static str,
    en: &'static str,
    hu: &'static str,
}

fn registration(overrides: Value) -> Value {
    let mut body =
        json!({"name": "Ann", "email": "ann@example.com", "password": "secret1", "privacyAccepted": true});
    for (k, v) in overrides.as_object().unwrap() {
        if v.is_null() {
            body.as_object_mut().unwrap().remove(k);
        } else {
            body[k] = v.clone();
        }
    }
    body
}

fn public_cases() -> Vec<Case> {
    let send = "/api/auth/register/send-code";
    vec![
        Case {
            path: send,
            body: registration(json!({"name": null})),
            status: 400,
            code: "name_required",
            en: "Name is required",
            hu: "A név megadása kötelező",
        },
        Case {
            path: send,
            body: registration(json!({"name": "   "})),
            status: 400,
            code: "name_required",
            en: "Name is required",
            hu: "A név megadása kötelező",
        },
        Case {
            path: send,
            body: registration(json!({"email": null})),
            status: 400,
            code: "email_required",
            en: "Email is required",
            hu: "Az e-mail cím megadása kötelező",
        },
        Case {
            path: send,
            body: registration(json!({"email": "ann.example.com"})),
            status: 400,
            code: "email_invalid",
            en: "Invalid email format",
            hu: "Érvénytelen e-mail formátum",
        },
        Case {
            path: send,
            body: registration(json!({"password": null})),
            status: 400,
            code: "password_required",
            en: "Password is required",
            hu: "A jelszó megadása kötelező",
        },
        Case {
            path: send,
            body: registration(json!({"password": "12345"})),
            status: 400,
            code: "password_too_short",
            en: "Password must be at least 6 characters",
            hu: "A jelszónak legalább 6 karakter hosszúnak kell lennie",
        },
        Case {
            path: send,
            body: registration(json!({"confirmPassword": "secret2"})),
            status: 400,
            code: "passwords_mismatch",
            en: "Passwords do not match",
            hu: "A jelszavak nem egyeznek",
        },
        Case {
            path: send,
            body: registration(json!({"privacyAccepted": false})),
            status: 400,
            code: "privacy_not_accepted",
            en: "You must accept the privacy policy",
            hu: "El kell fogadnia az adatvédelmi szabályzatot",
        },
        Case {
            path: send,
            body: registration(json!({"privacyAccepted": null})),
            status: 400,
            code: "privacy_not_accepted",
            en: "You must accept the privacy policy",
            hu: "El kell fogadnia az adatvédelmi szabályzatot",
        },
        Case {
            path: send,
            body: registration(json!({"privacyAccepted": "yes"})),
            status: 400,
            code: "validation_error",
            en: "Please fill in all required fields correctly",
            hu: "Kérjük, töltsön ki minden kötelező mezőt helyesen",
        },
        Case {
            path: "/api/auth/register/verify",
            body: json!({"token": "t"}),
            status: 400,
            code: "code_required",
            en: "Verification code is required",
            hu: "Az ellenőrző kód megadása kötelező",
        },
        Case {
            path: "/api/auth/register/verify",
            body: json!({"token": "t", "code": "12345"}),
            status: 400,
            code: "code_format",
            en: "The verification code must be 6 digits",
            hu: "Az ellenőrző kódnak 6 számjegyből kell állnia",
        },
        Case {
            path: "/api/auth/register/verify",
            body: json!({"token": "t", "code": "123456"}),
            status: 400,
            code: "verification_failed",
            en: "Verification failed",
            hu: "Az ellenőrzés sikertelen",
        },
        Case {
            path: "/api/auth/login",
            body: json!({"password": "secret1"}),
            status: 400,
            code: "email_required",
            en: "Email is required",
            hu: "Az e-mail cím megadása kötelező",
        },
        Case {
            path: "/api/auth/login",
            body: json!({"email": "ann@"}),
            status: 400,
            code: "email_invalid",
            en: "Invalid email format",
            hu: "Érvénytelen e-mail formátum",
        },
        Case {
            path: "/api/auth/login",
            body: json!({"email": "ann@example.com"}),
            status: 400,
            code: "password_required",
            en: "Password is required",
            hu: "A jelszó megadása kötelező",
        },
        Case {
            path: "/api/auth/forgot-password",
            body: json!({"email": "nope"}),
            status: 400,
            code: "email_invalid",
            en: "Invalid email format",
            hu: "Érvénytelen e-mail formátum",
        },
        Case {
            path: "/api/auth/verify-reset-code",
            body: json!({"email": "ann@example.com", "token": "t", "code": "12"}),
            status: 400,
            code: "code_format",
            en: "The verification code must be 6 digits",
            hu: "Az ellenőrző kódnak 6 számjegyből kell állnia",
        },
        Case {
            path: "/api/auth/reset-password",
            body: json!({"token": "t"}),
            status: 400,
            code: "new_password_required",
            en: "New password is required",
            hu: "Az új jelszó megadása kötelező",
        },
        Case {
            path: "/api/auth/reset-password",
            body: json!({"token": "t", "newPassword": "123"}),
            status: 400,
            code: "password_too_short",
            en: "Password must be at least 6 characters",
            hu: "A jelszónak legalább 6 karakter hosszúnak kell lennie",
        },
        Case {
            path: "/api/auth/reset-password",
            body: json!({"token": "t", "newPassword": "secret1", "confirmPassword": "other1"}),
            status: 400,
            code: "passwords_mismatch",
            en: "Passwords do not match",
            hu: "A jelszavak nem egyeznek",
        },
    ]
}

#[actix_web::test]
async fn every_public_validation_rule_answers_in_both_languages_and_changes_nothing() {
    let app = spawn_app().await;
    for case in public_cases() {
        for (lang, expected) in [("en-US", case.en), ("hu-HU,hu;q=0.9", case.hu)] {
            let response = app.post_lang(case.path, lang, case.body.clone()).await;
            let body = assert_error(response, case.status, case.code).await;
            assert_eq!(
                body["message"],
                json!(expected),
                "{} {} {lang}",
                case.path,
                case.body
            );
        }
    }
    // Nothing was registered, stored or mailed.
    assert_eq!(app.mailbox.count_for("ann@example.com"), 0);
    let response = app.login("ann@example.com", "secret1").await;
    assert_error(response, 401, "invalid_credentials").await;
}

#[actix_web::test]
async fn the_body_language_of_a_registration_overrides_the_browser_language() {
    let app = spawn_app().await;
    let body = registration(json!({"password": "123", "language": "hu-HU"}));
    let response = app.post_lang("/api/auth/register/send-code", "en-US", body).await;
    let error = assert_error(response, 400, "password_too_short").await;
    assert_eq!(
        error["message"],
        json!("A jelszónak legalább 6 karakter hosszúnak kell lennie")
    );
}

#[actix_web::test]
async fn password_change_rules_answer_in_the_users_language() {
    let app = spawn_app().await;
    let ann = app.register_ann().await;
    let cases = [
        (
            json!({"newPassword": "secret2"}),
            "current_password_required",
            "Current password is required",
            "A jelenlegi jelszó megadása kötelező",
        ),
        (
            json!({"currentPassword": "secret1"}),
            "new_password_required",
            "New password is required",
            "Az új jelszó megadása kötelező",
        ),
        (
            json!({"currentPassword": "secret1", "newPassword": "12345"}),
            "password_too_short",
            "Password must be at least 6 characters",
            "A jelszónak legalább 6 karakter hosszúnak kell lennie",
        ),
        (
            json!({"currentPassword": "secret1", "newPassword": "secret2", "confirmPassword": "secret3"}),
            "passwords_mismatch",
            "Passwords do not match",
            "A jelszavak nem egyeznek",
        ),
        (
            json!({"currentPassword": "wrong1", "newPassword": "secret2"}),
            "wrong_password",
            "Current password is incorrect",
            "A jelenlegi jelszó helytelen",
        ),
    ];
    for language in ["en-US", "hu-HU"] {
        assert_ok(
            app.put_auth("/api/settings", &ann.token, json!({"language": language}))
                .await,
        )
        .await;
        for (body, code, en, hu) in &cases {
            let response = app.put_auth("/api/auth/password", &ann.token, body.clone()).await;
            let error = assert_error(response, 400, code).await;
            let expected = if language == "en-US" { en } else { hu };
            assert_eq!(error["message"], json!(expected), "{language} {body}");
        }
    }
    // The token still works and the password is unchanged.
    assert_ok(app.get_auth("/api/auth/profile", &ann.token).await).await;
    assert_ok(app.login("ann@example.com", "secret1").await).await;
}

#[actix_web::test]
async fn billing_field_errors_name_the_field_in_both_languages() {
    let app = spawn_app().await;
    let ann = app.register_ann().await;
    let body = json!({"billingType": "company", "billingInfo": {"name": "Ann", "address": "Street 1", "city": "Town",
                      "postalCode": "1011", "country": "HU", "vatNumber": "HU1"}});
    let en = assert_error(
        app.put_auth("/api/settings/billing-info", &ann.token, body.clone())
            .await,
        400,
        "field_required",
    )
    .await;
    assert_eq!(en["message"], json!("Company name is required"));
    assert_ok(
        app.put_auth("/api/settings", &ann.token, json!({"language": "hu-HU"}))
            .await,
    )
    .await;
    let hu = assert_error(
        app.put_auth("/api/settings/billing-info", &ann.token, body).await,
        400,
        "field_required",
    )
    .await;
    assert_eq!(hu["message"], json!("A cégnév megadása kötelező"));
}
