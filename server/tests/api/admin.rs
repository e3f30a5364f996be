//! The operator console's gate and its audit log: who may call `/api/admin`, and what the
//! command line's role changes leave in the log.

use chat_contract::states::UserRole;
use chat_server::operator::set_role;
use serde_json::json;

use crate::helpers::{assert_error, assert_ok, spawn_app};

#[actix_web::test]
async fn only_an_admin_reaches_the_console_and_a_revoked_one_is_refused_at_once() {
    let app = spawn_app().await;
    let ann = app.register("Ann", "ann@example.com", "secret1").await;
    let bob = app.register("Bob", "bob@example.com", "secret1").await;

    // No token: 401. A user: 403 forbidden, in the user's language.
    let anonymous = app.client.get(app.url("/api/admin/audit")).send().await.unwrap();
    assert_error(anonymous, 401, "unauthorized").await;
    let refused = assert_error(
        app.get_auth("/api/admin/audit", &bob.token).await,
        403,
        "forbidden",
    )
    .await;
    assert_eq!(refused["message"], json!("You do not have permission to do this"));
    assert_ok(
        app.put_auth("/api/settings", &bob.token, json!({"language": "hu-HU"}))
            .await,
    )
    .await;
    let refused = assert_error(
        app.get_auth("/api/admin/audit", &bob.token).await,
        403,
        "forbidden",
    )
    .await;
    assert_eq!(refused["message"], json!("Ehhez nincs jogosultsága"));

    app.grant_admin("ann@example.com").await;
    let me = assert_ok(app.get_auth("/api/auth/profile", &ann.token).await).await;
    assert_eq!(me["role"], json!("admin"), "{me}");
    let bob_me = assert_ok(app.get_auth("/api/auth/profile", &bob.token).await).await;
    assert_eq!(bob_me["role"], json!("user"), "{bob_me}");
    assert_ok(app.get_auth("/api/admin/audit", &ann.token).await).await;

    // The same token, the very next call: the role is read on every call.
    let summary = set_role(&app.state.settings, "ann@example.com", UserRole::User)
        .await
        .unwrap();
    assert_eq!(summary, "ann@example.com is now user");
    assert_error(
        app.get_auth("/api/admin/audit", &ann.token).await,
        403,
        "forbidden",
    )
    .await;
    // Ann is a user like any other again: her own calls work.
    assert_ok(app.get_auth("/api/auth/profile", &ann.token).await).await;
}

#[actix_web::test]
async fn role_changes_from_the_command_line_are_logged_once_and_outlive_the_account() {
    let app = spawn_app().await;
    let root = app.register("Root", "root@example.com", "secret1").await;
    let ann = app.register("Ann", "ann@example.com", "secret1").await;
    app.grant_admin("root@example.com").await;
    app.grant_admin("ann@example.com").await;
    // Granting again changes nothing, and logs nothing.
    let again = set_role(&app.state.settings, "ann@example.com", UserRole::Admin)
        .await
        .unwrap();
    assert_eq!(again, "ann@example.com was already admin; nothing changed");
    set_role(&app.state.settings, "ann@example.com", UserRole::User)
        .await
        .unwrap();
    let unknown = set_role(&app.state.settings, "nobody@example.com", UserRole::Admin).await;
    assert!(unknown
        .unwrap_err()
        .to_string()
        .contains("no user with e-mail nobody@example.com"));

    let log = assert_ok(
        app.get_auth(&format!("/api/admin/audit?userId={}", ann.id), &root.token)
            .await,
    )
    .await;
    let rows = log["data"].as_array().unwrap();
    let actions: Vec<&str> = rows.iter().map(|r| r["action"].as_str().unwrap()).collect();
    // Newest first.
    assert_eq!(actions, ["admin.revoked", "admin.granted"], "{log}");
    assert_eq!(rows[0]["actor"], json!("command line"));
    assert_eq!(rows[0]["actorId"], json!(null));
    assert_eq!(rows[0]["target"], json!("ann@example.com"));
    assert_eq!(rows[0]["before"], json!({"role": "admin"}));
    assert_eq!(rows[0]["after"], json!({"role": "user"}));
    assert_eq!(log["nextCursor"], json!(null));

    // Ann deletes her account: her rows stay, detached, with her e-mail then.
    assert_ok(app.delete_auth("/api/auth/profile", &ann.token).await).await;
    let all = assert_ok(app.get_auth("/api/admin/audit", &root.token).await).await;
    let rows = all["data"].as_array().unwrap();
    assert_eq!(rows.len(), 3, "{all}");
    let ann_rows: Vec<_> = rows
        .iter()
        .filter(|r| r["target"] == json!("ann@example.com"))
        .collect();
    assert_eq!(ann_rows.len(), 2);
    assert!(ann_rows.iter().all(|r| r["targetUserId"] == json!(null)), "{all}");
    // No route changes or deletes a row.
    for method in [
        reqwest::Method::DELETE,
        reqwest::Method::PUT,
        reqwest::Method::PATCH,
    ] {
        let id = rows[0]["_id"].as_str().unwrap();
        let response = app
            .client
            .request(method.clone(), app.url(&format!("/api/admin/audit/{id}")))
            .bearer_auth(&root.token)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 404, "{method}");
    }
}
