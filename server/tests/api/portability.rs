//! Export and import (issue 31): the account as a zip streamed to its owner, with every
//! part of it and nothing of anyone else's; conversations imported from our own export
//! and from ChatGPT's, branches and the shown branch kept; bad or oversized files refused
//! with nothing imported.

use std::collections::{BTreeMap, HashMap};
use std::io::{Cursor, Read};

use reqwest::multipart::{Form, Part};
use serde_json::{json, Value};

use crate::chat::{chat_app, send};
use crate::files::{send_with, uploaded};
use crate::helpers::{assert_error, assert_ok, spawn_app_with, TestApp, TestUser};
use crate::ws::WsClient;

/// The ChatGPT export written by hand for these tests (see the file for its tree).
const CHATGPT: &str = include_str!("../fixtures/chatgpt-conversations.json");

/// Every entry of a zip, by name.
fn unzip(bytes: &[u8]) -> BTreeMap<String, Vec<u8>> {
    let mut archive = zip::ZipArchive::new(Cursor::new(bytes)).expect("a zip");
    let mut entries = BTreeMap::new();
    for i in 0..archive.len() {
        let mut entry = archive.by_index(i).unwrap();
        let mut content = Vec::new();
        entry.read_to_end(&mut content).unwrap();
        entries.insert(entry.name().unwrap().into_owned(), content);
    }
    entries
}

fn text(entries: &BTreeMap<String, Vec<u8>>, name: &str) -> String {
    String::from_utf8(entries[name].clone()).unwrap()
}

fn json_of(entries: &BTreeMap<String, Vec<u8>>, name: &str) -> Value {
    serde_json::from_slice(&entries[name]).unwrap_or_else(|e| panic!("{name}: {e}"))
}

async fn export(app: &TestApp, user: &TestUser) -> Vec<u8> {
    let response = app.get_auth("/api/account/export", &user.token).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "application/zip");
    let disposition = response.headers()["content-disposition"]
        .to_str()
        .unwrap()
        .to_owned();
    let today = chrono::DateTime::from_timestamp_millis(app.clock_now())
        .unwrap()
        .format("%Y-%m-%d");
    assert_eq!(
        disposition,
        format!("attachment; filename=\"chat-export-{today}.zip\"")
    );
    response.bytes().await.unwrap().to_vec()
}

async fn import(app: &TestApp, user: &TestUser, name: &str, bytes: Vec<u8>) -> reqwest::Response {
    let form = Form::new().part("file", Part::bytes(bytes).file_name(name.to_owned()));
    app.client
        .post(app.url("/api/conversations/import"))
        .bearer_auth(&user.token)
        .multipart(form)
        .send()
        .await
        .unwrap()
}

/// The user's conversations, newest first (archived ones too).
async fn conversations(app: &TestApp, user: &TestUser) -> Vec<Value> {
    let list = assert_ok(app.get_auth("/api/conversations?limit=100", &user.token).await).await;
    list["data"].as_array().unwrap().clone()
}

async fn conversation(app: &TestApp, user: &TestUser, id: &Value) -> Value {
    let path = format!("/api/conversations/{}", id.as_str().unwrap());
    assert_ok(app.get_auth(&path, &user.token).await).await["data"].clone()
}

/// Sends and waits for the answer (and a new conversation's title); the question and
/// answer.
async fn exchange(tab: &mut WsClient, frame: Value) -> (Value, Value) {
    let new = frame["conversationId"].is_null();
    tab.send(frame).await;
    let frames = tab.until("message.completed").await;
    if new && !frames.iter().any(|f| f["type"] == "conversation.updated") {
        tab.until("conversation.updated").await;
    }
    let created: Vec<&Value> = frames.iter().filter(|f| f["type"] == "message.created").collect();
    (created[0]["message"].clone(), created[1]["message"].clone())
}

