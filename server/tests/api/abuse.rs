//! The realtime abuse limits: free answers by cancelling, parallel answers, websocket
//! floods, oversized client ids, tokens that stop working on open sockets, and tabs
//! that stop reading.

use std::net::IpAddr;
use std::time::Duration;

use serde_json::{json, Value};

use crate::chat::{send, send_with_model, sessions_of, stub_app_with};
use crate::helpers::{assert_error, assert_ok, spawn_app_with, TestApp};
use crate::ws::WsClient;

const LOCALHOST: IpAddr = IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);

/// A chat server with a slow demo model (answers stream for seconds) and `configure`.
async fn limited_app(configure: impl FnOnce(&mut chat_server::config::Settings)) -> TestApp {
    spawn_app_with(move |s| {
        s.model.demo_tokens_per_sec = 20;
        s.model.demo_reply_tokens = 400;
        s.chat.batch_ms = 10;
        configure(s);
    })
    .await
}

async fn responses_used(app: &TestApp, token: &str) -> Value {
    let usage = assert_ok(app.get_auth("/api/usage/limits", token).await).await;
    usage["limitInfo"]["services"]["responses"]["daily"]["used"].clone()
}

async fn conversations(app: &TestApp, token: &str) -> Value {
    assert_ok(app.get_auth("/api/conversations", token).await).await["data"].clone()
}

