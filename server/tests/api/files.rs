//! Attachments (`/api/files` and `chat.send` with `attachments`): uploads checked by
//! content and by the plan's limits, only their owner reaching them, images carried to
//! every tab and to the model, and files leaving the store with what they belong to.

use std::io::Cursor;
use std::time::Duration;

use reqwest::multipart::{Form, Part};
use serde_json::{json, Value};

use crate::chat::{send, stub_app_with};
use crate::helpers::{assert_error, assert_ok, spawn_app, spawn_app_with, TestApp, TestUser};
use crate::ws::WsClient;

/// A PNG with transparency (stored as PNG).
fn png(width: u32, height: u32) -> Vec<u8> {
    let img = image::RgbaImage::from_pixel(width, height, image::Rgba([200, 10, 10, 128]));
    let mut out = Cursor::new(Vec::new());
    img.write_to(&mut out, image::ImageFormat::Png).unwrap();
    out.into_inner()
}

/// PNG's chunk checksum (so an edited header is still a valid PNG header).
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = 0xffff_ffffu32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xedb8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

async fn upload(app: &TestApp, token: &str, name: &str, bytes: Vec<u8>) -> reqwest::Response {
    let form = Form::new().part("file", Part::bytes(bytes).file_name(name.to_owned()));
    app.client
        .post(app.url("/api/files"))
        .bearer_auth(token)
        .multipart(form)
        .send()
        .await
        .unwrap()
}

/// Uploads a 64×48 PNG and answers its file object.
pub(crate) async fn uploaded(app: &TestApp, user: &TestUser, name: &str) -> Value {
    let response = upload(app, &user.token, name, png(64, 48)).await;
    assert_eq!(response.status(), 201);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["success"], json!(true));
    body["data"].clone()
}

pub(crate) fn send_with(client_id: &str, content: &str, files: &[&Value]) -> Value {
    let mut frame = send(client_id, None, content);
    frame["attachments"] = json!(files.iter().map(|f| f["_id"].clone()).collect::<Vec<_>>());
    frame
}

/// Objects of `user` in the local store (none in S3 mode, where this is not used).
fn stored_objects(app: &TestApp, user: &TestUser) -> usize {
    let dir = app.data_dir.path().join("files").join(&user.id);
    std::fs::read_dir(dir).map_or(0, |d| d.count())
}

