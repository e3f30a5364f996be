//! Share links (issue 31): a snapshot of the branch shown, read by anyone with the link
//! (signed out), nothing of the owner but the name they chose to show; revoked, or ended
//! with its conversation or account; images served through the link, documents only
//! named; continued as a copy in a viewer's account; rate-limited.

use reqwest::multipart::{Form, Part};
use reqwest::Response;
use serde_json::{json, Value};

use crate::chat::{chat_app, send};
use crate::files::{send_with, uploaded};
use crate::helpers::{assert_error, assert_ok, spawn_app_with, TestApp, TestUser};
use crate::ws::WsClient;

/// The question and the completed answer of a send (and, in a new conversation, once
/// its title came).
async fn exchange(tab: &mut WsClient) -> (Value, Value) {
    let mut frames = tab.until("message.completed").await;
    let titled = |frames: &[Value]| frames.iter().any(|f| f["type"] == "conversation.updated");
    if frames.iter().any(|f| f["type"] == "conversation.created") && !titled(&frames) {
        frames.extend(tab.until("conversation.updated").await);
    }
    let question = frames.iter().find(|f| f["type"] == "message.created").unwrap();
    let completed = frames.iter().find(|f| f["type"] == "message.completed").unwrap();
    (question["message"].clone(), completed["message"].clone())
}

fn edit(client_id: &str, conversation: &Value, edit_of: &Value, content: &str) -> Value {
    let mut frame = send(client_id, Some(conversation), content);
    frame["editOf"] = edit_of.clone();
    frame
}

async fn post_share(app: &TestApp, user: &TestUser, conversation: &Value, body: Option<Value>) -> Response {
    let path = format!("/api/conversations/{}/shares", conversation.as_str().unwrap());
    let request = app.client.post(app.url(&path)).bearer_auth(&user.token);
    match body {
        Some(body) => request.json(&body),
        None => request,
    }
    .send()
    .await
    .unwrap()
}

/// A new link to the conversation (201), its `Share`.
async fn share(app: &TestApp, user: &TestUser, conversation: &Value, body: Option<Value>) -> Value {
    let response = post_share(app, user, conversation, body).await;
    assert_eq!(response.status(), 201);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["success"], json!(true));
    body["data"].clone()
}

/// The token at the end of a link's URL.
fn token_of(share: &Value) -> String {
    let url = share["url"].as_str().unwrap();
    url.rsplit_once("/share/").unwrap().1.to_owned()
}

/// A public GET, signed out.
async fn get_public(app: &TestApp, path: &str) -> Response {
    app.client.get(app.url(path)).send().await.unwrap()
}

async fn shared(app: &TestApp, share: &Value) -> Response {
    get_public(app, &format!("/api/shared/{}", token_of(share))).await
}

