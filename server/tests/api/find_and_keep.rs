//! Finding and keeping conversations (issue 31): full-text search over titles and every
//! branch, case- and accent-insensitive with the last word a prefix, only one's own; pin
//! and archive through `PATCH /api/conversations/{id}`, seen by every tab.

use serde_json::{json, Value};

use crate::chat::{send, stub_app_with};
use crate::helpers::{assert_error, assert_ok, TestApp, TestUser};
use crate::versions::{edit, exchange};
use crate::ws::WsClient;

async fn search(app: &TestApp, user: &TestUser, q: &str) -> Value {
    let path = format!("/api/conversations/search?q={}", urlencode(q));
    assert_ok(app.get_auth(&path, &user.token).await).await
}

fn urlencode(q: &str) -> String {
    url::form_urlencoded::byte_serialize(q.as_bytes()).collect()
}

/// The highlighted parts of a hit's snippet (offsets in UTF-16 units).
fn marked(hit: &Value) -> Vec<String> {
    let units: Vec<u16> = hit["snippet"].as_str().unwrap().encode_utf16().collect();
    hit["highlights"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            let (start, end) = (
                h["start"].as_u64().unwrap() as usize,
                h["end"].as_u64().unwrap() as usize,
            );
            String::from_utf16(&units[start..end]).unwrap()
        })
        .collect()
}

fn message_ids(body: &Value) -> Vec<Value> {
    body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["messageId"].clone())
        .collect()
}

async fn patch(app: &TestApp, user: &TestUser, conversation: &Value, body: Value) -> reqwest::Response {
    let path = format!("/api/conversations/{}", conversation.as_str().unwrap());
    app.patch_auth(&path, &user.token, body).await
}

/// The next `conversation.updated` of `conversation` in the tab (titles of others may
/// come first).
async fn updated(tab: &mut WsClient, conversation: &Value) -> Value {
    loop {
        let frames = tab.until("conversation.updated").await;
        let frame = frames.last().unwrap();
        if frame["conversation"]["_id"] == *conversation {
            return frame["conversation"].clone();
        }
    }
}

async fn listed(app: &TestApp, user: &TestUser, query: &str) -> Vec<Value> {
    let body = assert_ok(
        app.get_auth(&format!("/api/conversations{query}"), &user.token)
            .await,
    )
    .await;
    body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["_id"].clone())
        .collect()
}

#[actix_web::test]
async fn search_finds_titles_and_every_branch_without_case_or_accents() {
    let (app, _stub) = stub_app_with(10, |_| {}).await;
    let ann = app.register_ann().await;
    let bob = app.register("Bob", "bob@example.com", "bob-password-1").await;
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;

    tab.send(send("c1", None, "Az árvíztűrő tükörfúrógép a **padláson** van"))
        .await;
    let (q1, a1) = exchange(&mut tab).await;
    let conversation = q1["conversationId"].clone();
    // A new version of the question: the first one is off the shown branch, still found.
    app.clock.advance_ms(1000);
    tab.send(edit("c2", &conversation, &q1["_id"], "Budapest in spring"))
        .await;
    let (q2, _) = exchange(&mut tab).await;

    for q in ["arvizturo", "ÁRVÍZTŰRŐ", "Árvíztűrő tükörf", "padlas"] {
        let body = search(&app, &ann, q).await;
        assert_eq!(message_ids(&body), [q1["_id"].clone()], "{q}: {body}");
        let hit = &body["data"][0];
        assert_eq!(hit["conversationId"], conversation);
        assert_eq!(hit["archived"], json!(false));
        assert!(!hit["snippet"].as_str().unwrap().contains("**"), "{hit}");
    }
    let hit = &search(&app, &ann, "ARVIZTURO tukorfurog").await["data"][0];
    assert_eq!(marked(hit), ["árvíztűrő", "tükörfúrógép"], "{hit}");
    // Every word is required, and only the last is a prefix.
    assert_eq!(search(&app, &ann, "árvíztűrő budapest").await["data"], json!([]));
    assert_eq!(search(&app, &ann, "arvizt tukorfurogep").await["data"], json!([]));
    assert_eq!(
        message_ids(&search(&app, &ann, "budap").await),
        [q2["_id"].clone()]
    );
    // A streamed answer is found once complete (both answers say the same).
    let answers = message_ids(&search(&app, &ann, "stub model").await);
    assert_eq!(answers.len(), 2, "{answers:?}");
    assert!(answers.contains(&a1["_id"]));

    // A title: the hit has no message.
    let renamed = patch(&app, &ann, &conversation, json!({"title": "Nyári tervek"})).await;
    assert_ok(renamed).await;
    let body = search(&app, &ann, "nyari").await;
    assert_eq!(body["data"][0]["messageId"], Value::Null, "{body}");
    assert_eq!(body["data"][0]["title"], json!("Nyári tervek"));
    assert_eq!(marked(&body["data"][0]), ["Nyári"]);

    // Never another user's.
    for q in ["arvizturo", "nyari", "stub"] {
        assert_eq!(search(&app, &bob, q).await["data"], json!([]), "{q}");
    }

    // An archived conversation's hits are marked; a deleted one's are gone.
    assert_ok(patch(&app, &ann, &conversation, json!({"archived": true})).await).await;
    assert_eq!(
        search(&app, &ann, "arvizturo").await["data"][0]["archived"],
        json!(true)
    );
    let path = format!("/api/conversations/{}", conversation.as_str().unwrap());
    assert_ok(app.delete_auth(&path, &ann.token).await).await;
    for q in ["arvizturo", "nyari", "stub"] {
        assert_eq!(search(&app, &ann, q).await["data"], json!([]), "{q}");
    }
}