/// Waits for the sweep (woken by a delete) to empty the user's part of the store.
async fn wait_until_swept(app: &TestApp, user: &TestUser) {
    for _ in 0..100 {
        if stored_objects(app, user) == 0 && app.state.db.stored_bytes(&user.id).await.unwrap() == 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!(
        "{} objects and {} bytes left",
        stored_objects(app, user),
        app.state.db.stored_bytes(&user.id).await.unwrap()
    );
}

async fn usage_used(app: &TestApp, token: &str) -> Value {
    let usage = assert_ok(app.get_auth("/api/usage/limits", token).await).await;
    usage["limitInfo"]["services"]["responses"]["daily"]["used"].clone()
}

#[actix_web::test]
async fn an_image_is_stored_reencoded_and_only_its_owner_reads_or_deletes_it() {
    let app = spawn_app().await;
    let ann = app.register_ann().await;
    let bob = app.register("Bob", "bob@example.com", "password-2").await;
    let file = uploaded(&app, &ann, "../../cat.PNG").await;
    let id = file["_id"].as_str().unwrap();
    assert_eq!(file["kind"], json!("image"));
    assert_eq!(file["name"], json!("cat.png"));
    assert_eq!(file["mime"], json!("image/png"));
    assert_eq!(
        (file["width"].clone(), file["height"].clone()),
        (json!(64), json!(48))
    );
    assert_eq!(file["url"], json!(format!("/api/files/{id}")));
    assert_eq!(file["thumbnailUrl"], json!(format!("/api/files/{id}/thumbnail")));
    assert_eq!(stored_objects(&app, &ann), 2);

    let got = app.get_auth(&format!("/api/files/{id}"), &ann.token).await;
    assert_eq!(got.status(), 200);
    assert_eq!(got.headers()["content-type"], "image/png");
    assert_eq!(got.headers()["x-content-type-options"], "nosniff");
    assert!(got.headers()["cache-control"]
        .to_str()
        .unwrap()
        .starts_with("private"));
    let bytes = got.bytes().await.unwrap();
    assert!(
        file["size"].as_u64().unwrap() > bytes.len() as u64,
        "size counts the thumbnail too"
    );
    let image = image::load_from_memory(&bytes).unwrap();
    assert_eq!((image.width(), image.height()), (64, 48));
    let thumb = app
        .get_auth(&format!("/api/files/{id}/thumbnail"), &ann.token)
        .await;
    assert_eq!(thumb.headers()["content-type"], "image/jpeg");
    let thumb = image::load_from_memory(&thumb.bytes().await.unwrap()).unwrap();
    assert!(thumb.width() <= 256 && thumb.height() <= 256);

    // Another user, or no one, reaches nothing; the file stays.
    for path in [format!("/api/files/{id}"), format!("/api/files/{id}/thumbnail")] {
        assert_error(app.get_auth(&path, &bob.token).await, 404, "not_found").await;
        let anonymous = app.client.get(app.url(&path)).send().await.unwrap();
        assert_eq!(anonymous.status(), 401);
    }
    assert_error(
        app.delete_auth(&format!("/api/files/{id}"), &bob.token).await,
        404,
        "not_found",
    )
    .await;
    assert_eq!(stored_objects(&app, &ann), 2);

    assert_ok(app.delete_auth(&format!("/api/files/{id}"), &ann.token).await).await;
    assert_error(
        app.get_auth(&format!("/api/files/{id}"), &ann.token).await,
        404,
        "not_found",
    )
    .await;
    assert_error(
        app.delete_auth(&format!("/api/files/{id}"), &ann.token).await,
        404,
        "not_found",
    )
    .await;
    wait_until_swept(&app, &ann).await;
}

#[actix_web::test]
async fn uploads_are_judged_by_content_and_the_plan_and_a_refusal_stores_nothing() {
    let app = spawn_app().await;
    let ann = app.register_ann().await;
    let token = &ann.token;
    let no_file = Form::new().text("file", "not a file");
    let response = app
        .client
        .post(app.url("/api/files"))
        .bearer_auth(token)
        .multipart(no_file)
        .send()
        .await
        .unwrap();
    assert_error(response, 400, "file_upload_error").await;
    let not_multipart = app
        .client
        .post(app.url("/api/files"))
        .bearer_auth(token)
        .body("x")
        .send()
        .await
        .unwrap();
    assert_error(not_multipart, 400, "file_upload_error").await;
    assert_error(
        upload(&app, token, "empty.png", Vec::new()).await,
        400,
        "file_upload_error",
    )
    .await;

    // The name and the declared type are not believed: the bytes are.
    let lying = vec![0x00, 0xff, 0x13, 0x37, 0x00, 0x42];
    let body = assert_error(
        upload(&app, token, "photo.jpg", lying.clone()).await,
        415,
        "file_type_unsupported",
    )
    .await;
    assert_eq!(
        body["message"],
        json!("This file type is not supported: attach a JPEG, PNG or WebP image, or a PDF, DOCX, TXT, Markdown or CSV document")
    );
    let gif = b"GIF89a\x01\x00\x01\x00\x00\x00\x00;".to_vec();
    assert_error(
        upload(&app, token, "a.png", gif).await,
        415,
        "file_type_unsupported",
    )
    .await;
    // A document on a plan without document processing: the premium message of SPEC §8.
    let body = assert_error(
        upload(&app, token, "notes.png", b"%PDF-1.7\n".to_vec()).await,
        403,
        "premium_required",
    )
    .await;
    assert_eq!(body["message"], json!("Document upload is a premium feature"));
    assert_error(
        upload(&app, token, "notes.txt", b"plain notes".to_vec()).await,
        403,
        "premium_required",
    )
    .await;

    let mut truncated = png(64, 64);
    truncated.truncate(60);
    assert_error(
        upload(&app, token, "broken.png", truncated).await,
        400,
        "image_invalid",
    )
    .await;
    // A decompression bomb: a tiny file whose header declares 100 000 × 100 000 pixels.
    let mut bomb = png(1, 1);
    bomb[16..20].copy_from_slice(&100_000u32.to_be_bytes());
    bomb[20..24].copy_from_slice(&100_000u32.to_be_bytes());
    let crc = crc32(&bomb[12..29]);
    bomb[29..33].copy_from_slice(&crc.to_be_bytes());
    assert_error(
        upload(&app, token, "bomb.png", bomb).await,
        413,
        "image_too_many_pixels",
    )
    .await;

    // Larger than the free plan's 5 MB: refused while reading, with the plan's {max}.
    let big = vec![0u8; 5 * 1024 * 1024 + 1];
    let body = assert_error(
        upload(&app, token, "big.png", big.clone()).await,
        413,
        "file_too_large",
    )
    .await;
    assert_eq!(body["message"], json!("The file must be at most 5 MB"));

    // The same refusals in Hungarian, the user's language.
    assert_ok(
        app.put_auth("/api/settings", token, json!({"language": "hu-HU"}))
            .await,
    )
    .await;
    let body = assert_error(
        upload(&app, token, "photo.jpg", lying).await,
        415,
        "file_type_unsupported",
    )
    .await;
    assert_eq!(
        body["message"],
        json!("Ez a fájltípus nem támogatott: JPEG, PNG vagy WebP képet, illetve PDF, DOCX, TXT, Markdown vagy CSV dokumentumot csatoljon")
    );
    let body = assert_error(
        upload(&app, token, "notes.txt", b"plain notes".to_vec()).await,
        403,
        "premium_required",
    )
    .await;
    assert_eq!(body["message"], json!("A dokumentumfeltöltés prémium funkció"));
    let body = assert_error(upload(&app, token, "big.png", big).await, 413, "file_too_large").await;
    assert_eq!(body["message"], json!("A fájl legfeljebb 5 MB lehet"));

    assert_eq!(app.state.db.stored_bytes(&ann.id).await.unwrap(), 0);
    assert_eq!(stored_objects(&app, &ann), 0);

    // Storage: what the user keeps counts; past the plan's 50 MB nothing more is taken.
    let now = app.clock_now();
    let kept = chat_server::db::files::FileRow {
        id: "kept".into(),
        user_id: ann.id.clone(),
        conversation_id: None,
        message_id: None,
        kind: chat_contract::states::FileKind::Image,
        name: "kept.png".into(),
        mime: "image/png".into(),
        size: 50 * 1024 * 1024 - 10,
        width: Some(1),
        height: Some(1),
        created_at: now,
        status: chat_contract::states::FileStatus::Ready,
        progress: 100,
        pages: None,
        embedding_model: None,
        project_id: None,
    };
    app.state.db.insert_file(&kept).await.unwrap();
    let body = assert_error(
        upload(&app, token, "one-more.png", png(8, 8)).await,
        413,
        "storage_full",
    )
    .await;
    assert!(body["message"].as_str().unwrap().contains("50 MB"), "{body}");
    assert_eq!(stored_objects(&app, &ann), 0);
}

#[actix_web::test]
async fn images_sent_in_a_message_reach_every_tab_the_model_and_the_history() {
    let app = spawn_app_with(|s| s.model.demo_reply_tokens = 3).await;
    let ann = app.register_ann().await;
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;
    let (mut other, _) = WsClient::ready(&app, &ann.token).await;
    let file = uploaded(&app, &ann, "cat.png").await;
    tab.send(send_with("c1", "What is this?", &[&file])).await;
    let frames = other.until("message.completed").await;
    let created: Vec<&Value> = frames.iter().filter(|f| f["type"] == "message.created").collect();
    let question = &created[0]["message"];
    assert_eq!(question["role"], json!("user"));
    assert_eq!(question["attachments"][0]["_id"], file["_id"]);
    assert_eq!(question["attachments"][0]["thumbnailUrl"], file["thumbnailUrl"]);
    assert_eq!(created[1]["message"]["attachments"], json!([]));
    let done = frames.last().unwrap();
    let answer = done["message"]["content"].as_str().unwrap();
    assert!(
        answer.starts_with("I received 1 image: cat.png (64×48). You said: *What is this?*."),
        "{answer}"
    );
    tab.until("message.completed").await;

    // The stored conversation shows the attachment; a follow-up still sends the image.
    let conversation_id = question["conversationId"].as_str().unwrap();
    let stored = assert_ok(
        app.get_auth(&format!("/api/conversations/{conversation_id}"), &ann.token)
            .await,
    )
    .await;
    assert_eq!(
        stored["data"]["messages"][0]["attachments"][0]["_id"],
        file["_id"]
    );

    // Sent once: it cannot be sent again, nor deleted on its own.
    tab.send(send_with("c2", "Again", &[&file])).await;
    // (The first conversation's title may come first.)
    let error = tab.until("error").await.pop().unwrap();
    assert_eq!(
        (error["code"].clone(), error["clientId"].clone()),
        (json!("file_in_use"), json!("c2"))
    );
    let id = file["_id"].as_str().unwrap();
    assert_error(
        app.delete_auth(&format!("/api/files/{id}"), &ann.token).await,
        409,
        "file_in_use",
    )
    .await;

    // A message of images alone is fine, and titled by its image.
    let second = uploaded(&app, &ann, "dog.png").await;
    tab.send(send_with("c3", "  ", &[&second])).await;
    let frames = tab.until("message.completed").await;
    let answer = frames.last().unwrap()["message"]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        answer.starts_with("I received 1 image: dog.png (64×48).\n\n"),
        "{answer}"
    );
    let created = frames
        .iter()
        .find(|f| f["type"] == "conversation.created")
        .unwrap();
    let new_id = created["conversation"]["_id"].clone();
    let titled = loop {
        let updated = tab.expect("conversation.updated").await;
        if updated["conversation"]["_id"] == new_id {
            break updated;
        }
    };
    assert_eq!(titled["conversation"]["title"], json!("dog"));

    // Deleting the conversations takes their files out of the store.
    for c in assert_ok(app.get_auth("/api/conversations", &ann.token).await).await["data"]
        .as_array()
        .unwrap()
    {
        let id = c["_id"].as_str().unwrap();
        assert_ok(
            app.delete_auth(&format!("/api/conversations/{id}"), &ann.token)
                .await,
        )
        .await;
    }
    wait_until_swept(&app, &ann).await;
}

