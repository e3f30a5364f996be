//! Browser security headers: the client's Content-Security-Policy and the rest on every
//! answer (the page, the API, errors), HSTS only on an https site, Stripe's sources only
//! where Stripe takes payments, and users' files with a stricter policy of their own.

use reqwest::multipart::{Form, Part};
use reqwest::Response;
use secrecy::SecretString;

use crate::helpers::{spawn_app, spawn_app_with, TestApp};

fn header(response: &Response, name: &str) -> Option<String> {
    response
        .headers()
        .get(name)
        .map(|v| v.to_str().unwrap().to_owned())
}

async fn get(app: &TestApp, path: &str) -> Response {
    app.client.get(app.url(path)).send().await.unwrap()
}

/// One directive of a policy, e.g. `script-src 'self'`.
fn directive(policy: &str, name: &str) -> Option<String> {
    policy
        .split(';')
        .map(str::trim)
        .find(|d| d.split_whitespace().next() == Some(name))
        .map(str::to_owned)
}

/// The headers every answer carries, whatever its policy.
fn assert_common_headers(response: &Response) {
    let what = response.url().path().to_owned();
    assert_eq!(
        header(response, "x-frame-options").as_deref(),
        Some("DENY"),
        "{what}"
    );
    assert_eq!(
        header(response, "referrer-policy").as_deref(),
        Some("strict-origin-when-cross-origin"),
        "{what}"
    );
    assert_eq!(
        header(response, "x-content-type-options").as_deref(),
        Some("nosniff"),
        "{what}"
    );
}

/// The web client's policy: own sources only, no inline script, never framed.
fn assert_client_policy(response: &Response) -> String {
    let what = response.url().path().to_owned();
    let policy = header(response, "content-security-policy").unwrap_or_else(|| panic!("no CSP on {what}"));
    assert_eq!(
        directive(&policy, "default-src").as_deref(),
        Some("default-src 'self'"),
        "{policy}"
    );
    assert_eq!(
        directive(&policy, "frame-ancestors").as_deref(),
        Some("frame-ancestors 'none'"),
        "{policy}"
    );
    assert_eq!(
        directive(&policy, "object-src").as_deref(),
        Some("object-src 'none'"),
        "{policy}"
    );
    let scripts = directive(&policy, "script-src").expect("script-src");
    assert!(
        !scripts.contains("unsafe-inline") && !scripts.contains("unsafe-eval"),
        "{policy}"
    );
    assert_common_headers(response);
    policy
}

/// A server whose `WEB_DIR` holds a (tiny) built client.
async fn app_with_client(configure: impl FnOnce(&mut chat_server::config::Settings) + 'static) -> TestApp {
    spawn_app_with(move |s| {
        let web = s.server.data_dir.join("web");
        std::fs::create_dir_all(&web).unwrap();
        std::fs::write(web.join("index.html"), "<!doctype html><title>AI Chat</title>").unwrap();
        std::fs::write(web.join("app.js"), "console.log('hi')").unwrap();
        s.server.web_dir = web;
        configure(s);
    })
    .await
}

