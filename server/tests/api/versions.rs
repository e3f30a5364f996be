//! Conversations as trees (issue 30): edits and regenerates make versions, the model sees
//! only the branch it answers, `conversation.select` switches the branch in every tab,
//! each version counts like a send, refusals name their field, and feedback on answers.

use serde_json::{json, Value};

use crate::chat::{chat_app, send, stub_app_with};
use crate::helpers::{assert_error, assert_ok, spawn_app_with, TestApp, TestUser};
use crate::model_stub::ModelStub;
use crate::ws::WsClient;

pub(crate) fn edit(client_id: &str, conversation: &Value, edit_of: &Value, content: &str) -> Value {
    let mut frame = send(client_id, Some(conversation), content);
    frame["editOf"] = edit_of.clone();
    frame
}

fn regenerate(client_id: &str, conversation: &Value, answer: &Value) -> Value {
    json!({"type": "chat.regenerate", "clientId": client_id, "conversationId": conversation, "messageId": answer})
}

fn select(conversation: &Value, message: &Value) -> Value {
    json!({"type": "conversation.select", "conversationId": conversation, "messageId": message})
}

/// The question and answer a send created, once its answer completed (and, for a new
/// conversation, once its title came, so that no late `conversation.updated` is mistaken
/// for a switch).
pub(crate) async fn exchange(tab: &mut WsClient) -> (Value, Value) {
    let mut frames = tab.until("message.completed").await;
    let titled = |frames: &[Value]| frames.iter().any(|f| f["type"] == "conversation.updated");
    if frames.iter().any(|f| f["type"] == "conversation.created") && !titled(&frames) {
        frames.extend(tab.until("conversation.updated").await);
    }
    let created: Vec<&Value> = frames.iter().filter(|f| f["type"] == "message.created").collect();
    let answer = created.last().unwrap()["message"].clone();
    let question = match created.len() {
        2 => created[0]["message"].clone(),
        _ => Value::Null,
    };
    (question, answer)
}

/// The user turns of the last answer the stub was asked for.
fn asked(stub: &ModelStub) -> Vec<String> {
    let request = stub.last_answer_request();
    let messages = request["messages"].as_array().unwrap();
    let users = messages.iter().filter(|m| m["role"] == "user");
    users.map(|m| m["content"].as_str().unwrap().to_owned()).collect()
}

async fn stored(app: &TestApp, user: &TestUser, conversation: &Value) -> Value {
    let path = format!("/api/conversations/{}", conversation.as_str().unwrap());
    assert_ok(app.get_auth(&path, &user.token).await).await["data"].clone()
}

async fn responses_used(app: &TestApp, user: &TestUser) -> Value {
    app.used_today(&user.token, "responses").await
}

#[actix_web::test]
async fn edits_and_regenerates_make_versions_and_the_model_sees_only_its_branch() {
    let (app, stub) = stub_app_with(10, |_| {}).await;
    let ann = app.register_ann().await;
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;

    tab.send(send("c1", None, "Alpha question")).await;
    let (q1, a1) = exchange(&mut tab).await;
    let conversation = q1["conversationId"].clone();
    assert_eq!(
        (q1["parentId"].clone(), a1["parentId"].clone()),
        (Value::Null, q1["_id"].clone())
    );
    app.clock.advance_ms(1000);
    tab.send(send("c2", Some(&conversation), "Beta question")).await;
    let (q2, a2) = exchange(&mut tab).await;
    assert_eq!(q2["parentId"], a1["_id"]);

    // The edit hangs beside the question it replaces; the model never sees "Beta".
    app.clock.advance_ms(1000);
    tab.send(edit("c3", &conversation, &q2["_id"], "Gamma question"))
        .await;
    let (q3, a3) = exchange(&mut tab).await;
    assert_eq!(
        (q3["parentId"].clone(), a3["parentId"].clone()),
        (a1["_id"].clone(), q3["_id"].clone())
    );
    assert_eq!(asked(&stub), ["Alpha question", "Gamma question"]);

    // A regenerate answers the same question again, as a sibling of the answer.
    app.clock.advance_ms(1000);
    tab.send(regenerate("c4", &conversation, &a3["_id"])).await;
    let (none, a4) = exchange(&mut tab).await;
    assert_eq!(none, Value::Null, "no new question");
    assert_eq!(a4["parentId"], q3["_id"]);
    assert_eq!(asked(&stub), ["Alpha question", "Gamma question"]);

    let data = stored(&app, &ann, &conversation).await;
    assert_eq!(data["messages"].as_array().unwrap().len(), 7);
    assert_eq!(data["currentMessageId"], a4["_id"]);
    // Every version counted one response.
    assert_eq!(responses_used(&app, &ann).await, json!(4));

    // Back to the first version of the second question: its newest message below is a2,
    // and the next send follows it.
    tab.send(select(&conversation, &q2["_id"])).await;
    let updated = tab.expect("conversation.updated").await;
    assert_eq!(updated["conversation"]["currentMessageId"], a2["_id"]);
    app.clock.advance_ms(1000);
    tab.send(send("c5", Some(&conversation), "Delta question")).await;
    let (q5, _) = exchange(&mut tab).await;
    assert_eq!(q5["parentId"], a2["_id"]);
    assert_eq!(
        asked(&stub),
        ["Alpha question", "Beta question", "Delta question"]
    );
    assert_eq!(responses_used(&app, &ann).await, json!(5));

    // Selecting an answer with versions shows that version.
    tab.send(select(&conversation, &a3["_id"])).await;
    let updated = tab.expect("conversation.updated").await;
    assert_eq!(updated["conversation"]["currentMessageId"], a3["_id"]);

    // Deleting the conversation deletes every branch.
    let path = format!("/api/conversations/{}", conversation.as_str().unwrap());
    assert_ok(app.delete_auth(&path, &ann.token).await).await;
    assert_error(app.get_auth(&path, &ann.token).await, 404, "not_found").await;
}