#[actix_web::test]
async fn a_send_naming_files_it_may_not_send_is_refused_and_changes_nothing() {
    let app = spawn_app().await;
    let ann = app.register_ann().await;
    let bob = app.register("Bob", "bob@example.com", "password-2").await;
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;
    let mine = [
        uploaded(&app, &ann, "a.png").await,
        uploaded(&app, &ann, "b.png").await,
    ];
    let bobs = uploaded(&app, &bob, "bob.png").await;
    let missing = json!({"_id": "0195a000-0000-7000-8000-000000000000"});

    // The free plan takes one image a message.
    tab.send(send_with("two", "x", &[&mine[0], &mine[1]])).await;
    let error = tab.expect("error").await;
    assert_eq!(error["code"], json!("too_many_images"));
    assert_eq!(
        error["message"],
        json!("You can attach at most 1 images to a message")
    );
    for (client_id, file) in [("bob", &bobs), ("missing", &missing)] {
        tab.send(send_with(client_id, "x", &[file])).await;
        let error = tab.expect("error").await;
        assert_eq!(
            (error["code"].clone(), error["clientId"].clone()),
            (json!("not_found"), json!(client_id))
        );
    }
    // Text is still needed without attachments.
    tab.send(send_with("empty", " ", &[])).await;
    assert_eq!(tab.expect("error").await["code"], json!("message_empty"));

    assert_ok(
        app.put_auth("/api/settings", &ann.token, json!({"language": "hu-HU"}))
            .await,
    )
    .await;
    tab.expect("settings.updated").await;
    tab.send(send_with("two-hu", "x", &[&mine[0], &mine[1]])).await;
    assert_eq!(
        tab.expect("error").await["message"],
        json!("Egy üzenethez legfeljebb 1 képet csatolhat")
    );

    // Nothing counted, nothing stored, Bob's file untouched.
    assert_eq!(usage_used(&app, &ann.token).await, json!(0));
    let list = assert_ok(app.get_auth("/api/conversations", &ann.token).await).await;
    assert_eq!(list["data"], json!([]));
    let id = bobs["_id"].as_str().unwrap();
    assert_eq!(
        app.get_auth(&format!("/api/files/{id}"), &bob.token)
            .await
            .status(),
        200
    );

    // Pro: five at once, not six.
    app.set_plan(&ann.id, "pro").await;
    app.state.realtime.accounts.forget(&ann.id);
    let mut five = Vec::new();
    for i in 0..6 {
        five.push(uploaded(&app, &ann, &format!("p{i}.png")).await);
    }
    tab.send(send_with("six", "x", &five.iter().collect::<Vec<_>>()))
        .await;
    let error = tab.expect("error").await;
    assert_eq!(
        (error["code"].clone(), error["message"].clone()),
        (
            json!("too_many_images"),
            json!("Egy üzenethez legfeljebb 5 képet csatolhat")
        )
    );
    tab.send(send_with("five", "x", &five[..5].iter().collect::<Vec<_>>()))
        .await;
    let frames = tab.until("message.completed").await;
    let answer = frames.last().unwrap()["message"]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        answer.starts_with("I received 5 images: p0.png (64×48), p1.png"),
        "{answer}"
    );
}