#[actix_web::test]
async fn the_page_api_answers_and_errors_all_carry_the_security_headers() {
    let app = app_with_client(|_| {}).await;
    for path in ["/", "/chat/some-conversation", "/app.js"] {
        let response = get(&app, path).await;
        assert_eq!(response.status(), 200, "{path}");
        assert_client_policy(&response);
        assert!(
            header(&response, "strict-transport-security").is_none(),
            "http site: no HSTS"
        );
    }
    let health = get(&app, "/api/health").await;
    assert_eq!(health.status(), 200);
    assert_client_policy(&health);
    // Errors: a missing token, a missing route, a malformed body.
    let unauthorized = get(&app, "/api/auth/profile").await;
    assert_eq!(unauthorized.status(), 401);
    assert_client_policy(&unauthorized);
    let missing = get(&app, "/api/no-such-call").await;
    assert_eq!(missing.status(), 404);
    assert_client_policy(&missing);
    let bad = app
        .client
        .post(app.url("/api/auth/login"))
        .header("Content-Type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 400);
    assert_client_policy(&bad);
}

#[actix_web::test]
async fn the_servers_own_pages_run_nothing_and_keep_their_inline_styles() {
    // No built client: the placeholder page, whose styles are inline.
    let app = spawn_app().await;
    let page = get(&app, "/").await;
    assert_eq!(page.status(), 200);
    let policy = header(&page, "content-security-policy").expect("a CSP");
    assert_eq!(
        directive(&policy, "default-src").as_deref(),
        Some("default-src 'none'"),
        "{policy}"
    );
    assert_eq!(
        directive(&policy, "style-src").as_deref(),
        Some("style-src 'unsafe-inline'"),
        "{policy}"
    );
    assert!(directive(&policy, "script-src").is_none(), "{policy}");
    assert_common_headers(&page);
}

#[actix_web::test]
async fn hsts_is_sent_only_when_the_public_url_is_https() {
    let app = app_with_client(|s| s.server.public_url = "https://chat.example.com".into()).await;
    for path in ["/", "/api/health", "/api/no-such-call"] {
        let response = get(&app, path).await;
        assert_eq!(
            header(&response, "strict-transport-security").as_deref(),
            Some("max-age=31536000"),
            "{path}"
        );
        assert_client_policy(&response);
    }
    let app = app_with_client(|s| s.server.public_url = "http://chat.example.com".into()).await;
    let response = get(&app, "/").await;
    assert!(header(&response, "strict-transport-security").is_none());
}

#[actix_web::test]
async fn stripe_is_allowed_in_the_policy_only_when_stripe_takes_payments() {
    let demo = app_with_client(|_| {}).await;
    let policy = assert_client_policy(&get(&demo, "/").await);
    assert_eq!(
        directive(&policy, "script-src").as_deref(),
        Some("script-src 'self'"),
        "{policy}"
    );
    assert_eq!(
        directive(&policy, "frame-src").as_deref(),
        Some("frame-src 'none'"),
        "{policy}"
    );
    assert!(!policy.contains("stripe"), "{policy}");

    // Nothing listens there: the prices prepared at start-up only fail in the log.
    let stripe = app_with_client(|s| {
        s.billing.stripe_secret_key = SecretString::from("sk_test_headers");
        s.billing.stripe_publishable_key = "pk_test_headers".into();
        s.billing.stripe_webhook_secret = SecretString::from("whsec_headers");
        s.billing.stripe_api_base = "http://127.0.0.1:9".into();
        s.billing.stripe_js_url = "https://js.stripe.com/v3/".into();
    })
    .await;
    let policy = assert_client_policy(&get(&stripe, "/").await);
    assert_eq!(
        directive(&policy, "script-src").as_deref(),
        Some("script-src 'self' https://js.stripe.com"),
        "{policy}"
    );
    let frames = directive(&policy, "frame-src").unwrap();
    assert!(frames.contains("https://js.stripe.com"), "{policy}");
    let connect = directive(&policy, "connect-src").unwrap();
    assert!(connect.contains("http://127.0.0.1:9"), "{policy}");
    assert!(!connect.contains("unsafe"), "{policy}");
}

fn png() -> Vec<u8> {
    let img = image::RgbImage::from_pixel(8, 8, image::Rgb([20, 120, 200]));
    let mut out = std::io::Cursor::new(Vec::new());
    img.write_to(&mut out, image::ImageFormat::Png).unwrap();
    out.into_inner()
}

async fn upload(app: &TestApp, token: &str, name: &str, bytes: Vec<u8>) -> String {
    let form = Form::new().part("file", Part::bytes(bytes).file_name(name.to_owned()));
    let response = app
        .client
        .post(app.url("/api/files"))
        .bearer_auth(token)
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201);
    let body: serde_json::Value = response.json().await.unwrap();
    body["data"]["_id"].as_str().unwrap().to_owned()
}

#[actix_web::test]
async fn users_files_keep_their_own_sandboxed_policy() {
    let app = app_with_client(|_| {}).await;
    let ann = app.register_ann().await;
    app.set_plan(&ann.id, "base").await;
    let image = upload(&app, &ann.token, "photo.png", png()).await;
    let pdf = upload(
        &app,
        &ann.token,
        "report.pdf",
        crate::documents::pdf(&["Page one."]),
    )
    .await;

    let file = |path: String| {
        let app = &app;
        let token = ann.token.clone();
        async move {
            app.client
                .get(app.url(&path))
                .bearer_auth(token)
                .send()
                .await
                .unwrap()
        }
    };
    for path in [
        format!("/api/files/{image}"),
        format!("/api/files/{image}/thumbnail"),
    ] {
        let response = file(path.clone()).await;
        assert_eq!(response.status(), 200, "{path}");
        let policy = header(&response, "content-security-policy").unwrap();
        assert_eq!(policy, chat_server::http::headers::FILE_POLICY, "{path}");
        assert_eq!(directive(&policy, "sandbox").as_deref(), Some("sandbox"));
        assert_common_headers(&response);
    }
    // Chromium's viewer shows no sandboxed PDF; it still may load and run nothing.
    let response = file(format!("/api/files/{pdf}")).await;
    assert_eq!(response.status(), 200);
    assert_eq!(
        header(&response, "content-type").as_deref(),
        Some("application/pdf")
    );
    let policy = header(&response, "content-security-policy").unwrap();
    assert_eq!(policy, chat_server::http::headers::PDF_POLICY);
    assert_eq!(
        directive(&policy, "default-src").as_deref(),
        Some("default-src 'none'")
    );
    assert_common_headers(&response);

    // A profile picture under /uploads is a user's file too.
    let avatars = app.data_dir.path().join("uploads/avatars");
    std::fs::write(avatars.join("ann.png"), png()).unwrap();
    let response = get(&app, "/uploads/avatars/ann.png").await;
    assert_eq!(response.status(), 200);
    assert_eq!(
        header(&response, "content-security-policy").as_deref(),
        Some(chat_server::http::headers::FILE_POLICY)
    );
    assert_common_headers(&response);
    let missing = get(&app, "/uploads/avatars/nobody.png").await;
    assert_eq!(missing.status(), 404);
    assert_eq!(
        header(&missing, "content-security-policy").as_deref(),
        Some(chat_server::http::headers::FILE_POLICY)
    );
}