#[actix_web::test]
async fn a_regenerate_may_change_the_model_and_keeps_the_questions_image() {
    let (app, stub) = stub_app_with(10, |_| {}).await;
    let ann = app.register_ann().await;
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;
    tab.send(send("c1", None, "Plain question")).await;
    let (q1, a1) = exchange(&mut tab).await;
    let conversation = q1["conversationId"].clone();
    // A model outside the plan is refused for a regenerate as for a send.
    let mut frame = regenerate("c2", &conversation, &a1["_id"]);
    frame["model"] = json!("gpt-4o");
    tab.send(frame).await;
    let error = tab.until("error").await.pop().unwrap();
    assert_eq!(
        (error["code"].clone(), error["clientId"].clone()),
        (json!("model_not_allowed"), json!("c2"))
    );
    let mut frame = regenerate("c3", &conversation, &a1["_id"]);
    frame["model"] = json!("stub-error");
    tab.send(frame).await;
    let frames = tab.until("message.completed").await;
    let created = frames.iter().find(|f| f["type"] == "message.created").unwrap();
    assert_eq!(created["message"]["model"], "stub-error");
    let last = stub.requests.lock().unwrap().last().unwrap().clone();
    assert_eq!(last["model"], "stub-error");
    // The failed version was refunded like a failed send: two sends, one refund.
    assert_eq!(responses_used(&app, &ann).await, json!(1));

    // The question's image goes with it again (to the plan's image model, as at first).
    let file = crate::files::uploaded(&app, &ann, "cat.png").await;
    tab.send(crate::files::send_with("i1", "What is this?", &[&file]))
        .await;
    let (question, answer) = exchange(&mut tab).await;
    app.clock.advance_ms(1000);
    tab.send(regenerate("i2", &question["conversationId"], &answer["_id"]))
        .await;
    let (_, again) = exchange(&mut tab).await;
    assert_eq!(again["parentId"], question["_id"]);
    let request = stub.last_answer_request();
    assert_eq!(request["model"], "gpt-4.1-nano");
    let asked = request["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(
        asked["content"][0],
        json!({"type": "text", "text": "What is this?"})
    );
    assert_eq!(asked["content"][1]["type"], "image_url");
    // The file stays the question's: the regenerate did not take or copy it.
    let data = stored(&app, &ann, &question["conversationId"]).await;
    let with_files: Vec<&Value> = data["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| !m["attachments"].as_array().unwrap().is_empty())
        .collect();
    assert_eq!(with_files.len(), 1);
    assert_eq!(with_files[0]["_id"], question["_id"]);
}

#[actix_web::test]
async fn edits_regenerates_and_selects_that_do_not_fit_are_refused_naming_the_field() {
    let app = chat_app(2000, 5).await;
    let ann = app.register_ann().await;
    let bob = app.register("Bob", "bob@example.com", "secret1").await;
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;
    tab.send(send("c1", None, "First")).await;
    let (q1, a1) = exchange(&mut tab).await;
    let conversation = q1["conversationId"].clone();
    tab.send(send("c2", None, "Another conversation")).await;
    let (other_q, _) = exchange(&mut tab).await;
    let (mut bobs_tab, _) = WsClient::ready(&app, &bob.token).await;
    bobs_tab.send(send("b1", None, "Bob's")).await;
    let (bob_q, bob_a) = exchange(&mut bobs_tab).await;
    let before = (
        stored(&app, &ann, &conversation).await,
        responses_used(&app, &ann).await,
    );

    let refusals = [
        (
            edit("e1", &conversation, &a1["_id"], "x"),
            "question_required",
            "editOf",
        ),
        (
            edit("e2", &conversation, &json!("no-such-id"), "x"),
            "not_found",
            "editOf",
        ),
        (
            edit("e3", &conversation, &other_q["_id"], "x"),
            "not_found",
            "editOf",
        ),
        (
            edit("e4", &conversation, &bob_q["_id"], "x"),
            "not_found",
            "editOf",
        ),
        (
            regenerate("r1", &conversation, &q1["_id"]),
            "answer_required",
            "messageId",
        ),
        (
            regenerate("r2", &conversation, &bob_a["_id"]),
            "not_found",
            "messageId",
        ),
        (
            regenerate("r3", &bob_q["conversationId"], &bob_a["_id"]),
            "not_found",
            "messageId",
        ),
    ];
    for (frame, code, field) in refusals {
        let client_id = frame["clientId"].clone();
        tab.send(frame).await;
        // Titles of the new conversations may come first.
        let error = tab.until("error").await.pop().unwrap();
        assert_eq!(
            (
                error["code"].clone(),
                error["field"].clone(),
                error["clientId"].clone()
            ),
            (json!(code), json!(field), client_id)
        );
    }
    tab.send(select(&conversation, &bob_a["_id"])).await;
    let error = tab.until("error").await.pop().unwrap();
    assert_eq!(
        (error["code"].clone(), error["field"].clone()),
        (json!("not_found"), json!("messageId"))
    );
    tab.send(select(&bob_q["conversationId"], &bob_a["_id"])).await;
    assert_eq!(tab.until("error").await.pop().unwrap()["code"], "not_found");
    // Nothing stored, nothing counted, the current branch unchanged.
    assert_eq!(
        (
            stored(&app, &ann, &conversation).await,
            responses_used(&app, &ann).await
        ),
        before
    );
}

#[actix_web::test]
async fn a_refusal_is_in_the_users_language() {
    let app = chat_app(2000, 5).await;
    let ann = app.register_ann().await;
    assert_ok(
        app.put_auth("/api/settings", &ann.token, json!({"language": "hu-HU"}))
            .await,
    )
    .await;
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;
    tab.send(send("c1", None, "Első")).await;
    let (q1, a1) = exchange(&mut tab).await;
    tab.send(edit("e1", &q1["conversationId"], &a1["_id"], "x")).await;
    let error = tab.until("error").await.pop().unwrap();
    assert_eq!(
        error["message"],
        "Csak a saját üzenetei szerkeszthetők, a válaszok nem."
    );
    let path = format!("/api/messages/{}/feedback", q1["_id"].as_str().unwrap());
    let answer = app.put_auth(&path, &ann.token, json!({"rating": "up"})).await;
    let body = assert_error(answer, 400, "answer_required").await;
    assert_eq!(body["message"], "Csak válasz generálható újra vagy értékelhető.");
}

#[actix_web::test]
async fn a_regenerate_while_the_conversation_streams_is_refused_and_not_counted() {
    let app = chat_app(20, 400).await;
    let ann = app.register_ann().await;
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;
    tab.send(send("c1", None, "Slow one")).await;
    let frames = tab.until("message.delta").await;
    let answer = frames
        .iter()
        .rev()
        .find(|f| f["type"] == "message.created")
        .unwrap()["message"]
        .clone();
    let conversation = answer["conversationId"].clone();
    tab.send(regenerate("r1", &conversation, &answer["_id"])).await;
    assert_eq!(tab.outcome_of("r1").await, "generation_in_progress");
    assert_eq!(responses_used(&app, &ann).await, json!(1));
    // Switching versions while an answer streams is allowed.
    tab.send(select(&conversation, &answer["_id"])).await;
    let updated = tab.until("conversation.updated").await;
    assert_eq!(
        updated.last().unwrap()["conversation"]["currentMessageId"],
        answer["_id"]
    );
    tab.send(json!({"type": "chat.cancel", "conversationId": conversation}))
        .await;
    tab.until("message.completed").await;
}

#[actix_web::test]
async fn feedback_is_stored_shown_in_every_tab_and_refused_where_it_does_not_belong() {
    let app = chat_app(2000, 5).await;
    let ann = app.register_ann().await;
    let bob = app.register("Bob", "bob@example.com", "secret1").await;
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;
    let (mut other_tab, _) = WsClient::ready(&app, &ann.token).await;
    tab.send(send("c1", None, "Rate me")).await;
    let (question, answer) = exchange(&mut tab).await;
    other_tab.until("message.completed").await;
    let conversation = answer["conversationId"].clone();
    let path = format!("/api/messages/{}/feedback", answer["_id"].as_str().unwrap());

    let body = json!({"rating": "down", "comment": "  Too short.  "});
    let saved = assert_ok(app.put_auth(&path, &ann.token, body).await).await;
    assert_eq!(saved["data"], json!({"rating": "down", "comment": "Too short."}));
    // The conversation's title may come first.
    let frame = other_tab.until("message.feedback").await.pop().unwrap();
    assert_eq!(
        frame,
        json!({"type": "message.feedback", "conversationId": conversation, "messageId": answer["_id"],
               "feedback": {"rating": "down", "comment": "Too short."}})
    );
    let messages = stored(&app, &ann, &conversation).await["messages"].clone();
    assert_eq!(
        messages[1]["feedback"],
        json!({"rating": "down", "comment": "Too short."})
    );
    assert_eq!(messages[0]["feedback"], Value::Null);

    // Refusals change nothing.
    let question_path = format!("/api/messages/{}/feedback", question["_id"].as_str().unwrap());
    let refused = app
        .put_auth(&question_path, &ann.token, json!({"rating": "up"}))
        .await;
    assert_error(refused, 400, "answer_required").await;
    assert_error(
        app.put_auth(&path, &bob.token, json!({"rating": "up"})).await,
        404,
        "not_found",
    )
    .await;
    let long = json!({"rating": "up", "comment": "x".repeat(2001)});
    let body = assert_error(app.put_auth(&path, &ann.token, long).await, 400, "field_too_long").await;
    assert!(body["message"].as_str().unwrap().contains("2000"), "{body}");
    let sideways = app
        .put_auth(&path, &ann.token, json!({"rating": "sideways"}))
        .await;
    assert_error(sideways, 400, "validation_error").await;
    let messages = stored(&app, &ann, &conversation).await["messages"].clone();
    assert_eq!(
        messages[1]["feedback"],
        json!({"rating": "down", "comment": "Too short."})
    );

    // Taken back: no rating, no comment.
    let cleared = assert_ok(
        app.put_auth(&path, &ann.token, json!({"rating": null, "comment": "x"}))
            .await,
    )
    .await;
    assert_eq!(cleared["data"], Value::Null);
    assert_eq!(
        other_tab.until("message.feedback").await.pop().unwrap()["feedback"],
        Value::Null
    );
    let messages = stored(&app, &ann, &conversation).await["messages"].clone();
    assert_eq!(messages[1]["feedback"], Value::Null);
}

#[actix_web::test]
async fn a_new_version_and_a_switch_reach_tabs_on_another_instance() {
    if std::env::var("TEST_REDIS_URL").is_err() {
        // Fan-out between instances needs Redis; the suite on Redis runs this test.
        return;
    }
    let configure = |s: &mut chat_server::config::Settings| {
        s.model.demo_tokens_per_sec = 2000;
        s.model.demo_reply_tokens = 5;
        s.chat.batch_ms = 10;
    };
    let first = spawn_app_with(configure).await;
    let second = first.another_instance(configure).await;
    let ann = first.register_ann().await;
    let (mut here, _) = WsClient::ready(&first, &ann.token).await;
    let (mut there, _) = WsClient::ready(&second, &ann.token).await;
    here.send(send("c1", None, "First")).await;
    let (q1, a1) = exchange(&mut here).await;
    exchange(&mut there).await;
    let conversation = q1["conversationId"].clone();

    first.clock.advance_ms(1000);
    here.send(edit("c2", &conversation, &q1["_id"], "First, edited"))
        .await;
    let (q2, a2) = exchange(&mut here).await;
    assert_eq!(q2["parentId"], Value::Null);
    let (q2_there, a2_there) = exchange(&mut there).await;
    assert_eq!(
        (q2_there["_id"].clone(), a2_there["_id"].clone()),
        (q2["_id"].clone(), a2["_id"].clone())
    );

    here.send(select(&conversation, &q1["_id"])).await;
    for tab in [&mut here, &mut there] {
        let updated = tab.until("conversation.updated").await;
        assert_eq!(
            updated.last().unwrap()["conversation"]["currentMessageId"],
            a1["_id"]
        );
    }
    let data = stored(&second, &ann, &conversation).await;
    assert_eq!(data["currentMessageId"], a1["_id"]);
}

#[actix_web::test]
async fn a_version_far_back_is_answered_from_its_own_branch() {
    // Two messages of history: the newest six of the conversation are read first, and
    // the first question is not among them.
    let (app, stub) = stub_app_with(10, |s| s.chat.history_messages = 2).await;
    let ann = app.register_ann().await;
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;
    tab.send(send("c1", None, "Question one")).await;
    let (q1, a1) = exchange(&mut tab).await;
    let conversation = q1["conversationId"].clone();
    for (i, text) in ["Question two", "Question three", "Question four"]
        .iter()
        .enumerate()
    {
        app.clock.advance_ms(1000);
        tab.send(send(&format!("f{i}"), Some(&conversation), text)).await;
        exchange(&mut tab).await;
    }
    assert_eq!(asked(&stub), ["Question four"]);
    app.clock.advance_ms(1000);
    tab.send(regenerate("r1", &conversation, &a1["_id"])).await;
    let (_, again) = exchange(&mut tab).await;
    assert_eq!(again["parentId"], q1["_id"]);
    assert_eq!(asked(&stub), ["Question one"]);
    // An edit of the second question: its branch is the first exchange and the edit (an
    // answer read back without its question is left out, so only the edit is asked).
    let data = stored(&app, &ann, &conversation).await;
    let q2 = data["messages"][2].clone();
    assert_eq!(q2["content"], "Question two");
    app.clock.advance_ms(1000);
    tab.send(edit("e1", &conversation, &q2["_id"], "Question two, again"))
        .await;
    let (edited, _) = exchange(&mut tab).await;
    assert_eq!(edited["parentId"], a1["_id"]);
    assert_eq!(asked(&stub), ["Question two, again"]);
}

#[actix_web::test]
async fn another_versions_images_are_not_the_models_to_see() {
    let (app, stub) = stub_app_with(10, |_| {}).await;
    let ann = app.register_ann().await;
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;
    let first = crate::files::uploaded(&app, &ann, "first.png").await;
    tab.send(crate::files::send_with("c1", "The first picture", &[&first]))
        .await;
    let (q1, _) = exchange(&mut tab).await;
    let conversation = q1["conversationId"].clone();
    app.clock.advance_ms(1000);
    let second = crate::files::uploaded(&app, &ann, "second.png").await;
    let mut frame = crate::files::send_with("c2", "The second picture", &[&second]);
    frame["conversationId"] = conversation.clone();
    tab.send(frame).await;
    let (q2, _) = exchange(&mut tab).await;
    let images = |request: &Value| request.to_string().matches(r#""type":"image_url""#).count();
    assert_eq!(images(&stub.last_answer_request()), 2);

    // The second question edited without its picture: the first one is still seen, the
    // replaced version's is not.
    app.clock.advance_ms(1000);
    tab.send(edit("c3", &conversation, &q2["_id"], "No picture this time"))
        .await;
    exchange(&mut tab).await;
    let request = stub.last_answer_request();
    assert_eq!(images(&request), 1, "{request}");
    assert_eq!(asked_texts(&request).last().unwrap(), "No picture this time");
}

/// The user turns' texts of a request, image parts or not.
fn asked_texts(request: &Value) -> Vec<String> {
    let messages = request["messages"].as_array().unwrap();
    let users = messages.iter().filter(|m| m["role"] == "user");
    users
        .map(|m| match &m["content"] {
            Value::String(text) => text.clone(),
            parts => parts[0]["text"].as_str().unwrap_or_default().to_owned(),
        })
        .collect()
}
