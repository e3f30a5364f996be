use serde_json::json;

use crate::helpers::{assert_error, assert_ok, spawn_app, spawn_app_with};

#[actix_web::test]
async fn health_reports_the_backends_in_use() {
    let app = spawn_app().await;
    let body = assert_ok(app.client.get(app.url("/api/health")).send().await.unwrap()).await;
    assert_eq!(body["status"], json!("ok"));
    let expected_db = if std::env::var("TEST_DATABASE_URL").is_ok() {
        "postgres"
    } else {
        "sqlite"
    };
    assert_eq!(body["database"], json!(expected_db));
    let expected_redis = if std::env::var("TEST_REDIS_URL").is_ok() {
        "ok"
    } else {
        "none"
    };
    assert_eq!(body["redis"], json!(expected_redis));
}

#[actix_web::test]
async fn health_is_503_when_the_database_is_unreachable() {
    let app = spawn_app().await;
    app.state.db.close().await;
    let response = app.client.get(app.url("/api/health")).send().await.unwrap();
    let body = assert_error(response, 503, "service_unavailable").await;
    assert_eq!(body["status"], json!("error"));
}

#[actix_web::test]
async fn unknown_api_paths_are_json_404s_in_the_callers_language() {
    let app = spawn_app().await;
    let response = app.client.get(app.url("/api/nothing-here")).send().await.unwrap();
    let body = assert_error(response, 404, "not_found").await;
    assert_eq!(body["message"], json!("Not found"));
    let response = app
        .client
        .get(app.url("/api/nothing-here"))
        .header("Accept-Language", "hu-HU,hu;q=0.9")
        .send()
        .await
        .unwrap();
    let body = assert_error(response, 404, "not_found").await;
    assert_eq!(body["message"], json!("Nem található"));
}

#[actix_web::test]
async fn malformed_json_is_a_validation_error() {
    let app = spawn_app().await;
    let response = app
        .client
        .post(app.url("/api/auth/login"))
        .header("Content-Type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    let body = assert_error(response, 400, "validation_error").await;
    assert_eq!(
        body["message"],
        json!("Please fill in all required fields correctly")
    );
}

#[actix_web::test]
async fn client_routes_get_the_web_client_and_files_are_served_as_built() {
    let web = tempfile::tempdir().unwrap();
    std::fs::write(web.path().join("index.html"), "<p>the client</p>").unwrap();
    std::fs::create_dir(web.path().join("assets")).unwrap();
    std::fs::write(web.path().join("assets/app.js"), "console.log(1)").unwrap();
    let web_dir = web.path().to_owned();
    let app = spawn_app_with(|s| s.server.web_dir = web_dir).await;
    for path in ["/", "/chat/some-id", "/settings"] {
        let response = app.client.get(app.url(path)).send().await.unwrap();
        assert_eq!(response.status(), 200, "{path}");
        assert!(response.text().await.unwrap().contains("the client"), "{path}");
    }
    let js = app.client.get(app.url("/assets/app.js")).send().await.unwrap();
    assert_eq!(js.text().await.unwrap(), "console.log(1)");
    // API paths never fall back to the client, however deep or with whatever method.
    for path in ["/api/unknown", "/api/auth/unknown", "/api/settings/unknown"] {
        let response = app.client.get(app.url(path)).send().await.unwrap();
        assert_error(response, 404, "not_found").await;
    }
    let response = app.client.get(app.url("/api/auth/login")).send().await.unwrap();
    assert_error(response, 404, "not_found").await;
}

#[actix_web::test]
async fn without_a_client_unknown_api_paths_are_still_json_404s() {
    let app = spawn_app().await;
    for path in ["/api/auth/unknown", "/api/settings/x/y", "/api/auth/login"] {
        let response = app.client.get(app.url(path)).send().await.unwrap();
        assert_error(response, 404, "not_found").await;
    }
}

#[actix_web::test]
async fn an_oversized_body_is_413() {
    let app = spawn_app().await;
    let huge = "x".repeat(100 * 1024);
    let response = app
        .post("/api/auth/login", json!({"email": huge, "password": "secret1"}))
        .await;
    assert_error(response, 413, "payload_too_large").await;
}

#[actix_web::test]
async fn a_bad_token_is_401_whatever_the_body() {
    let app = spawn_app().await;
    let response = app
        .client
        .put(app.url("/api/settings"))
        .bearer_auth("garbage")
        .header("Content-Type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_error(response, 401, "unauthorized").await;
}

#[actix_web::test]
async fn an_unsupported_query_language_does_not_override_the_browser_language() {
    let app = spawn_app().await;
    let response = app
        .client
        .get(app.url("/api/nothing?lang=de"))
        .header("Accept-Language", "hu")
        .send()
        .await
        .unwrap();
    assert_eq!(
        assert_error(response, 404, "not_found").await["message"],
        json!("Nem található")
    );
    let response = app
        .client
        .get(app.url("/api/nothing?lang=hu-HU"))
        .send()
        .await
        .unwrap();
    assert_eq!(
        assert_error(response, 404, "not_found").await["message"],
        json!("Nem található")
    );
}

#[actix_web::test]
async fn without_a_built_client_a_placeholder_page_answers() {
    let app = spawn_app().await;
    let response = app.client.get(app.url("/chat")).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert!(response.text().await.unwrap().contains("server is running"));
}
