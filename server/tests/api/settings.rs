use serde_json::json;

use crate::helpers::{assert_error, assert_ok, spawn_app};

#[actix_web::test]
async fn new_users_have_default_settings_and_no_billing_info() {
    let app = spawn_app().await;
    let ann = app.register_ann().await;
    let body = assert_ok(app.get_auth("/api/settings", &ann.token).await).await;
    assert_eq!(
        body["settings"],
        json!({"language": "en-US", "aiPersonalization": {"enabled": false, "userName": "", "userInfo": ""}})
    );
    assert_eq!(body["billingInfo"], json!(null));
    let response = app.client.get(app.url("/api/settings")).send().await.unwrap();
    assert_error(response, 401, "unauthorized").await;
}

#[actix_web::test]
async fn the_language_setting_changes_the_language_of_errors() {
    let app = spawn_app().await;
    let ann = app.register_ann().await;
    let body = assert_ok(
        app.put_auth("/api/settings", &ann.token, json!({"language": "hu-HU"}))
            .await,
    )
    .await;
    assert_eq!(body["settings"]["language"], json!("hu-HU"));
    // The user's setting wins over the browser's Accept-Language.
    let response = app
        .client
        .put(app.url("/api/auth/profile"))
        .bearer_auth(&ann.token)
        .header("Accept-Language", "en-US")
        .json(&json!({"name": ""}))
        .send()
        .await
        .unwrap();
    let body = assert_error(response, 400, "name_required").await;
    assert_eq!(body["message"], json!("A név megadása kötelező"));
}

#[actix_web::test]
async fn an_unsupported_language_is_refused_and_nothing_changes() {
    let app = spawn_app().await;
    let ann = app.register_ann().await;
    let both = json!({"language": "de-DE", "aiPersonalization": {"enabled": true}});
    let body = assert_error(
        app.put_auth("/api/settings", &ann.token, both).await,
        400,
        "invalid_language",
    )
    .await;
    assert_eq!(body["message"], json!("Unsupported language: use en-US or hu-HU"));
    let settings = assert_ok(app.get_auth("/api/settings", &ann.token).await).await;
    assert_eq!(settings["settings"]["language"], json!("en-US"));
    assert_eq!(settings["settings"]["aiPersonalization"]["enabled"], json!(false));
}

#[actix_web::test]
async fn ai_personalisation_updates_merge_and_are_bounded() {
    let app = spawn_app().await;
    let ann = app.register_ann().await;
    let full =
        json!({"aiPersonalization": {"enabled": true, "userName": "Annie", "userInfo": "I teach maths."}});
    assert_ok(app.put_auth("/api/settings", &ann.token, full).await).await;
    let partial = json!({"aiPersonalization": {"enabled": false}});
    let body = assert_ok(app.put_auth("/api/settings", &ann.token, partial).await).await;
    assert_eq!(
        body["settings"]["aiPersonalization"],
        json!({"enabled": false, "userName": "Annie", "userInfo": "I teach maths."})
    );
    let too_long = json!({"aiPersonalization": {"userInfo": "x".repeat(2001)}});
    let body = assert_error(
        app.put_auth("/api/settings", &ann.token, too_long).await,
        400,
        "field_too_long",
    )
    .await;
    assert_eq!(body["field"], json!("userInfo"));
    let settings = assert_ok(app.get_auth("/api/settings", &ann.token).await).await;
    assert_eq!(
        settings["settings"]["aiPersonalization"]["userInfo"],
        json!("I teach maths.")
    );
    // A full settings object sets both at once; an empty one is refused.
    let full = json!({"language": "hu-HU", "aiPersonalization": {"enabled": true, "userName": "A", "userInfo": "B"}});
    let body = assert_ok(app.put_auth("/api/settings", &ann.token, full).await).await;
    assert_eq!(body["settings"]["language"], json!("hu-HU"));
    assert_error(
        app.put_auth("/api/settings", &ann.token, json!({})).await,
        400,
        "validation_error",
    )
    .await;
}

