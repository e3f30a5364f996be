//! The history sent to the model fits its context window (`config/models.toml`): the
//! oldest exchanges go first, the system turns and the question always stay, and a
//! question that cannot fit alone is refused before anything is stored or counted.

use serde_json::{json, Value};

use crate::chat::{send, stub_app_with};
use crate::helpers::{assert_ok, TestApp, TestUser};
use crate::model_stub::ModelStub;
use crate::ws::WsClient;

/// The window the stub model gets here, and the answer's room in it: prompts of at most
/// 1200 tokens.
const CONTEXT_TOKENS: usize = 1400;
const ANSWER_TOKENS: u32 = 200;
const BUDGET: usize = CONTEXT_TOKENS - ANSWER_TOKENS as usize;

/// The stub model with a small window in a `models.toml` of the config folder, and a
/// history setting that would send every earlier message.
async fn small_window_app() -> (TestApp, ModelStub) {
    stub_app_with(10, |s| {
        let models =
            format!("[default]\ncontext_tokens = 8192\n\n[models.stub]\ncontext_tokens = {CONTEXT_TOKENS}\n");
        std::fs::write(s.config_dir.join("models.toml"), models).unwrap();
        s.model.max_tokens = ANSWER_TOKENS;
        s.chat.history_messages = 1000;
    })
    .await
}

/// What the server's estimate counts for a prompt (models without an OpenAI encoding):
/// a token for every 2 bytes, 4 a message, 3 for the reply.
fn estimated(messages: &[Value]) -> usize {
    3 + messages
        .iter()
        .map(|m| 4 + m["content"].as_str().unwrap().len().div_ceil(2))
        .sum::<usize>()
}

/// The messages of the last answer the stub was asked for.
fn last_prompt(stub: &ModelStub) -> Vec<Value> {
    stub.last_answer_request()["messages"].as_array().unwrap().clone()
}

fn question(i: usize) -> String {
    format!(
        "Question {i:02}: {}",
        "tell me more about the sea ".repeat(4).trim_end()
    )
}

async fn usage_used(app: &TestApp, user: &TestUser) -> Value {
    let usage = assert_ok(app.get_auth("/api/usage/limits", &user.token).await).await;
    usage["limitInfo"]["services"]["responses"]["daily"]["used"].clone()
}

#[actix_web::test]
async fn a_long_conversation_keeps_working_with_its_latest_exchanges_in_the_window() {
    let (app, stub) = small_window_app().await;
    let ann = app.register_ann().await;
    let body = json!({"aiPersonalization": {"enabled": true, "userName": "Annie", "userInfo": "I sail."}});
    assert_ok(app.put_auth("/api/settings", &ann.token, body).await).await;
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;
    tab.send(send("c0", None, &question(0))).await;
    let frames = tab.until("conversation.updated").await;
    let conversation = frames[0]["conversation"]["_id"].clone();
    for i in 1..25 {
        // Messages sort by time: each exchange after the one before.
        app.clock.advance_ms(1000);
        tab.send(send(&format!("c{i}"), Some(&conversation), &question(i)))
            .await;
        let completed = tab.until("message.completed").await;
        assert_eq!(
            completed.last().unwrap()["finishReason"],
            json!("stop"),
            "send {i}"
        );
    }
    let prompt = last_prompt(&stub);
    assert!(estimated(&prompt) <= BUDGET, "{prompt:?}");
    // The system prompt first, with the user's personalisation.
    assert_eq!(prompt[0]["role"], json!("system"));
    assert!(prompt[0]["content"]
        .as_str()
        .unwrap()
        .contains("Address the user as Annie."));
    // Then whole exchanges, the latest ones, up to the question.
    let history = &prompt[1..prompt.len() - 1];
    assert!(
        history.len() >= 10 && history.len().is_multiple_of(2),
        "{prompt:?}"
    );
    let first = 24 - history.len() / 2;
    for (n, pair) in history.chunks(2).enumerate() {
        assert_eq!(pair[0]["role"], json!("user"));
        assert_eq!(pair[0]["content"], json!(question(first + n)));
        assert_eq!(pair[1]["role"], json!("assistant"));
    }
    assert_eq!(
        prompt.last().unwrap(),
        &json!({"role": "user", "content": question(24)})
    );
    // The oldest are gone, and were not lost: the conversation keeps every message.
    assert!(!prompt.iter().any(|m| m["content"] == json!(question(0))));
    let stored = assert_ok(
        app.get_auth(
            &format!("/api/conversations/{}", conversation.as_str().unwrap()),
            &ann.token,
        )
        .await,
    )
    .await;
    assert_eq!(stored["data"]["messages"].as_array().unwrap().len(), 50);
}

#[actix_web::test]
async fn a_question_larger_than_the_window_is_refused_and_nothing_is_stored_or_counted() {
    let (app, stub) = small_window_app().await;
    let ann = app.register_ann().await;
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;
    // Far below chat.max_message_chars, far above the window.
    let long = "Tell me about the sea. ".repeat(150);
    tab.send(send("big", None, &long)).await;
    let error = tab.expect("error").await;
    assert_eq!(
        (error["clientId"].clone(), error["code"].clone()),
        (json!("big"), json!("message_too_long"))
    );
    let text = error["message"].as_str().unwrap();
    let max: usize = text
        .strip_prefix("The message is too long (at most ")
        .and_then(|rest| rest.strip_suffix(" characters)"))
        .unwrap_or_else(|| panic!("{text}"))
        .parse()
        .unwrap();
    assert!(max > 1500 && max < long.len(), "{max}");
    assert_eq!(usage_used(&app, &ann).await, json!(0));
    assert_eq!(
        assert_ok(app.get_auth("/api/conversations", &ann.token).await).await["data"],
        json!([])
    );
    assert!(stub.requests.lock().unwrap().is_empty());

    // A question of the length the refusal named goes through.
    let fitting: String = long.chars().take(max).collect();
    tab.send(send("fits", None, &fitting)).await;
    let frames = tab.until("conversation.updated").await;
    let conversation = frames[0]["conversation"]["_id"].clone();
    assert_eq!(frames.last().unwrap()["type"], json!("conversation.updated"));
    assert!(estimated(&last_prompt(&stub)) <= BUDGET);
    assert_eq!(usage_used(&app, &ann).await, json!(1));

    // In an existing conversation, in Hungarian: refused the same, nothing added.
    app.clock.advance_ms(1000);
    assert_ok(
        app.put_auth("/api/settings", &ann.token, json!({"language": "hu-HU"}))
            .await,
    )
    .await;
    let (mut hu_tab, _) = WsClient::ready(&app, &ann.token).await;
    hu_tab.send(send("big2", Some(&conversation), &long)).await;
    let error = hu_tab.expect("error").await;
    assert_eq!(error["code"], json!("message_too_long"));
    let text = error["message"].as_str().unwrap();
    assert!(
        text.starts_with("Az üzenet túl hosszú (legfeljebb ") && text.ends_with(" karakter)"),
        "{text}"
    );
    let stored = assert_ok(
        app.get_auth(
            &format!("/api/conversations/{}", conversation.as_str().unwrap()),
            &ann.token,
        )
        .await,
    )
    .await;
    assert_eq!(stored["data"]["messages"].as_array().unwrap().len(), 2);
    assert_eq!(usage_used(&app, &ann).await, json!(1));
}
