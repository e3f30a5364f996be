//! The realtime chat over real websockets: streaming to every tab, resume, cancel,
//! titles, quotas, plan rules, model errors, slow tabs and two instances.

use std::sync::Arc;
use std::time::Duration;

use chat_actors::hub::SessionCount;
use futures_util::StreamExt;
use serde_json::{json, Value};

use crate::helpers::{assert_error, assert_ok, spawn_app_with, TestApp};
use crate::model_stub::{self, STUB_WORDS};
use crate::ws::{joined_deltas, WsClient};

/// A chat server whose demo model answers `tokens` tokens at `rate` a second.
pub(crate) async fn chat_app(rate: u32, tokens: usize) -> TestApp {
    spawn_app_with(move |s| {
        s.model.demo_tokens_per_sec = rate;
        s.model.demo_reply_tokens = tokens;
        s.chat.batch_ms = 10;
        s.chat.auth_timeout_secs = 1;
    })
    .await
}

/// A chat server whose model is the local OpenAI-compatible stub.
async fn stub_app(timeout_secs: u64) -> (TestApp, model_stub::ModelStub) {
    stub_app_with(timeout_secs, |_| {}).await
}

/// [`stub_app`], with more settings changed by `configure`.
pub(crate) async fn stub_app_with(
    timeout_secs: u64,
    configure: impl FnOnce(&mut chat_server::config::Settings),
) -> (TestApp, model_stub::ModelStub) {
    let (base_url, stub) = model_stub::start();
    let config = tempfile::tempdir().unwrap().keep();
    let plans = include_str!("../../../config/plans.toml")
        .replace(
            r#"chat_models = ["gpt-4o-mini"]"#,
            r#"chat_models = ["stub", "stub-error", "stub-stall", "stub-flood"]"#,
        )
        .replace(
            r#"models = { baseChatModel = "gpt-4o-mini" }"#,
            r#"models = { baseChatModel = "stub" }"#,
        );
    std::fs::write(config.join("plans.toml"), plans).unwrap();
    let app = spawn_app_with(move |s| {
        s.config_dir = config;
        s.model.openai_api_key = secrecy::SecretString::from("test-key");
        s.model.openai_base_url = base_url;
        s.model.timeout_secs = timeout_secs;
        s.chat.batch_ms = 10;
        s.chat.session_queue = 4;
        configure(s);
    })
    .await;
    (app, stub)
}

pub(crate) fn send(client_id: &str, conversation_id: Option<&Value>, content: &str) -> Value {
    json!({"type": "chat.send", "clientId": client_id, "conversationId": conversation_id, "content": content})
}

/// A `chat.send` in a new conversation that asks for a given model.
pub(crate) fn send_with_model(client_id: &str, content: &str, model: &str) -> Value {
    let mut frame = send(client_id, None, content);
    frame["model"] = json!(model);
    frame
}

fn of_type<'a>(frames: &'a [Value], kind: &str) -> Vec<&'a Value> {
    frames.iter().filter(|f| f["type"] == kind).collect()
}

pub(crate) async fn sessions_of(app: &TestApp, user_id: &str) -> usize {
    app.state
        .realtime
        .hubs
        .of(user_id)
        .send(SessionCount {
            user: user_id.to_owned(),
        })
        .await
        .unwrap()
}