#[actix_web::test]
async fn images_reach_an_openai_compatible_model_as_image_parts_of_a_model_that_sees() {
    let (app, stub) = stub_app_with(5, |_| {}).await;
    let ann = app.register_ann().await;
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;
    let file = uploaded(&app, &ann, "cat.png").await;
    tab.send(send_with("v1", "What is this?", &[&file])).await;
    tab.until("message.completed").await;
    let request = stub.last_answer_request();
    // "stub" is not among the models that see: the plan's image model answers.
    assert_eq!(request["model"], json!("gpt-4.1-nano"));
    let question = request["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(question["role"], json!("user"));
    assert_eq!(
        question["content"][0],
        json!({"type": "text", "text": "What is this?"})
    );
    let url = question["content"][1]["image_url"]["url"].as_str().unwrap();
    let data = url.strip_prefix("data:image/png;base64,").expect(url);
    use base64::Engine;
    let bytes = base64::engine::general_purpose::STANDARD.decode(data).unwrap();
    let image = image::load_from_memory(&bytes).unwrap();
    assert_eq!((image.width(), image.height()), (64, 48));

    // The follow-up keeps the image in the history; a seeing model keeps the user's pick.
    let (app2, stub2) = stub_app_with(5, |s| s.model.vision_models = vec!["stub".into()]).await;
    let bob = app2.register_ann().await;
    let (mut tab2, _) = WsClient::ready(&app2, &bob.token).await;
    let file = uploaded(&app2, &bob, "cat.png").await;
    tab2.send(send_with("v2", "What is this?", &[&file])).await;
    let frames = tab2.until("message.completed").await;
    let conversation = frames.last().unwrap()["conversationId"].clone();
    // The test clock stands still: move it so the follow-up comes after the first answer.
    app2.advance_minutes(1);
    tab2.send(send("v3", Some(&conversation), "And its colour?"))
        .await;
    tab2.until("message.completed").await;
    let request = stub2.last_answer_request();
    assert_eq!(request["model"], json!("stub"));
    let messages = request["messages"].as_array().unwrap();
    let first_question = &messages[1];
    assert_eq!(first_question["content"][1]["type"], json!("image_url"));
    assert_eq!(messages.last().unwrap()["content"], json!("And its colour?"));
}

#[actix_web::test]
async fn files_never_sent_and_files_of_deleted_accounts_leave_the_store() {
    let app = spawn_app().await;
    let ann = app.register_ann().await;
    let bob = app.register("Bob", "bob@example.com", "password-2").await;
    uploaded(&app, &ann, "left.png").await;
    uploaded(&app, &bob, "bob.png").await;
    let day = Duration::from_secs(24 * 3600);
    // Within the day nothing goes.
    assert_eq!(app.state.files.sweep_once(day, true).await.unwrap(), 0);
    app.advance_minutes(24 * 60 + 1);
    let bobs_new = uploaded(&app, &bob, "new.png").await;
    assert_eq!(app.state.files.sweep_once(day, false).await.unwrap(), 2);
    assert_eq!(stored_objects(&app, &ann), 0);
    let id = bobs_new["_id"].as_str().unwrap();
    assert_eq!(
        app.get_auth(&format!("/api/files/{id}"), &bob.token)
            .await
            .status(),
        200
    );

    // An account deleted takes its files with it.
    let deleted = app
        .client
        .delete(app.url("/api/auth/profile"))
        .bearer_auth(&bob.token)
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), 200);
    wait_until_swept(&app, &bob).await;
}