/// A conversation as content, so an import can be compared with what it came from: its
/// title, each message's role and text with the text of the message it follows, and the
/// texts of the branch shown.
fn shape(conversation: &Value) -> Value {
    let messages = conversation["messages"].as_array().unwrap();
    let by_id: HashMap<&str, &Value> = messages.iter().map(|m| (m["_id"].as_str().unwrap(), m)).collect();
    let text_of = |id: &Value| {
        id.as_str()
            .map(|id| by_id[id]["content"].clone())
            .unwrap_or(Value::Null)
    };
    let mut links: Vec<Value> = messages
        .iter()
        .map(|m| json!([m["role"], m["content"], text_of(&m["parentId"])]))
        .collect();
    links.sort_by_key(|l| l.to_string());
    let mut shown = Vec::new();
    let mut next = conversation["currentMessageId"].clone();
    while let Some(id) = next.as_str() {
        shown.push(by_id[id]["content"].clone());
        next = by_id[id]["parentId"].clone();
    }
    shown.reverse();
    json!({"title": conversation["title"], "messages": links, "shown": shown})
}

/// Ann (paying, with an invoice) with two conversations: one with an image, one with an
/// edited question (two branches, the edit shown). Bob has his own of each.
struct Accounts {
    app: TestApp,
    ann: TestUser,
    bob: TestUser,
    image: Value,
    bobs_image: Value,
    /// Ann's conversation with versions; the question replaced, and its replacement.
    branched: Value,
    replaced: Value,
    edited: Value,
}

async fn accounts() -> Accounts {
    let app = chat_app(2000, 5).await;
    let ann = app.register_paying("ann@example.com").await;
    let bob = app.register("Bob", "bob@example.com", "secret1").await;

    let started = json!({"planType": "base", "currency": "EUR"});
    let payment = assert_ok(
        app.put_auth("/api/subscription/change", &ann.token, started)
            .await,
    )
    .await;
    let paid = app
        .client
        .post(app.url(&format!(
            "/api/payments/demo/{}/pay",
            payment["payment"]["_id"].as_str().unwrap()
        )))
        .bearer_auth(&ann.token)
        .send()
        .await
        .unwrap();
    assert_eq!(paid.status(), 303);

    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;
    let image = uploaded(&app, &ann, "cat.png").await;
    exchange(&mut tab, send_with("a1", "What is in this picture?", &[&image])).await;
    app.clock.advance_ms(1000);
    let (first, _) = exchange(&mut tab, send("a2", None, "Alpha question")).await;
    let branched = first["conversationId"].clone();
    app.clock.advance_ms(1000);
    let (replaced, _) = exchange(&mut tab, send("a3", Some(&branched), "Beta question")).await;
    app.clock.advance_ms(1000);
    let mut edit = send("a4", Some(&branched), "Gamma question");
    edit["editOf"] = replaced["_id"].clone();
    let (edited, _) = exchange(&mut tab, edit).await;

    let (mut bobs_tab, _) = WsClient::ready(&app, &bob.token).await;
    let bobs_image = uploaded(&app, &bob, "bobs-dog.png").await;
    exchange(
        &mut bobs_tab,
        send_with("b1", "Bob's secret question", &[&bobs_image]),
    )
    .await;
    Accounts {
        app,
        ann,
        bob,
        image,
        bobs_image,
        branched,
        replaced,
        edited,
    }
}