/// The contents of the shared messages, in order.
fn contents(shared: &Value) -> Vec<String> {
    shared["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap().to_owned())
        .collect()
}

async fn conversation_of(app: &TestApp, user: &TestUser, id: &Value) -> Value {
    let path = format!("/api/conversations/{}", id.as_str().unwrap());
    assert_ok(app.get_auth(&path, &user.token).await).await["data"].clone()
}

#[actix_web::test]
async fn a_link_shows_the_branch_as_shared_to_anyone_signed_out_and_is_revoked_at_once() {
    let app = chat_app(2000, 5).await;
    let ann = app.register_ann().await;
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;
    tab.send(send("c1", None, "First question")).await;
    let (q1, a1) = exchange(&mut tab).await;
    let conversation = q1["conversationId"].clone();
    app.clock.advance_ms(1000);
    tab.send(send("c2", Some(&conversation), "Second question")).await;
    let (q2, a2) = exchange(&mut tab).await;
    let title = conversation_of(&app, &ann, &conversation).await["title"].clone();
    assert!(title.is_string());

    // No body: the name is not shown.
    let first = share(&app, &ann, &conversation, None).await;
    let token = token_of(&first);
    assert_eq!(
        first["url"],
        json!(format!("{}/share/{token}", app.state.settings.server.public_url))
    );
    // 32 random bytes, base64url without padding.
    assert_eq!(token.len(), 43);
    assert!(token
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));
    assert_eq!(
        (
            first["conversationId"].clone(),
            first["title"].clone(),
            first["showName"].clone()
        ),
        (conversation.clone(), title.clone(), json!(false))
    );

    let response = shared(&app, &first).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["cache-control"], "no-store");
    let text = response.text().await.unwrap();
    for secret in ["ann@example.com", ann.id.as_str()] {
        assert!(!text.contains(secret), "{secret} in {text}");
    }
    let body: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(body["success"], json!(true));
    let data = &body["data"];
    assert_eq!(
        (
            data["title"].clone(),
            data["ownerName"].clone(),
            data["createdAt"].clone()
        ),
        (title.clone(), Value::Null, first["createdAt"].clone())
    );
    let ids: Vec<&Value> = data["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| &m["_id"])
        .collect();
    assert_eq!(ids, [&q1["_id"], &a1["_id"], &q2["_id"], &a2["_id"]]);
    assert_eq!(
        contents(data),
        [
            "First question",
            a1["content"].as_str().unwrap(),
            "Second question",
            a2["content"].as_str().unwrap()
        ]
    );
    let answer = &data["messages"][1];
    assert_eq!(
        (
            answer["role"].clone(),
            answer["model"].clone(),
            answer["sources"].clone()
        ),
        (json!("assistant"), a1["model"].clone(), json!([]))
    );
    assert_eq!(data["messages"][0]["role"], json!("user"));

    // Messages added later, and another version of the second question, are not in it.
    app.clock.advance_ms(1000);
    tab.send(send("c3", Some(&conversation), "Third question")).await;
    exchange(&mut tab).await;
    app.clock.advance_ms(1000);
    tab.send(edit("c4", &conversation, &q2["_id"], "Edited second question"))
        .await;
    exchange(&mut tab).await;
    let later = assert_ok(shared(&app, &first).await).await;
    assert_eq!(later["data"], *data);

    // A second link, with the name shown, is of the branch shown now.
    app.clock.advance_ms(1000);
    let second = share(&app, &ann, &conversation, Some(json!({"showName": true}))).await;
    assert_eq!(second["showName"], json!(true));
    assert_ne!(token_of(&second), token);
    let now = assert_ok(shared(&app, &second).await).await["data"].clone();
    assert_eq!(now["ownerName"], json!("Ann"));
    let now_contents = contents(&now);
    assert_eq!(now_contents[0], "First question");
    assert_eq!(now_contents[2], "Edited second question");
    assert_eq!(now_contents.len(), 4);
    assert!(!now_contents
        .iter()
        .any(|c| c == "Second question" || c == "Third question"));

    // Listed newest first; only the user's.
    let listed = assert_ok(app.get_auth("/api/shares", &ann.token).await).await;
    assert_eq!(listed["data"], json!([second.clone(), first.clone()]));
    let bob = app.register("Bob", "bob@example.com", "password-2").await;
    let none = assert_ok(app.get_auth("/api/shares", &bob.token).await).await;
    assert_eq!(none["data"], json!([]));

    // Revoked: the link answers 404 at once; the other one still works.
    let path = format!("/api/shares/{}", first["_id"].as_str().unwrap());
    assert_ok(app.delete_auth(&path, &ann.token).await).await;
    assert_error(shared(&app, &first).await, 404, "not_found").await;
    assert_error(app.delete_auth(&path, &ann.token).await, 404, "not_found").await;
    assert_ok(shared(&app, &second).await).await;
    let listed = assert_ok(app.get_auth("/api/shares", &ann.token).await).await;
    assert_eq!(listed["data"], json!([second]));
    // Tokens that were never made.
    assert_error(get_public(&app, "/api/shared/nonsense").await, 404, "not_found").await;
    let guessed = format!("/api/shared/{}", "A".repeat(43));
    assert_error(get_public(&app, &guessed).await, 404, "not_found").await;
}