#[actix_web::test]
async fn search_pages_by_cursor_best_first() {
    let (app, _stub) = stub_app_with(10, |_| {}).await;
    let ann = app.register_ann().await;
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;
    for (i, text) in [
        "lighthouse",
        "lighthouse keeper at the lighthouse",
        "a lighthouse",
    ]
    .iter()
    .enumerate()
    {
        app.clock.advance_ms(1000);
        tab.send(send(&format!("c{i}"), None, text)).await;
        exchange(&mut tab).await;
    }
    let path = "/api/conversations/search?q=lighthouse&limit=2";
    let first = assert_ok(app.get_auth(path, &ann.token).await).await;
    assert_eq!(first["data"].as_array().unwrap().len(), 2);
    assert_eq!(first["nextCursor"], json!("2"));
    let next = format!("{path}&cursor=2");
    let second = assert_ok(app.get_auth(&next, &ann.token).await).await;
    assert_eq!(second["data"].as_array().unwrap().len(), 1);
    assert_eq!(second["nextCursor"], Value::Null);
    let mut all = message_ids(&first);
    all.extend(message_ids(&second));
    all.sort_by_key(|v| v.to_string());
    all.dedup();
    assert_eq!(all.len(), 3, "no hit twice");
}

#[actix_web::test]
async fn a_bad_search_is_refused_naming_its_field() {
    let (app, _stub) = stub_app_with(10, |_| {}).await;
    let ann = app.register_ann().await;
    for path in [
        "/api/conversations/search",
        "/api/conversations/search?q=",
        "/api/conversations/search?q=%20%3F%21",
    ] {
        let body = assert_error(app.get_auth(path, &ann.token).await, 400, "field_required").await;
        assert_eq!(body["field"], json!("q"), "{path}");
    }
    let long = format!("/api/conversations/search?q={}", "a".repeat(201));
    let body = assert_error(app.get_auth(&long, &ann.token).await, 400, "field_too_long").await;
    assert_eq!(body["field"], json!("q"));
    // In the user's language.
    assert_ok(
        app.put_auth("/api/settings", &ann.token, json!({"language": "hu-HU"}))
            .await,
    )
    .await;
    let hu = app.get_auth("/api/conversations/search?q=", &ann.token).await;
    let body = assert_error(hu, 400, "field_required").await;
    assert_eq!(body["message"], json!("A keresett szöveg megadása kötelező"));
    let bad = "/api/conversations/search?q=x&cursor=soon";
    let body = assert_error(app.get_auth(bad, &ann.token).await, 400, "validation_error").await;
    assert_eq!(body["field"], json!("cursor"));
    let anonymous = app
        .client
        .get(app.url("/api/conversations/search?q=x"))
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous.status(), 401);
}