#[actix_web::test]
async fn the_export_holds_every_part_of_the_account_and_nothing_of_anyone_elses() {
    let a = accounts().await;
    let (app, ann) = (&a.app, &a.ann);
    let entries = unzip(&export(app, ann).await);

    // conversations.json: both conversations, every message of every branch, as stored.
    let all = json_of(&entries, "conversations.json");
    assert_eq!(
        (all["format"].clone(), all["version"].clone()),
        (json!("chat-export"), json!(1))
    );
    let exported = all["conversations"].as_array().unwrap();
    assert_eq!(exported.len(), 2);
    for listed in conversations(app, ann).await {
        let stored = conversation(app, ann, &listed["_id"]).await;
        let out = exported.iter().find(|c| c["_id"] == listed["_id"]).unwrap();
        for field in [
            "title",
            "model",
            "createdAt",
            "updatedAt",
            "currentMessageId",
            "pinned",
            "archived",
        ] {
            assert_eq!(out[field], stored[field], "{field}");
        }
        let messages = stored["messages"].as_array().unwrap();
        assert_eq!(out["messages"].as_array().unwrap().len(), messages.len());
        for (out, stored) in out["messages"].as_array().unwrap().iter().zip(messages) {
            for field in ["_id", "parentId", "role", "content", "status", "createdAt"] {
                assert_eq!(out[field], stored[field], "{field}");
            }
        }
    }
    let branched = exported.iter().find(|c| c["_id"] == a.branched).unwrap();
    let versions: Vec<&Value> = branched["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["parentId"] == a.replaced["parentId"] && m["role"] == "user")
        .collect();
    assert_eq!(versions.len(), 2, "both versions of the edited question");
    let pictured = exported.iter().find(|c| c["_id"] != a.branched).unwrap();
    let attachment = &pictured["messages"][0]["attachments"][0];
    let path = format!("files/{}-cat.png", a.image["_id"].as_str().unwrap());
    assert_eq!(attachment["_id"], a.image["_id"]);
    assert_eq!(attachment["path"], json!(path));

    // The image, as its owner downloads it.
    let original = app
        .get_auth(a.image["url"].as_str().unwrap(), &ann.token)
        .await
        .bytes()
        .await
        .unwrap();
    assert_eq!(entries[&path], original.to_vec());

    // One Markdown file per conversation: the branch shown, not the version replaced.
    let markdown: Vec<&String> = entries
        .keys()
        .filter(|k| k.starts_with("conversations/"))
        .collect();
    assert_eq!(markdown.len(), 2, "{markdown:?}");
    let branch_md = markdown
        .iter()
        .find(|k| k.ends_with(&format!("-{}.md", a.branched.as_str().unwrap())))
        .expect("the branched conversation's file");
    let md = text(&entries, branch_md);
    assert!(
        md.contains("Alpha question") && md.contains("Gamma question"),
        "{md}"
    );
    assert!(!md.contains("Beta question"), "{md}");
    assert!(
        md.contains(&format!("# {}", branched["title"].as_str().unwrap())),
        "{md}"
    );
    let pictured_md = text(&entries, markdown.iter().find(|k| **k != *branch_md).unwrap());
    assert!(pictured_md.contains(&format!("(<../{path}>)")), "{pictured_md}");

    // Profile and settings; billing info, subscription, payments and invoices.
    let profile = json_of(&entries, "profile.json");
    assert_eq!(profile["user"]["_id"], json!(ann.id));
    assert_eq!(profile["user"]["email"], json!("ann@example.com"));
    assert_eq!(profile["user"]["settings"]["language"], json!("en-US"));
    let billing = json_of(&entries, "billing.json");
    assert_eq!(billing["billingInfo"]["city"], json!("Budapest"));
    assert_eq!(billing["subscription"]["data"]["planType"], json!("base"));
    assert_eq!(billing["payments"][0]["status"], json!("succeeded"));
    let number = billing["invoices"][0]["number"].as_str().unwrap();
    let pdf = &entries[&format!("invoices/{number}.pdf")];
    let served = app
        .get_auth(billing["invoices"][0]["pdfUrl"].as_str().unwrap(), &ann.token)
        .await
        .bytes()
        .await
        .unwrap();
    assert!(pdf.starts_with(b"%PDF-"));
    assert_eq!(pdf.len(), served.len());

    let readme = text(&entries, "README.txt");
    assert!(readme.contains("conversations.json") && readme.contains("parentId"));
    let manifest = json_of(&entries, "manifest.json");
    assert_eq!(
        manifest["contents"],
        json!({"conversations": 2, "messages": 8, "files": 1, "invoices": 1, "missingFiles": []})
    );

    // Nothing of Bob's: no text, no file, not his name or address.
    let bobs_file = a.bobs_image["_id"].as_str().unwrap();
    for (name, content) in &entries {
        let content = String::from_utf8_lossy(content);
        for bobs in ["Bob", "bob@example.com", "secret question", bobs_file, &a.bob.id] {
            assert!(
                !name.contains(bobs) && !content.contains(bobs),
                "{bobs} in {name}"
            );
        }
    }
    assert!(entries.keys().all(|k| !k.contains(bobs_file)));
    // Bob's export is his alone, too.
    let bobs = unzip(&export(app, &a.bob).await);
    let bobs_conversations = json_of(&bobs, "conversations.json");
    assert_eq!(bobs_conversations["conversations"].as_array().unwrap().len(), 1);
    assert!(!String::from_utf8_lossy(&bobs["conversations.json"]).contains("Alpha question"));
}

#[actix_web::test]
async fn export_and_import_need_a_login_and_exports_are_rate_limited() {
    let app = spawn_app_with(|s| s.rate_limit.portability = 1).await;
    let ann = app.register_ann().await;
    let response = app
        .client
        .get(app.url("/api/account/export"))
        .send()
        .await
        .unwrap();
    assert_error(response, 401, "unauthorized").await;
    let form = Form::new().part("file", Part::bytes(b"[]".to_vec()).file_name("c.json"));
    let response = app
        .client
        .post(app.url("/api/conversations/import"))
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert_error(response, 401, "unauthorized").await;

    export(&app, &ann).await;
    let again = app.get_auth("/api/account/export", &ann.token).await;
    assert!(again.headers().contains_key("retry-after"));
    assert_error(again, 429, "rate_limited").await;
    // Imports have their own budget; another user, theirs.
    let imported = assert_ok(import(&app, &ann, "c.json", b"[]".to_vec()).await).await;
    assert_eq!(imported["data"], json!({"conversations": 0, "messages": 0}));
    assert_error(
        import(&app, &ann, "c.json", b"[]".to_vec()).await,
        429,
        "rate_limited",
    )
    .await;
    let bob = app.register("Bob", "bob@example.com", "secret1").await;
    export(&app, &bob).await;
}

#[actix_web::test]
async fn our_own_export_imports_back_with_its_branches_and_shown_branch() {
    let a = accounts().await;
    let (app, ann) = (&a.app, &a.ann);
    let zip = export(app, ann).await;
    let json = unzip(&zip)["conversations.json"].clone();
    let mut originals = Vec::new();
    for listed in conversations(app, ann).await {
        originals.push(shape(&conversation(app, ann, &listed["_id"]).await));
    }
    originals.sort_by_key(|c| c.to_string());

    // Into Bob's account, from conversations.json alone; every id new, and neither
    // pinned nor archived whatever the file says.
    let mut file: Value = serde_json::from_slice(&json).unwrap();
    for c in file["conversations"].as_array_mut().unwrap() {
        c["pinned"] = json!(true);
        c["archived"] = json!(true);
    }
    let json = file.to_string().into_bytes();
    let (mut tab, _) = WsClient::ready(app, &a.bob.token).await;
    let before = conversations(app, &a.bob).await.len();
    let answer = assert_ok(import(app, &a.bob, "conversations.json", json).await).await;
    assert_eq!(
        answer,
        json!({"success": true, "data": {"conversations": 2, "messages": 8}})
    );
    let listed = conversations(app, &a.bob).await;
    assert_eq!(listed.len(), before + 2);
    let mut imported = Vec::new();
    for c in &listed {
        let stored = conversation(app, &a.bob, &c["_id"]).await;
        if stored["messages"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["content"] == "Bob's secret question")
        {
            continue;
        }
        assert_eq!(
            (c["pinned"].clone(), c["archived"].clone()),
            (json!(false), json!(false))
        );
        assert!(c["currentMessageId"].is_string());
        for m in stored["messages"].as_array().unwrap() {
            assert_ne!(m["_id"], a.edited["_id"]);
            assert_ne!(m["_id"], a.replaced["_id"]);
        }
        assert_ne!(c["_id"], a.branched);
        imported.push(shape(&stored));
    }
    imported.sort_by_key(|c| c.to_string());
    assert_eq!(imported, originals);
    // Bob's tabs hear of them.
    let mut announced = Vec::new();
    while announced.len() < 2 {
        let frame = tab.expect("conversation.updated").await;
        announced.push(frame["conversation"]["_id"].clone());
    }

    // A failed answer without text stays, the parent of the question asked again.
    let failed = json!({"format": "chat-export", "version": 1, "conversations": [{"_id": "c", "title": "Retry",
        "currentMessageId": "a2", "messages": [
            {"_id": "q1", "role": "user", "content": "First try"},
            {"_id": "a1", "parentId": "q1", "role": "assistant", "content": "", "status": "error"},
            {"_id": "q2", "parentId": "a1", "role": "user", "content": "Second try"},
            {"_id": "a2", "parentId": "q2", "role": "assistant", "content": "Done."}]}]});
    let answer = assert_ok(import(app, &a.bob, "c.json", failed.to_string().into()).await).await;
    assert_eq!(answer["data"], json!({"conversations": 1, "messages": 4}));
    let retry = conversations(app, &a.bob)
        .await
        .into_iter()
        .find(|c| c["title"] == "Retry")
        .unwrap();
    let retry = conversation(app, &a.bob, &retry["_id"]).await;
    assert_eq!(
        shape(&retry)["shown"],
        json!(["First try", "", "Second try", "Done."])
    );
    assert_eq!(retry["messages"][1]["status"], json!("error"));

    // The whole zip too, into Ann's own account (new copies beside the originals).
    let answer = assert_ok(import(app, ann, "chat-export.zip", zip).await).await;
    assert_eq!(answer["data"], json!({"conversations": 2, "messages": 8}));
    assert_eq!(conversations(app, ann).await.len(), 4);
}

/// What the fixture holds, by the rules of an import (see the fixture):
/// - "Trip to Budapest": the first answer regenerated (two versions, the second shown),
///   its follow-up answered after a tool call (the tool left out, the answer linked to
///   the question), system and hidden messages left out;
/// - "Search, then answer": an answer split by a tool call joined into one; an image's
///   text kept without the image; a code message left out.
#[actix_web::test]
async fn a_chatgpt_export_keeps_its_branches_titles_and_shown_branch() {
    let app = spawn_app_with(|_| {}).await;
    let ann = app.register_ann().await;
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;
    let answer = assert_ok(import(&app, &ann, "conversations.json", CHATGPT.into()).await).await;
    assert_eq!(answer["data"], json!({"conversations": 2, "messages": 7}));

    let listed = conversations(&app, &ann).await;
    let titles: Vec<&Value> = listed.iter().map(|c| &c["title"]).collect();
    // Kept in their own time order: the later one first.
    assert_eq!(
        titles,
        [&json!("Search, then answer"), &json!("Trip to Budapest")]
    );
    let trip = conversation(&app, &ann, &listed[1]["_id"]).await;
    assert_eq!(trip["model"], json!("gpt-4o"));
    assert_eq!(trip["createdAt"], json!("2024-05-01T10:00:00+00:00"));
    let mut links = vec![
        json!(["assistant", "Because the thermal baths are there.", "Why Buda?"]),
        json!(["assistant", "Stay in Buda.", "Where should I stay in Budapest?"]),
        json!(["assistant", "Stay in Pest.", "Where should I stay in Budapest?"]),
        json!(["user", "Where should I stay in Budapest?", null]),
        json!(["user", "Why Buda?", "Stay in Buda."]),
    ];
    links.sort_by_key(|l| l.to_string());
    let shown = [
        "Where should I stay in Budapest?",
        "Stay in Buda.",
        "Why Buda?",
        "Because the thermal baths are there.",
    ];
    assert_eq!(
        shape(&trip),
        json!({"title": "Trip to Budapest", "messages": links, "shown": shown})
    );
    let messages = trip["messages"].as_array().unwrap();
    let answer = messages.iter().find(|m| m["content"] == "Stay in Pest.").unwrap();
    assert_eq!(answer["model"], json!("gpt-4o"));
    assert_eq!(answer["status"], json!("complete"));
    // A reply is newer than what it follows, whatever the file said.
    for m in messages {
        if let Some(parent) = m["parentId"].as_str() {
            let parent = messages.iter().find(|p| p["_id"] == parent).unwrap();
            assert!(m["createdAt"].as_str() > parent["createdAt"].as_str(), "{m}");
        }
    }

    let search = conversation(&app, &ann, &listed[0]["_id"]).await;
    assert_eq!(
        shape(&search)["shown"],
        json!([
            "What does this sign say?",
            "Let me look that up.\n\nIt says: no swimming."
        ])
    );

    // Both reach Ann's tabs.
    tab.expect("conversation.updated").await;
    tab.expect("conversation.updated").await;
}

/// A ChatGPT export of `n` conversations, each a question and an answer.
fn chatgpt_conversations(n: usize, question: &str) -> Vec<Value> {
    (0..n)
        .map(|i| {
            json!({"title": format!("Chat {i}"), "create_time": 1_714_557_600.0, "current_node": "a",
                   "mapping": {
                       "q": {"id": "q", "parent": null, "children": ["a"], "message": {"author": {"role": "user"},
                             "content": {"content_type": "text", "parts": [question]}, "create_time": 1_714_557_600.0}},
                       "a": {"id": "a", "parent": "q", "children": [], "message": {"author": {"role": "assistant"},
                             "content": {"content_type": "text", "parts": ["An answer."]}, "create_time": 1_714_557_601.0}}}})
        })
        .collect()
}

#[actix_web::test]
async fn bad_wrong_or_oversized_files_are_refused_and_nothing_is_imported() {
    let app = spawn_app_with(|s| s.rate_limit.portability = 100).await;
    // 100,001 messages over 1,000 conversations (made first: it takes a while, and a
    // connection left idle meanwhile would be closed under the next request).
    let mut many = chatgpt_conversations(1000, "Q");
    {
        let mapping = many[0]["mapping"].as_object_mut().unwrap();
        let mut parent = "a".to_owned();
        for i in 0..98_001 {
            let key = format!("m{i}");
            let role = if i % 2 == 0 { "user" } else { "assistant" };
            mapping.insert(
                key.clone(),
                json!({"parent": parent, "message": {"author": {"role": role},
                "content": {"content_type": "text", "parts": ["m"]}}}),
            );
            parent = key;
        }
    }
    let many = json!(many).to_string().into_bytes();
    let ann = app.register_ann().await;
    assert_ok(import(&app, &ann, "c.json", CHATGPT.into()).await).await;
    let before = conversations(&app, &ann).await.len();

    let too_long = "x".repeat(app.state.settings.chat.max_message_chars + 1);
    let mut one_bad = chatgpt_conversations(2, "Fine");
    one_bad[1]["mapping"]["q"]["message"]["content"]["parts"] = json!([too_long]);
    let mut a_loop = chatgpt_conversations(1, "Loop");
    a_loop[0]["mapping"]["q"]["parent"] = json!("a");
    let mut unknown_parent = chatgpt_conversations(1, "Orphan");
    unknown_parent[0]["mapping"]["a"]["parent"] = json!("nowhere");
    let ours_with_a_bad_field = json!({"format": "chat-export", "version": 1,
        "conversations": [{"_id": "c", "messages": [{"_id": 5, "role": "user", "content": "x"}]}]});
    let ours_with_one_id_twice = json!({"format": "chat-export", "version": 1,
        "conversations": [{"_id": "c", "messages": [{"_id": "m", "role": "user", "content": "x"},
                                                     {"_id": "m", "role": "assistant", "content": "y"}]}]});
    let cases: Vec<(&str, Vec<u8>, u16, &str)> = vec![
        (
            "not JSON",
            b"{\"format\": \"chat-export\", ".to_vec(),
            400,
            "import_invalid",
        ),
        (
            "an object of another format",
            br#"{"hello": "world"}"#.to_vec(),
            400,
            "import_invalid",
        ),
        (
            "a newer format",
            br#"{"format": "chat-export", "version": 99, "conversations": []}"#.to_vec(),
            400,
            "import_invalid",
        ),
        (
            "a field of the wrong type",
            ours_with_a_bad_field.to_string().into(),
            400,
            "import_invalid",
        ),
        (
            "ChatGPT without its mapping",
            br#"[{"title": "x"}]"#.to_vec(),
            400,
            "import_invalid",
        ),
        ("an array of numbers", b"[1, 2]".to_vec(), 400, "import_invalid"),
        (
            "a parent loop",
            json!(a_loop).to_string().into(),
            400,
            "import_invalid",
        ),
        (
            "one message id twice",
            ours_with_one_id_twice.to_string().into(),
            400,
            "import_invalid",
        ),
        (
            "an unknown parent",
            json!(unknown_parent).to_string().into(),
            400,
            "import_invalid",
        ),
        (
            "a zip without conversations.json",
            zip_of("README.txt", b"nothing here"),
            400,
            "import_invalid",
        ),
        (
            "a message too long, after a good one",
            json!(one_bad).to_string().into(),
            400,
            "message_too_long",
        ),
        (
            "1001 conversations",
            json!(chatgpt_conversations(1001, "Hi")).to_string().into(),
            400,
            "import_too_many_conversations",
        ),
        // (A plain upload that large is refused while it is sent: the client sees the
        // connection close before it could read the answer.)
        (
            "a zip's conversations.json over 50 MB",
            zip_of("conversations.json", &vec![b' '; 50 * 1024 * 1024 + 1]),
            413,
            "file_too_large",
        ),
    ];
    for (case, bytes, status, code) in cases {
        let error = assert_error(import(&app, &ann, "c.json", bytes).await, status, code).await;
        assert_eq!(error["field"], json!("file"), "{case}");
        assert_eq!(conversations(&app, &ann).await.len(), before, "{case}");
    }

    let error = assert_error(
        import(&app, &ann, "c.json", many).await,
        400,
        "import_too_many_messages",
    )
    .await;
    assert_eq!(error["field"], json!("file"));
    assert_eq!(conversations(&app, &ann).await.len(), before);

    // Another method on the path is a 404, as everywhere.
    assert_error(
        app.get_auth("/api/conversations/import", &ann.token).await,
        404,
        "not_found",
    )
    .await;

    // Not a multipart upload at all.
    let response = app
        .client
        .post(app.url("/api/conversations/import"))
        .bearer_auth(&ann.token)
        .json(&json!([]))
        .send()
        .await
        .unwrap();
    assert_error(response, 400, "file_upload_error").await;
}

/// A zip of one entry.
fn zip_of(name: &str, content: &[u8]) -> Vec<u8> {
    let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let deflated =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    zip.start_file(name, deflated).unwrap();
    std::io::Write::write_all(&mut zip, content).unwrap();
    zip.finish().unwrap().into_inner()
}