/// moto (PyPI), an S3 fake, shared by the test run; `None` when it is not installed.
async fn moto() -> Option<String> {
    static BASE: tokio::sync::OnceCell<Option<String>> = tokio::sync::OnceCell::const_new();
    BASE.get_or_init(|| crate::venv::serve("moto_server", "5.2.5", r#"-H 127.0.0.1 -p "$1""#, "/"))
        .await
        .clone()
}

/// The keys in a bucket of the fake, from its ListObjectsV2 XML.
async fn bucket_keys(base: &str, bucket: &str) -> Vec<String> {
    let xml = reqwest::get(format!("{base}/{bucket}?list-type=2"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    xml.split("<Key>")
        .skip(1)
        .filter_map(|rest| rest.split_once("</Key>").map(|(key, _)| key.to_owned()))
        .collect()
}

#[actix_web::test]
async fn with_a_bucket_set_attachments_live_in_s3_and_leave_it_with_their_conversation() {
    let Some(base) = moto().await else {
        eprintln!("skipping the S3 test");
        return;
    };
    let bucket = format!("chat-{}", uuid::Uuid::new_v4().simple());
    let created = reqwest::Client::new()
        .put(format!("{base}/{bucket}"))
        .send()
        .await
        .unwrap();
    assert!(created.status().is_success(), "{}", created.text().await.unwrap());
    let endpoint = base.clone();
    let bucket_name = bucket.clone();
    let app = spawn_app_with(move |s| {
        s.model.demo_reply_tokens = 2;
        s.files.s3_bucket = bucket_name;
        s.files.s3_endpoint = endpoint;
        s.files.s3_access_key_id = "test".into();
        s.files.s3_secret_access_key = secrecy::SecretString::from("test");
    })
    .await;
    let ann = app.register_ann().await;
    let file = uploaded(&app, &ann, "cat.png").await;
    let id = file["_id"].as_str().unwrap();
    assert_eq!(stored_objects(&app, &ann), 0, "nothing on the local disk");
    let mut keys = bucket_keys(&base, &bucket).await;
    keys.sort();
    assert_eq!(
        keys,
        vec![format!("{}/{id}", ann.id), format!("{}/{id}.thumb", ann.id)]
    );
    let got = app.get_auth(&format!("/api/files/{id}"), &ann.token).await;
    let image = image::load_from_memory(&got.bytes().await.unwrap()).unwrap();
    assert_eq!((image.width(), image.height()), (64, 48));

    // Sent, the model gets the image from the bucket.
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;
    tab.send(send_with("s3", "What is this?", &[&file])).await;
    let frames = tab.until("message.completed").await;
    let answer = frames.last().unwrap()["message"]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        answer.starts_with("I received 1 image: cat.png (64×48)."),
        "{answer}"
    );
    let conversation = frames.last().unwrap()["conversationId"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_ok(
        app.delete_auth(&format!("/api/conversations/{conversation}"), &ann.token)
            .await,
    )
    .await;
    for _ in 0..100 {
        if bucket_keys(&base, &bucket).await.is_empty() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("left in the bucket: {:?}", bucket_keys(&base, &bucket).await);
}

/// A photo-like picture (noise, no transparency): it stays large once re-encoded, and
/// decoding it takes a while.
fn noisy_photo(width: u32, height: u32) -> Vec<u8> {
    let mut seed = 0x2545_f491_u32;
    let img = image::RgbImage::from_fn(width, height, |_, _| {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        let [r, g, b, _] = seed.to_le_bytes();
        image::Rgb([r, g, b])
    });
    let mut out = Cursor::new(Vec::new());
    img.write_to(&mut out, image::ImageFormat::Png).unwrap();
    out.into_inner()
}

#[actix_web::test]
async fn two_uploads_at_once_cannot_both_take_the_last_room() {
    let app = spawn_app_with(|_| {}).await;
    let ann = app.register_ann().await;
    let photo = noisy_photo(1200, 1000);
    // Its stored size, learnt from one upload deleted at once.
    let once = upload(&app, &ann.token, "photo.png", photo.clone()).await;
    let once: Value = once.json().await.unwrap();
    let size = once["data"]["size"].as_i64().expect("uploaded");
    let deleted = app
        .client
        .delete(app.url(&format!("/api/files/{}", once["data"]["_id"].as_str().unwrap())))
        .bearer_auth(&ann.token)
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), 200);
    // What the account keeps leaves room for one more photo, not two.
    let storage = app
        .state
        .catalogue
        .plan(chat_server::plans::PlanType::Free)
        .files
        .storage_mb as i64
        * 1024
        * 1024;
    let kept = chat_server::db::files::FileRow {
        id: "kept".into(),
        user_id: ann.id.clone(),
        conversation_id: None,
        message_id: None,
        kind: chat_contract::states::FileKind::Image,
        name: "kept.png".into(),
        mime: "image/png".into(),
        size: storage - size - size / 2,
        width: Some(1),
        height: Some(1),
        created_at: app.clock_now(),
        status: chat_contract::states::FileStatus::Ready,
        progress: 100,
        pages: None,
        embedding_model: None,
        project_id: None,
    };
    app.state.db.insert_file(&kept).await.unwrap();
    // Both read what is stored before either is decoded, so only the second look, as
    // the row goes in, can refuse one of them.
    let (first, second) = futures_util::join!(
        upload(&app, &ann.token, "one.png", photo.clone()),
        upload(&app, &ann.token, "two.png", photo),
    );
    let mut statuses = [first.status().as_u16(), second.status().as_u16()];
    statuses.sort();
    assert_eq!(statuses, [201, 413]);
    assert_eq!(
        app.state.db.stored_bytes(&ann.id).await.unwrap(),
        storage - size / 2
    );
}

#[actix_web::test]
async fn an_upload_finding_every_decode_slot_taken_is_told_to_retry_and_stores_nothing() {
    let app = spawn_app_with(|s| s.uploads.image_decodes = 1).await;
    let ann = app.register_ann().await;
    let held = app.state.images.reserve().unwrap();
    let response = upload(&app, &ann.token, "cat.png", png(64, 48)).await;
    assert_eq!(response.headers()["retry-after"], "1");
    assert_error(response, 429, "server_busy").await;
    assert_eq!(app.state.db.stored_bytes(&ann.id).await.unwrap(), 0);
    drop(held);
    uploaded(&app, &ann, "cat.png").await;
}

#[actix_web::test]
async fn an_upload_to_a_store_that_is_down_fails_cleanly_and_counts_nothing() {
    // A bucket behind a port where nothing listens.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let app = spawn_app_with(move |s| {
        s.files.s3_bucket = "down".into();
        s.files.s3_endpoint = format!("http://127.0.0.1:{closed}");
        s.files.s3_access_key_id = "test".into();
        s.files.s3_secret_access_key = secrecy::SecretString::from("test");
    })
    .await;
    let ann = app.register_ann().await;
    let started = std::time::Instant::now();
    let response = upload(&app, &ann.token, "cat.png", png(64, 48)).await;
    assert_error(response, 500, "server_error").await;
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "{:?}",
        started.elapsed()
    );
    // Nothing counts against the plan's storage, and nothing can be sent.
    assert_eq!(app.state.db.stored_bytes(&ann.id).await.unwrap(), 0);
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;
    let ids = app.state.db.files_marked_gone(10).await.unwrap();
    assert_eq!(ids.len(), 1, "the failed upload waits for the sweep");
    let ghost = json!({"_id": ids[0].id});
    tab.send(send_with("ghost", "x", &[&ghost])).await;
    assert_eq!(tab.expect("error").await["code"], json!("not_found"));
}