#[actix_web::test]
async fn pinned_come_first_archived_are_apart_and_every_tab_follows() {
    let (app, _stub) = stub_app_with(10, |_| {}).await;
    let ann = app.register_ann().await;
    let bob = app.register("Bob", "bob@example.com", "bob-password-1").await;
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;
    let (mut other_tab, _) = WsClient::ready(&app, &ann.token).await;
    let mut ids = Vec::new();
    for i in 0..3 {
        app.clock.advance_ms(1000);
        tab.send(send(&format!("c{i}"), None, &format!("Question {i}")))
            .await;
        let (question, _) = exchange(&mut tab).await;
        other_tab.until("message.completed").await;
        ids.push(question["conversationId"].clone());
    }
    let (oldest, middle, newest) = (ids[0].clone(), ids[1].clone(), ids[2].clone());
    assert_eq!(
        listed(&app, &ann, "").await,
        [newest.clone(), middle.clone(), oldest.clone()]
    );

    // Pinning moves it first without touching its time; the other tab hears it.
    let body = assert_ok(patch(&app, &ann, &oldest, json!({"pinned": true})).await).await;
    assert_eq!(
        (body["data"]["pinned"].clone(), body["data"]["archived"].clone()),
        (json!(true), json!(false))
    );
    assert_eq!(updated(&mut other_tab, &oldest).await["pinned"], json!(true));
    assert_eq!(
        listed(&app, &ann, "").await,
        [oldest.clone(), newest.clone(), middle.clone()]
    );
    // Paged one by one across the pinned one, no row twice or missed.
    let mut paged = Vec::new();
    let mut cursor = String::new();
    loop {
        let path = format!("/api/conversations?limit=1&cursor={cursor}");
        let body = assert_ok(app.get_auth(&path, &ann.token).await).await;
        paged.extend(body["data"].as_array().unwrap().iter().map(|c| c["_id"].clone()));
        match body["nextCursor"].as_str() {
            Some(next) => cursor = next.to_owned(),
            None => break,
        }
    }
    assert_eq!(paged, [oldest.clone(), newest.clone(), middle.clone()]);

    // Archiving takes it out of the list into the archived one; unarchiving brings it back.
    let body = assert_ok(patch(&app, &ann, &newest, json!({"archived": true})).await).await;
    assert_eq!(body["data"]["archived"], json!(true));
    assert_eq!(updated(&mut other_tab, &newest).await["archived"], json!(true));
    assert_eq!(listed(&app, &ann, "").await, [oldest.clone(), middle.clone()]);
    assert_eq!(listed(&app, &ann, "?archived=true").await, [newest.clone()]);
    assert_ok(patch(&app, &ann, &newest, json!({"archived": false, "pinned": false})).await).await;
    assert_eq!(listed(&app, &ann, "?archived=true").await, Vec::<Value>::new());
    assert_eq!(
        listed(&app, &ann, "").await,
        [oldest.clone(), newest.clone(), middle.clone()]
    );

    // A rename still works alone, and moves the conversation up among the unpinned.
    app.clock.advance_ms(1000);
    let body = assert_ok(patch(&app, &ann, &middle, json!({"title": "Renamed"})).await).await;
    assert_eq!(
        (body["data"]["title"].clone(), body["data"]["pinned"].clone()),
        (json!("Renamed"), json!(false))
    );
    assert_eq!(
        listed(&app, &ann, "").await,
        [oldest.clone(), middle.clone(), newest.clone()]
    );

    // Refusals change nothing.
    let body = assert_error(patch(&app, &ann, &middle, json!({})).await, 400, "field_required").await;
    assert_eq!(body["field"], json!("title|pinned|archived"));
    assert_error(
        patch(&app, &ann, &middle, json!({"pinned": "yes"})).await,
        400,
        "validation_error",
    )
    .await;
    let body = assert_error(
        patch(&app, &ann, &middle, json!({"title": " ", "pinned": true})).await,
        400,
        "field_required",
    )
    .await;
    assert_eq!(body["field"], json!("title"));
    assert_error(
        patch(&app, &bob, &middle, json!({"pinned": true})).await,
        404,
        "not_found",
    )
    .await;
    assert_error(
        patch(&app, &ann, &json!("no-such-id"), json!({"archived": true})).await,
        404,
        "not_found",
    )
    .await;
    let stored = assert_ok(
        app.get_auth(
            &format!("/api/conversations/{}", middle.as_str().unwrap()),
            &ann.token,
        )
        .await,
    )
    .await;
    assert_eq!(
        (
            stored["data"]["pinned"].clone(),
            stored["data"]["archived"].clone()
        ),
        (json!(false), json!(false))
    );
    assert_eq!(listed(&app, &ann, "").await, [oldest, middle, newest]);
    let bad = assert_error(
        app.get_auth("/api/conversations?cursor=12_x", &ann.token).await,
        400,
        "validation_error",
    )
    .await;
    assert_eq!(bad["field"], json!("cursor"));
}
