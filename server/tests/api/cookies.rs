//! The `token` cookie: set by the server, `SameSite=Strict` (and `Secure` on an https
//! site), and on calls that change something, or on a websocket, it counts only from a
//! page of this site: same scheme, host and port, proxies' word believed only when trusted.

use chat_server::config::Settings;
use serde_json::json;

use crate::helpers::{assert_error, assert_ok, spawn_app, spawn_app_with, TestApp};
use crate::ws::WsClient;

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

/// A cookie-authenticated change from `origin`, with more request headers.
async fn put_name_from(
    app: &TestApp,
    token: &str,
    origin: &str,
    headers: &[(&str, &str)],
) -> reqwest::Response {
    let mut request = app
        .client
        .put(app.url("/api/auth/profile"))
        .header("Cookie", format!("token={token}"))
        .header("Origin", origin)
        .json(&json!({"name": "Annie"}));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.send().await.unwrap()
}

/// Whether a websocket opened with the cookie from `origin` was signed in by it (else the
/// server waits for an auth frame and closes).
async fn socket_signed_in(
    app: &TestApp,
    token: &str,
    origin: &str,
    headers: &[(&'static str, &str)],
) -> bool {
    let mut socket = WsClient::connect_with_cookie_and(app, token, origin, headers).await;
    while let Some(frame) = socket.next().await {
        if frame["type"] == "ready" {
            return true;
        }
    }
    false
}

/// Short auth timeout: a socket the cookie does not sign in closes within a second.
async fn origin_app(configure: impl FnOnce(&mut Settings) + 'static) -> TestApp {
    spawn_app_with(move |s| {
        s.chat.auth_timeout_secs = 1;
        configure(s);
    })
    .await
}

#[actix_web::test]
async fn an_https_origin_is_not_this_plain_http_site() {
    let app = origin_app(|_| {}).await;
    let ann = app.register_ann().await;
    let https = app.address.replacen("http://", "https://", 1);
    assert_error(
        put_name_from(&app, &ann.token, &https, &[]).await,
        403,
        "origin_refused",
    )
    .await;
    assert!(!socket_signed_in(&app, &ann.token, &https, &[]).await);
    // Another port of the same host is another site too.
    let port: u16 = app.address.rsplit(':').next().unwrap().parse().unwrap();
    let other_port = format!("http://127.0.0.1:{}", port.wrapping_add(1));
    assert_error(
        put_name_from(&app, &ann.token, &other_port, &[]).await,
        403,
        "origin_refused",
    )
    .await;
    // The very origin the browser used works.
    assert_ok(put_name_from(&app, &ann.token, &app.address, &[]).await).await;
    assert!(socket_signed_in(&app, &ann.token, &app.address, &[]).await);
}

#[actix_web::test]
async fn a_forwarded_host_from_an_untrusted_peer_is_not_believed() {
    let app = origin_app(|_| {}).await;
    let ann = app.register_ann().await;
    let spoofs: [&[(&'static str, &str)]; 2] = [
        &[
            ("X-Forwarded-Host", "evil.example"),
            ("X-Forwarded-Proto", "https"),
        ],
        &[("Forwarded", "for=1.2.3.4;host=evil.example;proto=https")],
    ];
    for headers in spoofs {
        assert!(
            !socket_signed_in(&app, &ann.token, "https://evil.example", headers).await,
            "{headers:?}"
        );
        assert_error(
            put_name_from(&app, &ann.token, "https://evil.example", headers).await,
            403,
            "origin_refused",
        )
        .await;
    }
    let profile = assert_ok(app.get_auth("/api/auth/profile", &ann.token).await).await;
    assert_eq!(profile["name"], json!("Ann"));
}

#[actix_web::test]
async fn a_trusted_proxy_says_which_host_and_scheme_the_browser_used() {
    let app = origin_app(|s| s.rate_limit.trusted_proxies = vec!["127.0.0.1/32".into()]).await;
    let ann = app.register_ann().await;
    let site = "https://chat.example.com";
    let proxied: [&[(&'static str, &str)]; 2] = [
        &[
            ("X-Forwarded-Host", "chat.example.com"),
            ("X-Forwarded-Proto", "https"),
        ],
        &[("Forwarded", "for=1.2.3.4;host=chat.example.com;proto=https")],
    ];
    for headers in proxied {
        assert!(
            socket_signed_in(&app, &ann.token, site, headers).await,
            "{headers:?}"
        );
        assert_ok(put_name_from(&app, &ann.token, site, headers).await).await;
        // What the proxy saw is the site: the address behind it, or plain http, is not.
        assert!(!socket_signed_in(&app, &ann.token, &app.address, headers).await);
        assert_error(
            put_name_from(&app, &ann.token, "http://chat.example.com", headers).await,
            403,
            "origin_refused",
        )
        .await;
    }
}

#[actix_web::test]
async fn with_a_public_url_only_its_origin_is_this_site() {
    let app = origin_app(|s| s.server.public_url = "https://chat.example.com/".into()).await;
    let ann = app.register_ann().await;
    assert_ok(put_name_from(&app, &ann.token, "https://chat.example.com", &[]).await).await;
    assert!(socket_signed_in(&app, &ann.token, "https://chat.example.com", &[]).await);
    for other in [
        "http://chat.example.com",
        "https://chat.example.com:8443",
        app.address.as_str(),
    ] {
        assert_error(
            put_name_from(&app, &ann.token, other, &[]).await,
            403,
            "origin_refused",
        )
        .await;
        assert!(!socket_signed_in(&app, &ann.token, other, &[]).await, "{other}");
    }
}