#[actix_web::test]
async fn an_answer_streams_to_every_tab_of_the_user_and_to_no_one_else() {
    let app = chat_app(2000, 40).await;
    let ann = app.register_ann().await;
    let bob = app.register("Bob", "bob@example.com", "secret1").await;
    let (mut tab1, ready) = WsClient::ready(&app, &ann.token).await;
    assert_eq!(ready["user"]["_id"], json!(ann.id));
    assert_eq!(
        ready["usage"]["limitInfo"]["services"]["responses"]["daily"]["limit"],
        json!(50)
    );
    let (mut tab2, _) = WsClient::ready(&app, &ann.token).await;
    let (mut bobs_tab, _) = WsClient::ready(&app, &bob.token).await;

    tab1.send(send("c1", None, "Hello there, how are you?")).await;
    let frames1 = tab1.until("message.completed").await;
    let frames2 = tab2.until("message.completed").await;
    let kinds: Vec<&str> = frames1
        .iter()
        .map(|f| f["type"].as_str().unwrap())
        .filter(|k| *k != "message.delta")
        .collect();
    assert_eq!(
        kinds,
        [
            "conversation.created",
            "message.created",
            "message.created",
            "usage.updated",
            "message.completed"
        ]
    );
    assert_eq!(frames1[0]["clientId"], json!("c1"));
    let created = of_type(&frames1, "message.created");
    assert_eq!(
        (
            created[0]["message"]["role"].clone(),
            created[0]["message"]["content"].clone()
        ),
        (json!("user"), json!("Hello there, how are you?"))
    );
    assert_eq!(created[1]["message"]["status"], json!("streaming"));
    let answer_id = created[1]["message"]["_id"].clone();
    let completed = frames1.last().unwrap();
    assert_eq!(completed["finishReason"], json!("stop"));
    assert_eq!(completed["message"]["status"], json!("complete"));
    let text = joined_deltas(&frames1, &answer_id, 0);
    assert!(
        text.starts_with("You said: *Hello there, how are you?*"),
        "{text}"
    );
    assert_eq!(completed["message"]["content"], json!(text));
    // The other tab saw the very same frames.
    assert_eq!(frames1, frames2);
    assert_eq!(
        of_type(&frames1, "usage.updated")[0]["limitInfo"]["services"]["responses"]["daily"]["used"],
        json!(1)
    );

    // The first exchange names the conversation.
    let titled = tab1.expect("conversation.updated").await;
    assert_eq!(
        titled["conversation"]["title"],
        json!("Hello there, how are you?")
    );
    tab2.expect("conversation.updated").await;

    // Bob saw nothing: his next frame answers his ping.
    bobs_tab.send(json!({"type": "ping"})).await;
    bobs_tab.expect("pong").await;

    let conversation_id = frames1[0]["conversation"]["_id"].as_str().unwrap();
    let stored = assert_ok(
        app.get_auth(&format!("/api/conversations/{conversation_id}"), &ann.token)
            .await,
    )
    .await;
    assert_eq!(stored["data"]["title"], json!("Hello there, how are you?"));
    let messages = stored["data"]["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2);
    assert_eq!(messages[1]["content"], json!(text));
    assert_eq!(messages[1]["status"], json!("complete"));
}

#[actix_web::test]
async fn a_follow_up_goes_to_the_same_conversation_with_its_history() {
    let app = chat_app(2000, 10).await;
    let ann = app.register_ann().await;
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;
    tab.send(send("c1", None, "First question")).await;
    let frames = tab.until("message.completed").await;
    let conversation = frames[0]["conversation"]["_id"].clone();
    tab.until("conversation.updated").await;
    tab.send(send("c2", Some(&conversation), "Second question")).await;
    let frames = tab.until("message.completed").await;
    assert!(of_type(&frames, "conversation.created").is_empty());
    assert_eq!(frames.last().unwrap()["conversationId"], conversation);
    let stored = assert_ok(
        app.get_auth(
            &format!("/api/conversations/{}", conversation.as_str().unwrap()),
            &ann.token,
        )
        .await,
    )
    .await;
    assert_eq!(stored["data"]["messages"].as_array().unwrap().len(), 4);
}

#[actix_web::test]
async fn a_socket_authenticates_by_header_or_first_frame_and_bad_tokens_are_closed() {
    let app = chat_app(2000, 10).await;
    let ann = app.register_ann().await;
    let mut by_frame = WsClient::connect(&app, None).await;
    by_frame.send(json!({"type": "auth", "token": ann.token})).await;
    assert_eq!(
        by_frame.expect("ready").await["user"]["email"],
        json!("ann@example.com")
    );

    let mut bad = WsClient::connect(&app, Some("not-a-token")).await;
    let close = bad.close_frame().await.expect("a close frame");
    assert_eq!(u16::from(close.code), 1008);
    assert!(close.reason.contains("unauthorized"), "{}", close.reason);

    let mut silent = WsClient::connect(&app, None).await;
    let close = silent.close_frame().await.expect("a close frame");
    assert_eq!(u16::from(close.code), 1008);
    assert!(close.reason.contains("no auth frame"), "{}", close.reason);

    let mut early = WsClient::connect(&app, None).await;
    early.send(json!({"type": "ping"})).await;
    assert_eq!(u16::from(early.close_frame().await.unwrap().code), 1008);
}

#[actix_web::test]
async fn a_password_change_ends_every_tab_and_the_old_token_no_longer_connects() {
    let app = chat_app(2000, 10).await;
    let ann = app.register_ann().await;
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;
    let body = json!({"currentPassword": "secret1", "newPassword": "secret2"});
    assert_ok(app.put_auth("/api/auth/password", &ann.token, body).await).await;
    let revoked = tab.expect("session.revoked").await;
    assert_eq!(revoked["reason"], json!("password_changed"));
    let close = tab.close_frame().await.expect("a close frame");
    assert_eq!(close.reason.as_str(), "session revoked");
    let mut again = WsClient::connect(&app, Some(&ann.token)).await;
    assert_eq!(u16::from(again.close_frame().await.unwrap().code), 1008);
}

#[actix_web::test]
async fn a_tab_joining_while_an_answer_streams_gets_ready_before_any_of_it() {
    // A delta about every millisecond while tabs join one after another: each tab's
    // first frame is still `ready` (`WsClient::ready` checks), never a delta.
    let app = spawn_app_with(|s| {
        s.model.demo_tokens_per_sec = 4000;
        s.model.demo_reply_tokens = 8000;
        s.chat.batch_ms = 1;
    })
    .await;
    let ann = app.register_ann().await;
    let (mut tab1, _) = WsClient::ready(&app, &ann.token).await;
    tab1.send(send("c1", None, "Tell me a long story")).await;
    tab1.until("message.delta").await;
    for _ in 0..15 {
        let (mut tab, _) = WsClient::ready(&app, &ann.token).await;
        tab.until("message.delta").await;
    }
    let frames = tab1.until("message.completed").await;
    assert_eq!(frames.last().unwrap()["finishReason"], json!("stop"));
}

#[actix_web::test]
async fn a_tab_opening_a_conversation_mid_stream_gets_a_snapshot_then_the_rest() {
    let app = chat_app(100, 60).await;
    let ann = app.register_ann().await;
    let (mut tab1, _) = WsClient::ready(&app, &ann.token).await;
    tab1.send(send("c1", None, "Tell me a story")).await;
    let mut early = Vec::new();
    loop {
        let frame = tab1.next().await.unwrap();
        let seq = frame["seq"].as_u64();
        early.push(frame);
        if seq.is_some_and(|s| s >= 3) {
            break;
        }
    }
    let conversation = early[0]["conversation"]["_id"].clone();
    let (mut tab2, _) = WsClient::ready(&app, &ann.token).await;
    tab2.send(json!({"type": "conversation.open", "conversationId": conversation}))
        .await;
    let frames = tab2.until("message.completed").await;
    let at = frames
        .iter()
        .position(|f| f["type"] == "message.snapshot")
        .expect("a snapshot");
    let snapshot = &frames[at];
    let seq = snapshot["seq"].as_u64().unwrap();
    assert!(seq >= 3);
    // Nothing before the snapshot is newer than it; everything after follows it at once.
    assert!(frames[..at]
        .iter()
        .all(|f| f["seq"].as_u64().is_none_or(|s| s <= seq)));
    let message_id = snapshot["messageId"].clone();
    let rest = joined_deltas(&frames[at + 1..], &message_id, seq);
    let completed = frames.last().unwrap();
    assert_eq!(
        completed["message"]["content"].as_str().unwrap(),
        format!("{}{rest}", snapshot["content"].as_str().unwrap())
    );
    // And the first tab's stream was whole too.
    early.extend(tab1.until("message.completed").await);
    assert_eq!(
        json!(joined_deltas(&early, &message_id, 0)),
        completed["message"]["content"]
    );
}

#[actix_web::test]
async fn opening_a_conversation_with_nothing_streaming_says_so() {
    let app = chat_app(2000, 5).await;
    let ann = app.register_ann().await;
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;
    tab.send(send("c1", None, "Hi")).await;
    let conversation = tab.until("message.completed").await[0]["conversation"]["_id"].clone();
    tab.until("conversation.updated").await;
    tab.send(json!({"type": "conversation.open", "conversationId": conversation}))
        .await;
    let opened = tab.expect("conversation.opened").await;
    assert_eq!(opened["conversationId"], conversation);
    assert_eq!(opened["streaming"], json!(false));
}

#[actix_web::test]
async fn cancelling_keeps_the_partial_answer_and_still_counts_it() {
    let app = chat_app(100, 200).await;
    let ann = app.register_ann().await;
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;
    tab.send(send("c1", None, "Write a long essay")).await;
    let before = tab.until("message.delta").await;
    let conversation = before[0]["conversation"]["_id"].clone();
    tab.send(json!({"type": "chat.cancel", "conversationId": conversation}))
        .await;
    let frames = tab.until("message.completed").await;
    let completed = frames.last().unwrap().clone();
    assert_eq!(completed["finishReason"], json!("cancelled"));
    assert_eq!(completed["message"]["status"], json!("cancelled"));
    let partial = completed["message"]["content"].as_str().unwrap().to_owned();
    assert!(!partial.is_empty());
    let all: Vec<Value> = before.into_iter().chain(frames).collect();
    let message_id = completed["message"]["_id"].clone();
    assert_eq!(joined_deltas(&all, &message_id, 0), partial);
    // The tab got text, so the answer counts: cancelling must not make answers free.
    let usage = assert_ok(app.get_auth("/api/usage/limits", &ann.token).await).await;
    assert_eq!(
        usage["limitInfo"]["services"]["responses"]["daily"]["used"],
        json!(1)
    );
    let stored = assert_ok(
        app.get_auth(
            &format!("/api/conversations/{}", conversation.as_str().unwrap()),
            &ann.token,
        )
        .await,
    )
    .await;
    assert_eq!(stored["data"]["messages"][1]["status"], json!("cancelled"));
    assert_eq!(stored["data"]["messages"][1]["content"], json!(partial));
}

#[actix_web::test]
async fn the_51st_message_of_the_day_is_refused_and_nothing_is_stored() {
    let app = chat_app(2000, 5).await;
    let ann = app.register_ann().await;
    for _ in 0..50 {
        app.state.quotas.consume_response(&ann.id).await.unwrap();
    }
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;
    tab.send(send("c51", None, "One more")).await;
    let error = tab.expect("error").await;
    assert_eq!(error["clientId"], json!("c51"));
    assert_eq!(error["code"], json!("limit_reached"));
    assert_eq!(
        error["message"],
        json!("You have reached your daily message limit. Upgrade your plan to continue.")
    );
    let list = assert_ok(app.get_auth("/api/conversations", &ann.token).await).await;
    assert_eq!(list["data"], json!([]));
}

#[actix_web::test]
async fn models_and_web_search_outside_the_plan_are_refused_in_the_users_language() {
    let app = chat_app(2000, 5).await;
    let ann = app.register_ann().await;
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;
    let frame = send_with_model("m1", "Hi", "gpt-4.1");
    tab.send(frame).await;
    let error = tab.expect("error").await;
    assert_eq!(
        (error["code"].clone(), error["message"].clone()),
        (
            json!("model_not_allowed"),
            json!("This model is not available on your plan")
        )
    );
    let mut frame = send("w1", None, "Search the web");
    frame["webSearch"] = json!(true);
    tab.send(frame.clone()).await;
    let error = tab.expect("error").await;
    assert_eq!(
        (error["code"].clone(), error["message"].clone()),
        (
            json!("premium_required"),
            json!("Web search is a premium feature")
        )
    );

    assert_ok(
        app.put_auth("/api/settings", &ann.token, json!({"language": "hu-HU"}))
            .await,
    )
    .await;
    tab.expect("settings.updated").await;
    let (mut hu_tab, _) = WsClient::ready(&app, &ann.token).await;
    hu_tab.send(frame).await;
    assert_eq!(
        hu_tab.expect("error").await["message"],
        json!("A webes keresés prémium funkció")
    );
    for bad in [
        json!({"type": "chat.send", "clientId": "e", "content": "   "}),
        json!({"type": "chat.send", "clientId": "a", "content": "x", "attachments": [{}]}),
    ] {
        hu_tab.send(bad).await;
        hu_tab.expect("error").await;
    }
    hu_tab.send(json!({"type": "no.such.frame"})).await;
    assert_eq!(hu_tab.expect("error").await["code"], json!("invalid_frame"));
    // Nothing was counted or stored.
    let usage = assert_ok(app.get_auth("/api/usage/limits", &ann.token).await).await;
    assert_eq!(
        usage["limitInfo"]["services"]["responses"]["daily"]["used"],
        json!(0)
    );
    assert_eq!(
        assert_ok(app.get_auth("/api/conversations", &ann.token).await).await["data"],
        json!([])
    );
}

#[actix_web::test]
async fn a_plan_written_outside_this_instance_counts_from_the_next_send() {
    let app = chat_app(2000, 5).await;
    let ann = app.register_ann().await;
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;
    // On free (and now cached so): Plus's model is refused.
    tab.send(send_with_model("m1", "Hi", "gpt-4o")).await;
    assert_eq!(tab.expect("error").await["code"], json!("model_not_allowed"));
    // What support's `users set-plan` does: the database changes, no instance is told.
    app.set_plan(&ann.id, "plus").await;
    tab.send(send_with_model("m2", "Hi", "gpt-4o")).await;
    let frames = tab.until("message.completed").await;
    assert_eq!(
        of_type(&frames, "conversation.created")[0]["conversation"]["model"],
        json!("gpt-4o")
    );
    // And back to free the same way: the paid model is refused at once, nothing counted.
    let now = app.clock_now();
    app.state.db.set_free(&ann.id, now).await.unwrap();
    tab.send(send_with_model("m3", "Hi", "gpt-4o")).await;
    // (the first answer's title may come first)
    let refused = tab.until("error").await.pop().unwrap();
    assert_eq!(refused["code"], json!("model_not_allowed"));
    let usage = assert_ok(app.get_auth("/api/usage/limits", &ann.token).await).await;
    assert_eq!(
        usage["limitInfo"]["services"]["responses"]["daily"]["used"],
        json!(1)
    );
}

#[actix_web::test]
async fn another_users_conversation_is_not_found_over_rest_and_websocket() {
    let app = chat_app(2000, 5).await;
    let ann = app.register_ann().await;
    let bob = app.register("Bob", "bob@example.com", "secret1").await;
    let (mut anns_tab, _) = WsClient::ready(&app, &ann.token).await;
    anns_tab.send(send("c1", None, "Private")).await;
    let conversation = anns_tab.until("message.completed").await[0]["conversation"]["_id"].clone();
    let id = conversation.as_str().unwrap();
    let path = format!("/api/conversations/{id}");
    assert_error(app.get_auth(&path, &bob.token).await, 404, "not_found").await;
    let patch = app
        .client
        .patch(app.url(&path))
        .bearer_auth(&bob.token)
        .json(&json!({"title": "Mine"}))
        .send()
        .await
        .unwrap();
    assert_error(patch, 404, "not_found").await;
    assert_error(app.delete_auth(&path, &bob.token).await, 404, "not_found").await;

    let (mut bobs_tab, _) = WsClient::ready(&app, &bob.token).await;
    bobs_tab.send(send("b1", Some(&conversation), "Let me in")).await;
    let error = bobs_tab.expect("error").await;
    assert_eq!(
        (error["code"].clone(), error["clientId"].clone()),
        (json!("not_found"), json!("b1"))
    );
    for frame in [
        json!({"type": "conversation.open", "conversationId": id}),
        json!({"type": "chat.cancel", "conversationId": id}),
    ] {
        bobs_tab.send(frame).await;
        assert_eq!(bobs_tab.expect("error").await["code"], json!("not_found"));
    }
    let stored = assert_ok(app.get_auth(&path, &ann.token).await).await;
    assert_eq!(stored["data"]["messages"].as_array().unwrap().len(), 2);
}

#[actix_web::test]
async fn conversations_are_listed_newest_first_renamed_and_deleted() {
    let app = chat_app(2000, 5).await;
    let ann = app.register_ann().await;
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;
    let mut ids = Vec::new();
    for (i, text) in ["one", "two", "three"].iter().enumerate() {
        tab.send(send(&format!("c{i}"), None, text)).await;
        ids.push(tab.until("message.completed").await[0]["conversation"]["_id"].clone());
        tab.until("conversation.updated").await;
        app.clock.advance_ms(1000);
    }
    let first = assert_ok(app.get_auth("/api/conversations?limit=2", &ann.token).await).await;
    let page: Vec<Value> = first["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["_id"].clone())
        .collect();
    assert_eq!(page, [ids[2].clone(), ids[1].clone()]);
    let cursor = first["nextCursor"].as_str().unwrap();
    let second = assert_ok(
        app.get_auth(&format!("/api/conversations?limit=2&cursor={cursor}"), &ann.token)
            .await,
    )
    .await;
    let page: Vec<Value> = second["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["_id"].clone())
        .collect();
    assert_eq!(page, [ids[0].clone()]);
    assert_eq!(second["nextCursor"], json!(null));
    assert_error(
        app.get_auth("/api/conversations?cursor=garbage", &ann.token)
            .await,
        400,
        "validation_error",
    )
    .await;

    let path = format!("/api/conversations/{}", ids[0].as_str().unwrap());
    let rename = |title: Value| {
        app.client
            .patch(app.url(&path))
            .bearer_auth(&ann.token)
            .json(&json!({"title": title}))
            .send()
    };
    let error = assert_error(rename(json!("  ")).await.unwrap(), 400, "field_required").await;
    assert_eq!(error["message"], json!("Title is required"));
    let renamed = assert_ok(rename(json!("Numbers")).await.unwrap()).await;
    assert_eq!(renamed["data"]["title"], json!("Numbers"));
    assert_eq!(
        tab.expect("conversation.updated").await["conversation"]["title"],
        json!("Numbers")
    );
    assert_ok(app.delete_auth(&path, &ann.token).await).await;
    assert_eq!(tab.expect("conversation.deleted").await["conversationId"], ids[0]);
    assert_error(app.get_auth(&path, &ann.token).await, 404, "not_found").await;
}

#[actix_web::test]
async fn settings_and_subscription_changes_reach_every_tab() {
    let app = chat_app(2000, 5).await;
    let ann = app.register_paying("ann@example.com").await;
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;
    let body = json!({"aiPersonalization": {"enabled": true, "userName": "Annie"}});
    assert_ok(app.put_auth("/api/settings", &ann.token, body).await).await;
    let updated = tab.expect("settings.updated").await;
    assert_eq!(
        updated["settings"]["aiPersonalization"]["userName"],
        json!("Annie")
    );
    assert_eq!(updated["billingInfo"]["city"], json!("Budapest"));
    let started = assert_ok(
        app.put_auth(
            "/api/subscription/change",
            &ann.token,
            json!({"planType": "plus"}),
        )
        .await,
    )
    .await;
    let id = started["payment"]["_id"].as_str().unwrap();
    app.client
        .post(app.url(&format!("/api/payments/demo/{id}/pay")))
        .bearer_auth(&ann.token)
        .send()
        .await
        .unwrap();
    let changed = tab.expect("subscription.updated").await;
    assert_eq!(changed["subscription"]["data"]["planType"], json!("plus"));
    let usage = tab.expect("usage.updated").await;
    assert_eq!(
        usage["limitInfo"]["services"]["responses"]["daily"]["limit"],
        json!(1000)
    );
}

#[actix_web::test]
async fn an_openai_compatible_model_streams_through_with_the_personalised_prompt() {
    let (app, stub) = stub_app(10).await;
    let ann = app.register_ann().await;
    let body =
        json!({"aiPersonalization": {"enabled": true, "userName": "Annie", "userInfo": "I teach maths."}});
    assert_ok(app.put_auth("/api/settings", &ann.token, body).await).await;
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;
    tab.send(send("c1", None, "Hi model")).await;
    let frames = tab.until("message.completed").await;
    let completed = frames.last().unwrap();
    assert_eq!(completed["message"]["content"], json!(STUB_WORDS.concat()));
    assert_eq!(completed["message"]["model"], json!("stub"));
    assert_eq!(
        tab.until("conversation.updated").await.last().unwrap()["conversation"]["title"],
        json!("Stub title")
    );
    let requests = stub.requests.lock().unwrap().clone();
    let streamed = requests.iter().find(|r| r["stream"] == json!(true)).unwrap();
    let system = streamed["messages"][0]["content"].as_str().unwrap();
    assert!(
        system.contains("Address the user as Annie.") && system.contains("I teach maths."),
        "{system}"
    );
    assert_eq!(
        streamed["messages"].as_array().unwrap().last().unwrap()["content"],
        json!("Hi model")
    );
}

#[actix_web::test]
async fn an_upstream_error_reaches_the_tabs_gives_the_unit_back_and_the_server_stays_up() {
    let (app, _stub) = stub_app(10).await;
    let ann = app.register_ann().await;
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;
    let frame = send_with_model("e1", "Break please", "stub-error");
    tab.send(frame).await;
    let frames = tab.until("message.completed").await;
    assert_eq!(frames.last().unwrap()["finishReason"], json!("error"));
    let error = tab.expect("error").await;
    assert_eq!(error["code"], json!("model_error"));
    assert_eq!(
        error["message"],
        json!("The AI model is not available right now. Please try again later.")
    );
    let usage = tab.expect("usage.updated").await;
    assert_eq!(
        usage["limitInfo"]["services"]["responses"]["daily"]["used"],
        json!(0)
    );
    assert_ok(app.client.get(app.url("/api/health")).send().await.unwrap()).await;
    tab.send(send("e2", None, "Now answer")).await;
    let frames = tab.until("message.completed").await;
    assert_eq!(frames.last().unwrap()["finishReason"], json!("stop"));
}

#[actix_web::test]
async fn a_stalled_upstream_times_out_keeping_what_came() {
    let (app, _stub) = stub_app(1).await;
    let ann = app.register_ann().await;
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;
    let frame = send_with_model("s1", "Stall", "stub-stall");
    tab.send(frame).await;
    let frames = tab.until("message.completed").await;
    let completed = frames.last().unwrap();
    assert_eq!(completed["finishReason"], json!("error"));
    assert_eq!(completed["message"]["content"], json!(STUB_WORDS[0]));
    assert_eq!(tab.expect("error").await["code"], json!("model_error"));
}

#[actix_web::test]
async fn a_tab_that_cannot_keep_up_is_closed_instead_of_buffered() {
    // 12 MB of answer, more than the kernel buffers between server and tab can hold, in
    // deltas of 1 ms windows: many more frames than the queue of 4 holds, however fast the
    // flood arrives (in 10 ms windows a fast flood made a handful of megabyte deltas,
    // which the socket's buffers took without ever filling the queue).
    let (app, _stub) = stub_app_with(10, |s| s.chat.batch_ms = 1).await;
    let ann = app.register_ann().await;
    let mut slow = WsClient::connect_slow(&app, &ann.token).await;
    let frame = send_with_model("c1", "Flood me", "stub-flood");
    slow.send(frame).await;
    let mut closed = false;
    for _ in 0..200 {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        if sessions_of(&app, &ann.id).await == 0 {
            closed = true;
            break;
        }
    }
    assert!(closed, "the slow session is still open");
    let close = slow.close_frame().await.expect("a close frame");
    assert_eq!(u16::from(close.code), 1013);
    assert!(close.reason.contains("slow consumer"));
    assert_ok(app.client.get(app.url("/api/health")).send().await.unwrap()).await;
}

#[actix_web::test]
async fn two_instances_keep_a_users_tabs_in_sync_through_redis() {
    if std::env::var("TEST_REDIS_URL").is_err() {
        // Fan-out between instances needs Redis; the suite on Redis runs this test.
        return;
    }
    let configure = |s: &mut chat_server::config::Settings| {
        s.model.demo_tokens_per_sec = 100;
        s.model.demo_reply_tokens = 60;
        s.chat.batch_ms = 10;
    };
    let first = spawn_app_with(configure).await;
    let second = first.another_instance(configure).await;
    let ann = first.register_ann().await;
    let (mut here, _) = WsClient::ready(&first, &ann.token).await;
    let (mut there, _) = WsClient::ready(&second, &ann.token).await;

    here.send(send("c1", None, "Across instances")).await;
    let mut early = Vec::new();
    while early
        .iter()
        .all(|f: &Value| f["seq"].as_u64().is_none_or(|s| s < 3))
    {
        early.push(here.next().await.unwrap());
    }
    // The other instance will not start a second answer in the same conversation.
    let conversation = early[0]["conversation"]["_id"].clone();
    there.send(send("c9", Some(&conversation), "Me too")).await;
    let mut there_frames = there.until("error").await;
    assert_eq!(
        there_frames.last().unwrap()["code"],
        json!("generation_in_progress")
    );
    // A tab on the other instance catches up from the text kept in Redis.
    let (mut late, _) = WsClient::ready(&second, &ann.token).await;
    late.send(json!({"type": "conversation.open", "conversationId": conversation}))
        .await;
    early.extend(here.until("message.completed").await);
    there_frames.extend(there.until("message.completed").await);
    let late_frames = late.until("message.completed").await;
    let content = early.last().unwrap()["message"]["content"].clone();
    let message_id = early.last().unwrap()["message"]["_id"].clone();
    assert_eq!(json!(joined_deltas(&there_frames, &message_id, 0)), content);
    assert_eq!(there_frames.last().unwrap()["message"]["content"], content);
    let at = late_frames
        .iter()
        .position(|f| f["type"] == "message.snapshot")
        .expect("a snapshot");
    let seq = late_frames[at]["seq"].as_u64().unwrap();
    let rest = joined_deltas(&late_frames[at + 1..], &message_id, seq);
    assert_eq!(
        json!(format!("{}{rest}", late_frames[at]["content"].as_str().unwrap())),
        content
    );

    // A cancel sent to the other instance stops the answer where it runs.
    here.until("conversation.updated").await;
    there.until("conversation.updated").await;
    here.send(send("c2", Some(&conversation), "Again, longer")).await;
    there.until("message.delta").await;
    there
        .send(json!({"type": "chat.cancel", "conversationId": conversation}))
        .await;
    let frames = here.until("message.completed").await;
    assert_eq!(frames.last().unwrap()["finishReason"], json!("cancelled"));
}

/// Listens on a user's Redis channel as another instance would, without announcing
/// itself: what the instances publish for the user, in order.
async fn listen_to_user(app: &TestApp, user_id: &str) -> Arc<std::sync::Mutex<Vec<String>>> {
    let (url, prefix) = app.backends.redis.clone().expect("Redis");
    let client = redis::Client::open(url).unwrap();
    let mut pubsub = client.get_async_pubsub().await.unwrap();
    pubsub.subscribe(format!("{prefix}user:{user_id}")).await.unwrap();
    let heard = Arc::new(std::sync::Mutex::new(Vec::new()));
    let keep = heard.clone();
    tokio::spawn(async move {
        let mut messages = pubsub.into_on_message();
        while let Some(message) = messages.next().await {
            let payload: String = message.get_payload().unwrap();
            keep.lock().unwrap().push(payload);
        }
    });
    heard
}

/// The kinds of what was heard on a user's channel (`F` frame, `W` joined, `H` here, `L` left).
fn kinds(heard: &std::sync::Mutex<Vec<String>>) -> String {
    heard.lock().unwrap().iter().map(|p| &p[..1]).collect()
}

#[actix_web::test]
async fn an_instance_shares_a_user_only_while_another_watches_and_a_newcomer_catches_up_mid_answer() {
    if std::env::var("TEST_REDIS_URL").is_err() {
        // Fan-out between instances needs Redis; the suite on Redis runs this test.
        return;
    }
    let configure = |s: &mut chat_server::config::Settings| {
        s.model.demo_tokens_per_sec = 50;
        s.model.demo_reply_tokens = 100;
        s.chat.batch_ms = 10;
        // How long an instance shares everything after announcing itself.
        s.redis.timeout_ms = 300;
    };
    let first = spawn_app_with(configure).await;
    let second = first.another_instance(configure).await;
    let ann = first.register_ann().await;
    let heard = listen_to_user(&first, &ann.id).await;
    let (mut here, _) = WsClient::ready(&first, &ann.token).await;
    // The first instance announces itself; nobody answers, and once the wait for
    // answers is over it keeps the user's events to itself.
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(kinds(&heard), "W");
    here.send(send("c1", None, "Only here")).await;
    let mut frames = Vec::new();
    while frames
        .iter()
        .all(|f: &Value| f["seq"].as_u64().is_none_or(|s| s < 3))
    {
        frames.push(here.next().await.unwrap());
    }
    assert_eq!(kinds(&heard), "W", "nothing of the answer goes through Redis");
    let conversation = frames[0]["conversation"]["_id"].clone();
    let message_id = frames.iter().find(|f| f["type"] == "message.delta").unwrap()["messageId"].clone();

    // A tab on the second instance, mid-answer: the first writes the text so far for it,
    // answers, and from then on shares every delta.
    let (mut there, _) = WsClient::ready(&second, &ann.token).await;
    there
        .send(json!({"type": "conversation.open", "conversationId": conversation}))
        .await;
    frames.extend(here.until("message.completed").await);
    let there_frames = there.until("message.completed").await;
    let content = frames.last().unwrap()["message"]["content"].clone();
    let at = there_frames
        .iter()
        .position(|f| f["type"] == "message.snapshot")
        .expect("a snapshot");
    let seq = there_frames[at]["seq"].as_u64().unwrap();
    assert!(
        seq >= 3,
        "the snapshot holds what streamed before the tab came: {seq}"
    );
    let rest = joined_deltas(&there_frames[at + 1..], &message_id, seq);
    assert_eq!(
        json!(format!("{}{rest}", there_frames[at]["content"].as_str().unwrap())),
        content
    );
    let shared = kinds(&heard);
    assert!(shared.starts_with("WWH"), "{shared}");
    assert!(shared.contains('F'), "{shared}");

    // The second instance's tab leaves: the first stops sharing. (A title may still go
    // out around the leave, before the first instance has heard it.)
    drop(there);
    for _ in 0..100 {
        if kinds(&heard).contains('L') {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(kinds(&heard).contains('L'), "{}", kinds(&heard));
    here.until("conversation.updated").await;
    // Whatever went out before the first instance heard the leave has arrived by now.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let before = heard.lock().unwrap().len();
    here.send(send("c2", Some(&conversation), "Still only here"))
        .await;
    here.until("message.completed").await;
    let after = heard.lock().unwrap().len();
    assert_eq!(after, before, "{}", kinds(&heard));
}

#[actix_web::test]
async fn a_tab_that_stops_answering_pings_is_closed_as_idle() {
    let app = spawn_app_with(|s| {
        s.chat.heartbeat_secs = 1;
        s.chat.idle_timeout_secs = 1;
    })
    .await;
    let ann = app.register_ann().await;
    // This client never reads, so it never answers the server's pings.
    let mut silent = WsClient::connect_slow(&app, &ann.token).await;
    let (mut live, _) = WsClient::ready(&app, &ann.token).await;
    let mut idle_closed = false;
    for _ in 0..100 {
        // The live tab reads, which answers pings, and talks now and then.
        live.send(json!({"type": "ping"})).await;
        live.until("pong").await;
        if sessions_of(&app, &ann.id).await == 1 {
            idle_closed = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(idle_closed, "the silent tab is still open");
    let close = silent.close_frame().await.expect("a close frame");
    assert_eq!(u16::from(close.code), 1001);
    assert_eq!(close.reason.as_str(), "idle timeout");
}

#[actix_web::test]
async fn a_profile_change_reaches_every_tab_and_client_pings_are_answered() {
    let app = chat_app(2000, 5).await;
    let ann = app.register_ann().await;
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;
    assert_ok(
        app.put_auth("/api/auth/profile", &ann.token, json!({"name": "Ann Smith"}))
            .await,
    )
    .await;
    let updated = tab.expect("profile.updated").await;
    assert_eq!(updated["user"]["name"], json!("Ann Smith"));
    assert!(tab.ping_answered().await);
    // A plain GET without an upgrade is the API's JSON error.
    let plain = app.client.get(app.url("/api/ws")).send().await.unwrap();
    assert_error(plain, 400, "validation_error").await;
}

#[actix_web::test]
async fn the_token_cookie_opens_a_socket_only_from_a_page_of_this_site() {
    let app = chat_app(2000, 5).await;
    let ann = app.register_ann().await;
    let mut same_site = WsClient::connect_with_cookie(&app, &ann.token, &app.address).await;
    same_site.expect("ready").await;
    // Another site's page gets no cookie login: it would have to send the token itself.
    let mut other_site = WsClient::connect_with_cookie(&app, &ann.token, "https://evil.example").await;
    let close = other_site.close_frame().await.expect("a close frame");
    assert!(close.reason.contains("no auth frame"), "{}", close.reason);
}

#[actix_web::test]
async fn deltas_carry_their_emit_time_only_when_load_tests_ask_for_it() {
    for stamped in [false, true] {
        let app = spawn_app_with(move |s| {
            s.model.demo_tokens_per_sec = 2000;
            s.model.demo_reply_tokens = 30;
            s.chat.batch_ms = 10;
            s.chat.frame_timestamps = stamped;
        })
        .await;
        let ann = app.register_ann().await;
        let (mut tab, _) = WsClient::ready(&app, &ann.token).await;
        let before = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_micros() as u64;
        tab.send(send("c1", None, "Stamp these")).await;
        let frames = tab.until("message.completed").await;
        let deltas = of_type(&frames, "message.delta");
        assert!(!deltas.is_empty());
        for d in deltas {
            match d.get("emittedAt") {
                Some(at) if stamped => {
                    let at = at.as_u64().expect("microseconds");
                    assert!(at >= before && at < before + 60_000_000, "{d}");
                }
                None if !stamped => {}
                other => panic!("stamped={stamped} but emittedAt={other:?} in {d}"),
            }
        }
    }
}