#[actix_web::test]
async fn another_users_conversation_and_link_are_not_found_and_unfinished_ones_are_refused() {
    let app = chat_app(2000, 5).await;
    let ann = app.register_ann().await;
    let bob = app.register("Bob", "bob@example.com", "password-2").await;
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;
    tab.send(send("c1", None, "Question")).await;
    let (q1, _) = exchange(&mut tab).await;
    let conversation = q1["conversationId"].clone();

    // Bob can neither share Ann's conversation nor revoke Ann's link.
    assert_error(
        post_share(&app, &bob, &conversation, None).await,
        404,
        "not_found",
    )
    .await;
    let unknown = json!(uuid::Uuid::now_v7().to_string());
    assert_error(post_share(&app, &ann, &unknown, None).await, 404, "not_found").await;
    let link = share(&app, &ann, &conversation, None).await;
    let path = format!("/api/shares/{}", link["_id"].as_str().unwrap());
    assert_error(app.delete_auth(&path, &bob.token).await, 404, "not_found").await;
    assert_ok(shared(&app, &link).await).await;

    // Signed out: no link is made or revoked.
    let url = app.url(&format!(
        "/api/conversations/{}/shares",
        conversation.as_str().unwrap()
    ));
    let response = app.client.post(url).send().await.unwrap();
    assert_error(response, 401, "unauthorized").await;
    let response = app.client.delete(app.url(&path)).send().await.unwrap();
    assert_error(response, 401, "unauthorized").await;
    assert_error(get_public(&app, "/api/shares").await, 401, "unauthorized").await;
    // A body that is not the options.
    let response = post_share(&app, &ann, &conversation, Some(json!({"showName": "yes"}))).await;
    assert_error(response, 400, "validation_error").await;

    // A conversation with no message yet (none is made through the API, but one may be
    // stored without any) has nothing to share.
    let empty = chat_server::db::conversations::ConversationRow {
        id: uuid::Uuid::now_v7().to_string(),
        user_id: ann.id.clone(),
        title: None,
        model: "gpt-4o-mini".into(),
        web_search: false,
        created_at: app.clock_now(),
        updated_at: app.clock_now(),
        project_id: None,
        current_message_id: None,
        pinned: false,
        archived: false,
    };
    app.state.db.insert_conversation_copy(&empty, &[]).await.unwrap();
    assert_error(
        post_share(&app, &ann, &json!(empty.id), None).await,
        400,
        "message_empty",
    )
    .await;
    let listed = assert_ok(app.get_auth("/api/shares", &ann.token).await).await;
    assert_eq!(listed["data"].as_array().unwrap().len(), 1);
}

#[actix_web::test]
async fn an_answer_still_being_written_cannot_be_shared() {
    let app = chat_app(20, 400).await;
    let ann = app.register_ann().await;
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;
    tab.send(send("c1", None, "Write a long essay")).await;
    let before = tab.until("message.delta").await;
    let conversation = before[0]["conversation"]["_id"].clone();
    let response = post_share(&app, &ann, &conversation, None).await;
    assert_error(response, 409, "generation_in_progress").await;
    let listed = assert_ok(app.get_auth("/api/shares", &ann.token).await).await;
    assert_eq!(listed["data"], json!([]));
    // Once it ends, it can.
    tab.send(json!({"type": "chat.cancel", "conversationId": conversation}))
        .await;
    tab.until("message.completed").await;
    share(&app, &ann, &conversation, None).await;
}

#[actix_web::test]
async fn deleting_the_conversation_or_the_account_ends_its_links() {
    let app = chat_app(2000, 5).await;
    let ann = app.register_ann().await;
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;
    tab.send(send("c1", None, "Kept question")).await;
    let (kept, _) = exchange(&mut tab).await;
    tab.send(send("c2", None, "Deleted question")).await;
    let (deleted, _) = exchange(&mut tab).await;
    let kept_link = share(&app, &ann, &kept["conversationId"], None).await;
    let deleted_link = share(&app, &ann, &deleted["conversationId"], None).await;

    let path = format!(
        "/api/conversations/{}",
        deleted["conversationId"].as_str().unwrap()
    );
    assert_ok(app.delete_auth(&path, &ann.token).await).await;
    assert_error(shared(&app, &deleted_link).await, 404, "not_found").await;
    assert_ok(shared(&app, &kept_link).await).await;
    let listed = assert_ok(app.get_auth("/api/shares", &ann.token).await).await;
    assert_eq!(listed["data"], json!([kept_link.clone()]));

    assert_ok(app.delete_auth("/api/auth/profile", &ann.token).await).await;
    assert_error(shared(&app, &kept_link).await, 404, "not_found").await;
    // The rows went with them (foreign keys), not only the answers.
    let token = token_of(&kept_link);
    assert!(app.state.db.share_by_token(&token).await.unwrap().is_none());
}

async fn upload_document(app: &TestApp, user: &TestUser, name: &str, text: &str) -> Value {
    let form = Form::new().part(
        "file",
        Part::bytes(text.as_bytes().to_vec()).file_name(name.to_owned()),
    );
    let response = app
        .client
        .post(app.url("/api/files"))
        .bearer_auth(&user.token)
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201);
    response.json::<Value>().await.unwrap()["data"].clone()
}

/// Waits for `file` to be read (its `file.updated` saying `ready`).
async fn until_ready(tab: &mut WsClient, file: &Value) {
    loop {
        let frame = tab.next().await.expect("a frame");
        if frame["type"] == "file.updated" && frame["file"]["_id"] == file["_id"] {
            if frame["file"]["status"] == "ready" {
                return;
            }
            assert_eq!(frame["file"]["status"], json!("processing"), "{frame}");
        }
    }
}