#[actix_web::test]
async fn private_billing_info_is_stored_without_company_fields() {
    let app = spawn_app().await;
    let ann = app.register_ann().await;
    let body = json!({
        "billingType": "private",
        "billingInfo": {"name": "Ann Smith", "companyName": "Ignored Ltd", "address": "Fő utca 1", "city": "Budapest",
                        "postalCode": "1011", "country": "HU", "vatNumber": "123"}
    });
    let saved = assert_ok(app.put_auth("/api/settings/billing-info", &ann.token, body).await).await;
    assert_eq!(saved["billingInfo"]["companyName"], json!(null));
    assert_eq!(saved["billingInfo"]["vatNumber"], json!(null));
    let settings = assert_ok(app.get_auth("/api/settings", &ann.token).await).await;
    assert_eq!(settings["billingInfo"], saved["billingInfo"]);
    assert_eq!(settings["billingInfo"]["billingType"], json!("private"));
}

#[actix_web::test]
async fn company_billing_needs_company_name_and_vat_number() {
    let app = spawn_app().await;
    let ann = app.register_ann().await;
    let mut body = json!({
        "billingType": "company",
        "billingInfo": {"name": "Ann Smith", "companyName": "Acme Kft", "address": "Fő utca 1", "city": "Budapest",
                        "postalCode": "1011", "country": "HU"}
    });
    let response = app
        .put_auth("/api/settings/billing-info", &ann.token, body.clone())
        .await;
    let error = assert_error(response, 400, "field_required").await;
    assert_eq!(error["field"], json!("vatNumber"));
    assert_eq!(error["message"], json!("VAT number is required"));
    let settings = assert_ok(app.get_auth("/api/settings", &ann.token).await).await;
    assert_eq!(settings["billingInfo"], json!(null));

    body["billingInfo"]["vatNumber"] = json!("12345678-2-41");
    let saved = assert_ok(app.put_auth("/api/settings/billing-info", &ann.token, body).await).await;
    assert_eq!(saved["billingInfo"]["companyName"], json!("Acme Kft"));
    assert_eq!(saved["billingInfo"]["vatNumber"], json!("12345678-2-41"));
}

#[actix_web::test]
async fn each_missing_billing_field_is_named_and_a_bad_type_is_refused() {
    let app = spawn_app().await;
    let ann = app.register_ann().await;
    let complete = json!({"name": "Ann", "companyName": "Acme", "address": "Street 1", "city": "Town",
                          "postalCode": "1011", "country": "HU", "vatNumber": "HU1"});
    for field in [
        "name",
        "companyName",
        "address",
        "city",
        "postalCode",
        "country",
        "vatNumber",
    ] {
        let mut info = complete.clone();
        info[field] = json!("  ");
        let response = app
            .put_auth(
                "/api/settings/billing-info",
                &ann.token,
                json!({"billingType": "company", "billingInfo": info}),
            )
            .await;
        let error = assert_error(response, 400, "field_required").await;
        assert_eq!(error["field"], json!(field));
    }
    let response = app
        .put_auth(
            "/api/settings/billing-info",
            &ann.token,
            json!({"billingType": "charity", "billingInfo": complete}),
        )
        .await;
    assert_error(response, 400, "invalid_billing_type").await;
    let mut with_control = complete.clone();
    with_control["city"] = json!("Town\u{0}");
    let response = app
        .put_auth(
            "/api/settings/billing-info",
            &ann.token,
            json!({"billingType": "company", "billingInfo": with_control}),
        )
        .await;
    assert_eq!(
        assert_error(response, 400, "validation_error").await["field"],
        json!("city")
    );
    let settings = assert_ok(app.get_auth("/api/settings", &ann.token).await).await;
    assert_eq!(settings["billingInfo"], json!(null));
}
