//! The `token` cookie: set by the server, `SameSite=Strict` (and `Secure` on an https
//! site), and on calls that change something it counts only from a page of this site.

use serde_json::json;

use crate::helpers::{assert_error, assert_ok, spawn_app, spawn_app_with, TestApp};

async fn put_name_with_cookie(app: &TestApp, token: &str, origin: Option<&str>) -> reqwest::Response {
    let mut request = app
        .client
        .put(app.url("/api/auth/profile"))
        .header("Cookie", format!("token={token}"))
        .json(&json!({"name": "Annie"}));
    if let Some(origin) = origin {
        request = request.header("Origin", origin);
    }
    request.send().await.unwrap()
}

#[actix_web::test]
async fn a_cookie_authenticated_change_needs_an_origin_of_this_site() {
    let app = spawn_app().await;
    let ann = app.register_ann().await;

    let body = assert_error(
        put_name_with_cookie(&app, &ann.token, None).await,
        403,
        "origin_refused",
    )
    .await;
    assert_eq!(body["message"], json!("This request did not come from this site"));
    let foreign = put_name_with_cookie(&app, &ann.token, Some("https://evil.example")).await;
    assert_error(foreign, 403, "origin_refused").await;
    // A look-alike host is foreign too.
    let lookalike = format!("{}.evil.example", app.address);
    assert_error(
        put_name_with_cookie(&app, &ann.token, Some(&lookalike)).await,
        403,
        "origin_refused",
    )
    .await;
    let profile = assert_ok(app.get_auth("/api/auth/profile", &ann.token).await).await;
    assert_eq!(profile["name"], json!("Ann"));

    // From a page of this site, the cookie works.
    let same_site = put_name_with_cookie(&app, &ann.token, Some(&app.address)).await;
    assert_eq!(assert_ok(same_site).await["name"], json!("Annie"));
    // The header token needs no Origin: other sites cannot make a browser send it.
    let response = app
        .client
        .put(app.url("/api/auth/profile"))
        .bearer_auth(&ann.token)
        .header("Origin", "https://evil.example")
        .json(&json!({"name": "Ann B"}))
        .send()
        .await
        .unwrap();
    assert_ok(response).await;
    // Reading with the cookie needs no Origin.
    let response = app
        .client
        .get(app.url("/api/auth/profile"))
        .header("Cookie", format!("token={}", ann.token))
        .send()
        .await
        .unwrap();
    assert_ok(response).await;
}

#[actix_web::test]
async fn the_public_url_is_a_same_site_origin() {
    let app = spawn_app_with(|s| s.server.public_url = "https://chat.example.com".into()).await;
    let ann = app.register_ann().await;
    let response = put_name_with_cookie(&app, &ann.token, Some("https://chat.example.com")).await;
    assert_ok(response).await;
}

fn token_cookie(response: &reqwest::Response) -> String {
    response
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.starts_with("token="))
        .expect("a token cookie")
        .to_owned()
}

#[actix_web::test]
async fn on_an_https_site_the_token_cookie_is_secure_and_strict() {
    let app = spawn_app_with(|s| s.server.public_url = "https://chat.example.com".into()).await;
    app.register_ann().await;
    let response = app
        .post(
            "/api/auth/login",
            json!({"email": "ann@example.com", "password": "secret1", "rememberMe": true}),
        )
        .await;
    let cookie = token_cookie(&response);
    let body = assert_ok(response).await;
    let attributes: Vec<&str> = cookie.split(';').map(str::trim).collect();
    assert_eq!(
        attributes[0],
        format!("token={}", body["token"].as_str().unwrap())
    );
    assert!(attributes.contains(&"Secure"), "{cookie}");
    assert!(attributes.contains(&"SameSite=Strict"), "{cookie}");
    assert!(attributes.contains(&"Path=/"), "{cookie}");
    assert!(attributes.contains(&"Max-Age=2592000"), "{cookie}");
}

#[actix_web::test]
async fn on_a_plain_http_site_the_token_cookie_is_strict_but_not_secure() {
    let app = spawn_app().await;
    app.register_ann().await;
    let response = app.login("ann@example.com", "secret1").await;
    let cookie = token_cookie(&response);
    assert!(cookie.contains("SameSite=Strict"), "{cookie}");
    assert!(!cookie.contains("Secure"), "{cookie}");
    assert!(cookie.contains("Max-Age=86400"), "{cookie}");
}