/// Waits (up to 15 s) until `done` holds.
async fn eventually(mut done: impl AsyncFnMut() -> bool) -> bool {
    for _ in 0..300 {
        if done().await {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

#[actix_web::test]
async fn a_user_may_have_only_so_many_answers_streaming_at_once() {
    let app = limited_app(|s| s.chat.max_parallel_answers = 2).await;
    let ann = app.register_ann().await;
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;
    let mut conversations_started = Vec::new();
    for id in ["c1", "c2"] {
        tab.send(send(id, None, "Write a long essay")).await;
        let created = tab.until("conversation.created").await;
        conversations_started.push(created.last().unwrap()["conversation"]["_id"].clone());
        tab.until("usage.updated").await;
    }
    tab.send(send("c3", None, "And one more")).await;
    let error = tab.until("error").await.pop().unwrap();
    assert_eq!(error["code"], json!("too_many_parallel_answers"), "{error}");
    assert_eq!(error["clientId"], json!("c3"));
    assert_eq!(
        error["message"],
        json!("2 answers are already being written. Wait for one to finish.")
    );
    // The refused send stored and counted nothing.
    assert_eq!(conversations(&app, &ann.token).await.as_array().unwrap().len(), 2);
    assert_eq!(responses_used(&app, &ann.token).await, json!(2));

    // An answer that ends frees its slot.
    tab.send(json!({"type": "chat.cancel", "conversationId": conversations_started[0]}))
        .await;
    tab.until("message.completed").await;
    tab.send(send("c4", None, "Now there is room")).await;
    let frames = tab.until("message.created").await;
    assert!(frames.iter().all(|f| f["type"] != "error"), "{frames:?}");
}

#[actix_web::test]
async fn a_socket_sending_too_many_frames_a_second_is_closed() {
    let app = limited_app(|s| s.chat.max_frames_per_sec = 5).await;
    let ann = app.register_ann().await;
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;
    let pings = vec![json!({"type": "ping"}); 20];
    tab.send_all(&pings).await;
    let close = tab.close_frame().await.expect("a close frame");
    assert_eq!(u16::from(close.code), 1008);
    assert_eq!(close.reason.as_str(), "too many frames");
    // A tab that keeps to the limit is not affected.
    let (mut calm, _) = WsClient::ready(&app, &ann.token).await;
    for _ in 0..8 {
        calm.send(json!({"type": "ping"})).await;
        calm.expect("pong").await;
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

#[actix_web::test]
async fn a_socket_with_too_many_requests_in_flight_is_closed() {
    let app = limited_app(|s| {
        s.chat.max_requests_in_flight = 2;
        s.chat.max_frames_per_sec = 1000;
    })
    .await;
    let ann = app.register_ann().await;
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;
    let open = json!({"type": "conversation.open", "conversationId": "no-such-conversation"});
    tab.send_all(&vec![open; 30]).await;
    let close = tab.close_frame().await.expect("a close frame");
    assert_eq!(u16::from(close.code), 1008);
    assert_eq!(close.reason.as_str(), "too many requests in flight");
}

#[actix_web::test]
async fn a_user_may_open_only_so_many_tabs() {
    let app = limited_app(|s| s.chat.max_tabs_per_user = 2).await;
    let ann = app.register_ann().await;
    let (_first, _) = WsClient::ready(&app, &ann.token).await;
    let (mut second, _) = WsClient::ready(&app, &ann.token).await;
    let mut third = WsClient::connect(&app, Some(&ann.token)).await;
    let error = third.expect("error").await;
    assert_eq!(error["code"], json!("too_many_tabs"));
    let close = third.close_frame().await.expect("a close frame");
    assert_eq!(u16::from(close.code), 1008);
    assert_eq!(close.reason.as_str(), "too many tabs");
    assert_eq!(sessions_of(&app, &ann.id).await, 2);
    // Another user is not held back by Ann's tabs, and a closed tab frees its place.
    let bob = app.register("Bob", "bob@example.com", "secret1").await;
    WsClient::ready(&app, &bob.token).await;
    second.send(json!({"type": "ping"})).await;
    second.expect("pong").await;
    drop(second);
    assert!(eventually(async || sessions_of(&app, &ann.id).await == 1).await);
    WsClient::ready(&app, &ann.token).await;
}

#[actix_web::test]
async fn an_address_may_hold_only_so_many_sockets() {
    let app = limited_app(|s| s.chat.max_sockets_per_address = 2).await;
    let first = WsClient::connect(&app, None).await;
    let _second = WsClient::connect(&app, None).await;
    let upgrade = app
        .client
        .get(app.url("/api/ws"))
        .header("Connection", "Upgrade")
        .header("Upgrade", "websocket")
        .header("Sec-WebSocket-Version", "13")
        .header("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
        .send()
        .await
        .unwrap();
    assert!(upgrade.headers().contains_key("retry-after"));
    assert_error(upgrade, 429, "too_many_sockets").await;
    drop(first);
    let sockets = &app.state.realtime.sockets;
    assert!(eventually(async || sockets.count(LOCALHOST) == 1).await);
    WsClient::connect(&app, None).await;
}

#[actix_web::test]
async fn a_client_id_longer_than_64_characters_is_refused_and_nothing_is_stored() {
    let app = limited_app(|_| {}).await;
    let ann = app.register_ann().await;
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;
    let (mut other_tab, _) = WsClient::ready(&app, &ann.token).await;
    tab.send(send(&"x".repeat(100_000), None, "Hello")).await;
    let error = tab.expect("error").await;
    assert_eq!(error["code"], json!("client_id_too_long"));
    assert_eq!(error["field"], json!("clientId"));
    assert_eq!(error.get("clientId"), None, "the id is not echoed");
    tab.send(send(&"x".repeat(65), None, "Hello")).await;
    assert_eq!(tab.expect("error").await["code"], json!("client_id_too_long"));
    assert_eq!(conversations(&app, &ann.token).await, json!([]));
    assert_eq!(responses_used(&app, &ann.token).await, json!(0));
    // 64 characters are fine, and only then does the other tab hear of a send.
    let longest = "y".repeat(64);
    tab.send(send(&longest, None, "Hello")).await;
    let created = other_tab.expect("conversation.created").await;
    assert_eq!(created["clientId"], json!(longest));
}

#[actix_web::test]
async fn an_empty_client_id_is_refused_in_the_users_language_and_nothing_is_stored() {
    let app = limited_app(|_| {}).await;
    let ann = app.register_ann().await;
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;
    for blank in ["", "   "] {
        tab.send(send(blank, None, "Hello")).await;
        let error = tab.expect("error").await;
        assert_eq!(
            (&error["code"], &error["field"]),
            (&json!("client_id_required"), &json!("clientId")),
            "{error}"
        );
        assert_eq!(error.get("clientId"), None);
        assert_eq!(
            error["message"],
            json!("clientId is required: a non-empty id chosen by the tab")
        );
    }
    let changed = app
        .put_auth("/api/settings", &ann.token, json!({"language": "hu-HU"}))
        .await;
    assert!(changed.status().is_success());
    let (mut hungarian, _) = WsClient::ready(&app, &ann.token).await;
    hungarian.send(send("", None, "Szia")).await;
    assert_eq!(
        hungarian.expect("error").await["message"],
        json!("A clientId megadása kötelező: a lap által választott, nem üres azonosító")
    );
    assert_eq!(conversations(&app, &ann.token).await, json!([]));
    assert_eq!(responses_used(&app, &ann.token).await, json!(0));
}

#[actix_web::test]
async fn a_token_revoked_without_an_event_closes_the_socket_on_its_next_send() {
    let app = limited_app(|s| s.chat.token_recheck_secs = 3600).await;
    let ann = app.register_ann().await;
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;
    // As if the password changed on an instance whose revoke event was lost.
    let now = app.clock_now();
    app.state
        .db
        .set_password(&ann.id, "not-a-hash", now)
        .await
        .unwrap();
    tab.send(send("c1", None, "Still here?")).await;
    let revoked = tab.expect("session.revoked").await;
    assert_eq!(revoked["reason"], json!("token_invalid"));
    let close = tab.close_frame().await.expect("a close frame");
    assert_eq!(u16::from(close.code), 1008);
    assert_eq!(close.reason.as_str(), "session revoked");
    let stored = app
        .state
        .db
        .conversations(&ann.id, None, false, None, 10)
        .await
        .unwrap();
    assert!(stored.is_empty(), "the send stored nothing");
}

#[actix_web::test]
async fn an_expired_token_closes_an_open_socket_at_the_periodic_check() {
    let app = limited_app(|s| s.chat.token_recheck_secs = 1).await;
    let ann = app.register_ann().await;
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;
    // Still valid: a check passes and the tab stays.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    tab.send(json!({"type": "ping"})).await;
    tab.expect("pong").await;
    // Registration tokens live 30 days.
    app.advance_minutes(31 * 24 * 60);
    let revoked = tab.expect("session.revoked").await;
    assert_eq!(revoked["reason"], json!("token_invalid"));
    let close = tab.close_frame().await.expect("a close frame");
    assert_eq!(u16::from(close.code), 1008);
    assert!(eventually(async || sessions_of(&app, &ann.id).await == 0).await);
}

#[actix_web::test]
async fn a_tab_that_stops_reading_is_closed_and_freed_while_other_tabs_keep_streaming() {
    // 12 MB of answer, more than the kernel buffers between server and tab can hold; the
    // queue is large enough that only the stuck writes can end the slow tab.
    let (app, _stub) = stub_app_with(10, |s| {
        s.chat.session_queue = 100_000;
        s.chat.write_timeout_secs = 1;
    })
    .await;
    let ann = app.register_ann().await;
    let (mut reading, _) = WsClient::ready(&app, &ann.token).await;
    let mut slow = WsClient::connect_slow(&app, &ann.token).await;
    let sockets = &app.state.realtime.sockets;
    assert!(eventually(async || sessions_of(&app, &ann.id).await == 2).await);
    assert_eq!(sockets.count(LOCALHOST), 2);
    reading
        .send(send_with_model("c1", "Flood me", "stub-flood"))
        .await;
    let frames = reading.until("message.completed").await;
    assert_eq!(frames.last().unwrap()["finishReason"], json!("stop"));
    // The slow tab's session is gone, and so is its connection with all it buffered.
    assert!(eventually(async || sessions_of(&app, &ann.id).await == 1).await);
    assert!(
        eventually(async || sockets.count(LOCALHOST) == 1).await,
        "the slow tab's connection is still open"
    );
    slow.close_frame().await;
    // The reading tab goes on as before.
    reading.send(send("c2", None, "Still there?")).await;
    let frames = reading.until("message.completed").await;
    assert_eq!(frames.last().unwrap()["finishReason"], json!("stop"));
    assert_ok(app.client.get(app.url("/api/health")).send().await.unwrap()).await;
}