#[actix_web::test]
async fn images_are_served_through_the_link_and_documents_only_named() {
    let app = spawn_app_with(|s| s.model.demo_reply_tokens = 3).await;
    let (ann, mut tab) = app.user_on("base").await;
    let image = uploaded(&app, &ann, "cat.png").await;
    let document = upload_document(
        &app,
        &ann,
        "notes.txt",
        "Harbour notes: the ferry leaves at nine.",
    )
    .await;
    until_ready(&mut tab, &document).await;
    tab.send(send_with("c1", "What is in these?", &[&image, &document]))
        .await;
    let (q1, _) = exchange(&mut tab).await;
    let conversation = q1["conversationId"].clone();
    // An image the answer made is the answer's file.
    let mut draw = send("c2", Some(&conversation), "A red fox in the snow");
    draw["imageGeneration"] = json!(true);
    tab.send(draw).await;
    let (_, drawn) = exchange(&mut tab).await;
    let made = drawn["attachments"][0].clone();
    assert_eq!(made["kind"], json!("image"));
    // Another conversation's image.
    let elsewhere = uploaded(&app, &ann, "dog.png").await;
    tab.send(send_with("c3", "And this one?", &[&elsewhere])).await;
    exchange(&mut tab).await;

    let link = share(&app, &ann, &conversation, None).await;
    let token = token_of(&link);
    let data = assert_ok(shared(&app, &link).await).await["data"].clone();
    let file_url = |id: &Value| format!("/api/shared/{token}/files/{}", id.as_str().unwrap());
    assert_eq!(
        data["messages"][0]["attachments"],
        json!([
            {"kind": "image", "name": "cat.png", "mime": "image/png", "width": 64, "height": 48,
             "url": file_url(&image["_id"])},
            {"kind": "document", "name": "notes.txt", "mime": "text/plain", "width": null, "height": null,
             "url": null},
        ])
    );
    assert_eq!(data["messages"][1]["attachments"], json!([]));
    assert_eq!(
        data["messages"][3]["attachments"][0]["url"],
        json!(file_url(&made["_id"]))
    );

    // The images, signed out, as their owner gets them.
    for (file, mime) in [(&image, "image/png"), (&made, "image/jpeg")] {
        let response = get_public(&app, &file_url(&file["_id"])).await;
        assert_eq!(response.status(), 200);
        assert_eq!(response.headers()["content-type"], mime);
        assert_eq!(response.headers()["x-content-type-options"], "nosniff");
        assert_eq!(response.headers()["cache-control"], "private, max-age=300");
        let owners = app
            .get_auth(file["url"].as_str().unwrap(), &ann.token)
            .await
            .bytes()
            .await
            .unwrap();
        assert_eq!(response.bytes().await.unwrap(), owners);
    }
    // A document, another conversation's image, or a made-up id: nothing.
    for id in [&document["_id"], &elsewhere["_id"], &json!("nonsense")] {
        assert_error(get_public(&app, &file_url(id)).await, 404, "not_found").await;
    }
    // Revoked: its images go too.
    let path = format!("/api/shares/{}", link["_id"].as_str().unwrap());
    assert_ok(app.delete_auth(&path, &ann.token).await).await;
    assert_error(get_public(&app, &file_url(&image["_id"])).await, 404, "not_found").await;
}

#[actix_web::test]
async fn a_signed_in_viewer_continues_a_copy_in_their_own_account() {
    let app = chat_app(2000, 5).await;
    let ann = app.register_ann().await;
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;
    tab.send(send("c1", None, "First question")).await;
    let (q1, _) = exchange(&mut tab).await;
    let conversation = q1["conversationId"].clone();
    app.clock.advance_ms(1000);
    tab.send(send("c2", Some(&conversation), "Second question")).await;
    exchange(&mut tab).await;
    let link = share(&app, &ann, &conversation, None).await;
    let snapshot = assert_ok(shared(&app, &link).await).await["data"].clone();
    let continue_path = format!("/api/shared/{}/continue", token_of(&link));

    // Signed out: refused.
    let response = app.client.post(app.url(&continue_path)).send().await.unwrap();
    assert_error(response, 401, "unauthorized").await;

    let bob = app.register("Bob", "bob@example.com", "password-2").await;
    let (mut bobs_tab, _) = WsClient::ready(&app, &bob.token).await;
    let response = app
        .client
        .post(app.url(&continue_path))
        .bearer_auth(&bob.token)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201);
    let copy = response.json::<Value>().await.unwrap()["data"].clone();
    let original = conversation_of(&app, &ann, &conversation).await;
    assert_ne!(copy["_id"], conversation);
    assert_eq!(
        (
            copy["title"].clone(),
            copy["model"].clone(),
            copy["projectId"].clone()
        ),
        (link["title"].clone(), original["model"].clone(), Value::Null)
    );
    // Bob's tabs learn of it.
    let frame = bobs_tab.expect("conversation.updated").await;
    assert_eq!(frame["conversation"], copy);

    // A chain of new messages with the snapshot's contents, the last one current.
    let stored = conversation_of(&app, &bob, &copy["_id"]).await;
    let messages = stored["messages"].as_array().unwrap();
    let copied: Vec<&str> = messages.iter().map(|m| m["content"].as_str().unwrap()).collect();
    assert_eq!(copied, contents(&snapshot));
    let mut parent = Value::Null;
    for (m, shared) in messages.iter().zip(snapshot["messages"].as_array().unwrap()) {
        assert_eq!(m["parentId"], parent);
        assert_ne!(m["_id"], shared["_id"]);
        assert_eq!(m["role"], shared["role"]);
        parent = m["_id"].clone();
    }
    assert_eq!(stored["currentMessageId"], parent);
    let listed = assert_ok(app.get_auth("/api/conversations", &bob.token).await).await;
    assert_eq!(listed["data"][0]["_id"], copy["_id"]);
    // No generation, so no quota used.
    assert_eq!(app.used_today(&bob.token, "responses").await, json!(0));

    // Bob's follow-up goes on from the copy; Ann's conversation and link do not change.
    bobs_tab
        .send(send("b1", Some(&copy["_id"]), "Third question"))
        .await;
    let (q3, _) = exchange(&mut bobs_tab).await;
    assert_eq!(q3["parentId"], parent);
    assert_eq!(
        conversation_of(&app, &ann, &conversation).await["messages"],
        original["messages"]
    );
    assert_eq!(assert_ok(shared(&app, &link).await).await["data"], snapshot);
    // Ann's conversation stays hers.
    let path = format!("/api/conversations/{}", conversation.as_str().unwrap());
    assert_error(app.get_auth(&path, &bob.token).await, 404, "not_found").await;

    // A revoked link cannot be continued.
    let path = format!("/api/shares/{}", link["_id"].as_str().unwrap());
    assert_ok(app.delete_auth(&path, &ann.token).await).await;
    let response = app
        .client
        .post(app.url(&continue_path))
        .bearer_auth(&bob.token)
        .send()
        .await
        .unwrap();
    assert_error(response, 404, "not_found").await;
}

#[actix_web::test]
async fn public_reads_are_limited_per_address_and_new_links_per_user() {
    let app = spawn_app_with(|s| {
        s.model.demo_tokens_per_sec = 2000;
        s.model.demo_reply_tokens = 5;
        s.rate_limit.shared_reads = 3;
        s.rate_limit.share_creates = 2;
    })
    .await;
    let ann = app.register_ann().await;
    let bob = app.register("Bob", "bob@example.com", "password-2").await;
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;
    tab.send(send("c1", None, "Question")).await;
    let (q1, _) = exchange(&mut tab).await;
    let conversation = q1["conversationId"].clone();

    let link = share(&app, &ann, &conversation, None).await;
    share(&app, &ann, &conversation, None).await;
    let refused = assert_error(
        post_share(&app, &ann, &conversation, None).await,
        429,
        "rate_limited",
    )
    .await;
    assert_eq!(refused["success"], json!(false));
    // Continuing counts among a user's new links.
    let continue_path = format!("/api/shared/{}/continue", token_of(&link));
    let continued = |user: &TestUser| {
        app.client
            .post(app.url(&continue_path))
            .bearer_auth(&user.token)
            .send()
    };
    assert_eq!(continued(&bob).await.unwrap().status(), 201);
    assert_eq!(continued(&bob).await.unwrap().status(), 201);
    assert_error(continued(&bob).await.unwrap(), 429, "rate_limited").await;

    // Reads of the page and of a missing file count alike, per address.
    assert_ok(shared(&app, &link).await).await;
    let missing = format!("/api/shared/{}/files/nonsense", token_of(&link));
    assert_error(get_public(&app, &missing).await, 404, "not_found").await;
    assert_ok(shared(&app, &link).await).await;
    let response = shared(&app, &link).await;
    assert!(response.headers().contains_key("retry-after"));
    assert_error(response, 429, "rate_limited").await;
    // A wrong token is refused as well: guessing is limited too.
    assert_error(
        get_public(&app, "/api/shared/nonsense").await,
        429,
        "rate_limited",
    )
    .await;

    // The next window lets them through again.
    app.advance_minutes(11);
    assert_ok(shared(&app, &link).await).await;
    share(&app, &ann, &conversation, None).await;
}
