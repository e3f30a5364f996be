//! Documents as attachments: PDF, DOCX, TXT, Markdown and CSV read, processed in the
//! background with progress in every tab, their best pieces put in the prompt of each
//! question (BM25 with the demo model, embeddings through an OpenAI-compatible stub), and
//! the answer naming its sources. Every refusal stores and counts nothing.

use std::io::{Cursor, Write};
use std::sync::atomic::Ordering;

use pdf_writer::{Content, Finish, Name, Pdf, Rect, Ref, Str};
use reqwest::multipart::{Form, Part};
use serde_json::{json, Value};

use crate::chat::{send, stub_app_with};
use crate::helpers::{assert_error, assert_ok, binary, spawn_app_with, TestApp, TestUser};
use crate::ws::WsClient;

const FACT: &str = "The secret harbour code is LIGHTHOUSE-42.";
pub(crate) const QUESTION: &str = "What is the secret harbour code?";

/// Paragraphs about other things, with [`FACT`] among them when `with_fact`.
pub(crate) fn filler(with_fact: bool) -> String {
    let mut text = String::new();
    for i in 0..12 {
        text.push_str(&format!(
            "Paragraph {i} talks about the weather in the valley, the price of apples and the \
             long road that winds along the river towards the old mill.\n"
        ));
        if with_fact && i == 7 {
            text.push_str(FACT);
            text.push('\n');
        }
    }
    text
}

/// A PDF with one page per text (Helvetica, one line each).
pub(crate) fn pdf(pages: &[&str]) -> Vec<u8> {
    let mut pdf = Pdf::new();
    let (catalog, tree, font) = (Ref::new(1), Ref::new(2), Ref::new(3));
    pdf.catalog(catalog).pages(tree);
    let ids: Vec<Ref> = (0..pages.len()).map(|i| Ref::new(10 + 2 * i as i32)).collect();
    pdf.pages(tree)
        .kids(ids.iter().copied())
        .count(pages.len() as i32);
    for (i, text) in pages.iter().enumerate() {
        let (page_id, content_id) = (ids[i], Ref::new(11 + 2 * i as i32));
        let mut page = pdf.page(page_id);
        page.media_box(Rect::new(0.0, 0.0, 595.0, 842.0));
        page.parent(tree);
        page.contents(content_id);
        page.resources().fonts().pair(Name(b"F1"), font);
        page.finish();
        let mut content = Content::new();
        content.begin_text();
        content.set_font(Name(b"F1"), 12.0);
        content.next_line(72.0, 720.0);
        content.show(Str(text.as_bytes()));
        content.end_text();
        pdf.stream(content_id, &content.finish());
    }
    pdf.type1_font(font).base_font(Name(b"Helvetica"));
    pdf.finish()
}

/// A PDF whose first page's content inflates to `inflated_mb` MB of text that also
/// names a harbour code (compressed, it is a few kilobytes), and whose second page is
/// [`FACT`].
fn pdf_bomb(inflated_mb: usize) -> Vec<u8> {
    let mut pdf = Pdf::new();
    let (catalog, tree, font) = (Ref::new(1), Ref::new(2), Ref::new(3));
    pdf.catalog(catalog).pages(tree);
    let ids = [Ref::new(10), Ref::new(12)];
    pdf.pages(tree).kids(ids).count(2);
    let line = "(The secret harbour code is BOMB-1.) Tj ";
    let mut bomb = String::from("BT /F1 12 Tf 72 720 Td ");
    bomb.push_str(&line.repeat(inflated_mb * 1024 * 1024 / line.len()));
    bomb.push_str("ET");
    let mut honest = Content::new();
    honest.begin_text();
    honest.set_font(Name(b"F1"), 12.0);
    honest.next_line(72.0, 720.0);
    honest.show(Str(FACT.as_bytes()));
    honest.end_text();
    let contents = [
        miniz_oxide::deflate::compress_to_vec_zlib(bomb.as_bytes(), 6),
        honest.finish().to_vec(),
    ];
    for (i, content) in contents.iter().enumerate() {
        let content_id = Ref::new(11 + 2 * i as i32);
        let mut page = pdf.page(ids[i]);
        page.media_box(Rect::new(0.0, 0.0, 595.0, 842.0));
        page.parent(tree);
        page.contents(content_id);
        page.resources().fonts().pair(Name(b"F1"), font);
        page.finish();
        let mut stream = pdf.stream(content_id, content);
        if i == 0 {
            stream.filter(pdf_writer::Filter::FlateDecode);
        }
    }
    pdf.type1_font(font).base_font(Name(b"Helvetica"));
    pdf.finish()
}

/// A Word document whose paragraphs are `paragraphs` (a zip with `word/document.xml`).
fn docx(paragraphs: &[&str]) -> Vec<u8> {
    let mut body = String::new();
    for p in paragraphs {
        let escaped = p.replace('&', "&amp;").replace('<', "&lt;");
        body.push_str(&format!(
            "<w:p><w:r><w:t xml:space=\"preserve\">{escaped}</w:t></w:r></w:p>"
        ));
    }
    let xml = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\
         <w:document xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\">\
         <w:body>{body}</w:body></w:document>"
    );
    zip_of(&[("[Content_Types].xml", "<Types/>"), ("word/document.xml", &xml)])
}

fn zip_of(entries: &[(&str, &str)]) -> Vec<u8> {
    let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    for (name, text) in entries {
        zip.start_file(*name, options).unwrap();
        zip.write_all(text.as_bytes()).unwrap();
    }
    zip.finish().unwrap().into_inner()
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

/// Uploads a document and answers its file object (`processing`).
pub(crate) async fn uploaded(app: &TestApp, user: &TestUser, name: &str, bytes: Vec<u8>) -> Value {
    let response = upload(app, &user.token, name, bytes).await;
    assert_eq!(response.status(), 201);
    let file = response.json::<Value>().await.unwrap()["data"].clone();
    assert_eq!(
        (
            file["kind"].clone(),
            file["status"].clone(),
            file["thumbnailUrl"].clone()
        ),
        (json!("document"), json!("processing"), Value::Null),
        "{file}"
    );
    file
}

/// The next frame of type `kind`, past titles (which may come after an answer's end).
async fn next_of(tab: &mut WsClient, kind: &str) -> Value {
    loop {
        let frame = tab
            .next()
            .await
            .unwrap_or_else(|| panic!("closed while waiting for {kind}"));
        if frame["type"] != json!("conversation.updated") {
            assert_eq!(frame["type"], json!(kind), "{frame}");
            return frame;
        }
    }
}

/// The `file.updated` frames of `file` up to the one that ends its processing.
pub(crate) async fn processed(tab: &mut WsClient, file: &Value) -> Vec<Value> {
    let mut updates = Vec::new();
    loop {
        let frame = next_of(tab, "file.updated").await;
        assert_eq!(frame["file"]["_id"], file["_id"], "{frame}");
        let done = frame["file"]["status"] != json!("processing");
        updates.push(frame["file"].clone());
        if done {
            return updates;
        }
    }
}

pub(crate) fn send_with(
    client_id: &str,
    conversation: Option<&Value>,
    content: &str,
    files: &[&Value],
) -> Value {
    let mut frame = send(client_id, conversation, content);
    frame["attachments"] = json!(files.iter().map(|f| f["_id"].clone()).collect::<Vec<_>>());
    frame
}

/// The completed answer of a send.
async fn answer(tab: &mut WsClient) -> Value {
    let frames = tab.until("message.completed").await;
    frames.last().unwrap().clone()
}

/// A paid user (base has documents) with a tab.
pub(crate) async fn paid_user(app: &TestApp) -> (TestUser, WsClient) {
    let ann = app.register_ann().await;
    app.set_plan(&ann.id, "base").await;
    app.state.realtime.accounts.forget(&ann.id);
    let (tab, _) = WsClient::ready(app, &ann.token).await;
    (ann, tab)
}

#[actix_web::test]
async fn a_document_is_processed_in_the_background_and_its_excerpts_answer_every_tab() {
    let app = spawn_app_with(|s| s.model.demo_reply_tokens = 3).await;
    let (ann, mut tab) = paid_user(&app).await;
    let (mut other_tab, _) = WsClient::ready(&app, &ann.token).await;
    let text = format!("# Harbour notes\n\n{}", filler(true));
    let file = uploaded(&app, &ann, "notes.md", text.clone().into_bytes()).await;
    assert_eq!(file["mime"], json!("text/markdown"));
    assert_eq!(file["name"], json!("notes.md"));

    // Both tabs hear it become ready.
    for t in [&mut tab, &mut other_tab] {
        let last = processed(t, &file).await.pop().unwrap();
        assert_eq!(
            (last["status"].clone(), last["progress"].clone()),
            (json!("ready"), json!(100))
        );
    }
    // Its owner reads it back as it was sent, as UTF-8 text.
    let id = file["_id"].as_str().unwrap();
    let got = app.get_auth(&format!("/api/files/{id}"), &ann.token).await;
    assert_eq!(got.headers()["content-type"], "text/markdown; charset=utf-8");
    assert_eq!(got.text().await.unwrap(), text);

    tab.send(send_with("d1", None, QUESTION, &[&file])).await;
    let frames = tab.until("message.completed").await;
    let question = frames
        .iter()
        .find(|f| f["type"] == json!("message.created") && f["message"]["role"] == json!("user"))
        .unwrap();
    assert_eq!(question["message"]["attachments"][0]["_id"], file["_id"]);
    assert_eq!(question["message"]["attachments"][0]["kind"], json!("document"));
    let done = frames.last().unwrap();
    let content = done["message"]["content"].as_str().unwrap();
    assert!(content.contains("LIGHTHOUSE-42"), "{content}");
    assert!(content.starts_with("From your documents (notes.md)"), "{content}");
    let sources = json!([{ "fileId": file["_id"], "name": "notes.md", "page": null }]);
    assert_eq!(done["message"]["sources"], sources);

    // The other tab saw the same; the conversation's messages keep the sources.
    let seen = other_tab.until("message.completed").await;
    assert_eq!(seen.last().unwrap()["message"]["sources"], sources);
    let conversation = done["conversationId"].clone();
    let c = conversation.as_str().unwrap();
    let got = assert_ok(app.get_auth(&format!("/api/conversations/{c}"), &ann.token).await).await;
    let list = got["data"]["messages"].as_array().unwrap();
    assert_eq!(list[0]["attachments"][0]["status"], json!("ready"));
    assert_eq!(list[1]["sources"], sources);
    assert_eq!(list[0]["sources"], json!([]));

    // A follow-up without attachments still searches the conversation's document.
    app.advance_minutes(1);
    tab.send(send(
        "d2",
        Some(&conversation),
        "Remind me: which code opens the harbour?",
    ))
    .await;
    let done = answer(&mut tab).await;
    assert!(done["message"]["content"]
        .as_str()
        .unwrap()
        .contains("LIGHTHOUSE-42"));
    assert_eq!(done["message"]["sources"], sources);

    // A question nothing in it matches gets no excerpts and no sources.
    app.advance_minutes(1);
    tab.send(send("d3", Some(&conversation), "zebra xylophone")).await;
    let done = answer(&mut tab).await;
    assert_eq!(done["message"]["sources"], json!([]));
    assert!(!done["message"]["content"]
        .as_str()
        .unwrap()
        .contains("From your documents"));
}

#[actix_web::test]
async fn pdf_docx_csv_and_text_are_read_and_a_pdf_source_names_its_page() {
    let app = spawn_app_with(|s| s.model.demo_reply_tokens = 3).await;
    let (ann, mut tab) = paid_user(&app).await;
    let cases: Vec<(&str, Vec<u8>, &str, Option<u64>)> = vec![
        (
            "report.pdf",
            pdf(&[
                "Chapter one is about apples.",
                FACT,
                "Chapter three is about pears.",
            ]),
            "application/pdf",
            Some(2),
        ),
        (
            "letter.docx",
            docx(&["Dear reader,", "Some words about rivers & roads.", FACT]),
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
            None,
        ),
        (
            "codes.csv",
            format!(
                "place,code\nmill,APPLE-7\nharbour,LIGHTHOUSE-42\n{}",
                "road,X\n".repeat(300)
            )
            .into_bytes(),
            "text/csv",
            None,
        ),
        ("plain.txt", filler(true).into_bytes(), "text/plain", None),
    ];
    for (i, (name, bytes, mime, page)) in cases.into_iter().enumerate() {
        let file = uploaded(&app, &ann, name, bytes).await;
        assert_eq!(file["mime"], json!(mime), "{name}");
        if name.ends_with(".pdf") {
            assert_eq!(file["pages"], json!(3));
        }
        assert_eq!(
            processed(&mut tab, &file).await.pop().unwrap()["status"],
            json!("ready"),
            "{name}"
        );
        let asked = if name.ends_with(".csv") {
            "What is listed for the harbour?"
        } else {
            QUESTION
        };
        tab.send(send_with(&format!("f{i}"), None, asked, &[&file])).await;
        let done = answer(&mut tab).await;
        let content = done["message"]["content"].as_str().unwrap();
        assert!(content.contains("LIGHTHOUSE-42"), "{name}: {content}");
        assert_eq!(
            done["message"]["sources"],
            json!([{ "fileId": file["_id"], "name": name, "page": page }]),
            "{name}"
        );
        app.advance_minutes(1);
    }
}

#[actix_web::test]
async fn documents_that_cannot_be_taken_are_refused_and_nothing_is_stored() {
    let app = spawn_app_with(|_| {}).await;
    let ann = app.register_ann().await;
    let token = ann.token.clone();

    // The free plan has no documents, in both languages.
    let body = assert_error(
        upload(&app, &token, "notes.txt", b"hello".to_vec()).await,
        403,
        "premium_required",
    )
    .await;
    assert_eq!(body["message"], json!("Document upload is a premium feature"));
    assert_ok(
        app.put_auth("/api/settings", &token, json!({"language": "hu-HU"}))
            .await,
    )
    .await;
    let body = assert_error(
        upload(&app, &token, "a.pdf", pdf(&["x"])).await,
        403,
        "premium_required",
    )
    .await;
    assert_eq!(body["message"], json!("A dokumentumfeltöltés prémium funkció"));
    assert_ok(
        app.put_auth("/api/settings", &token, json!({"language": "en-US"}))
            .await,
    )
    .await;

    app.set_plan(&ann.id, "base").await;
    let full = pdf(&[FACT, "second page"]);
    let refused: Vec<(&str, Vec<u8>, u16, &str)> = vec![
        // Cut in the middle: no cross-reference table, no pages.
        ("cut.pdf", full[..full.len() / 3].to_vec(), 422, "file_unreadable"),
        // A zip that is no Word document.
        (
            "archive.docx",
            zip_of(&[("readme.txt", "hello")]),
            415,
            "file_type_unsupported",
        ),
        // A truncated zip.
        ("cut.docx", docx(&["a"])[..40].to_vec(), 422, "file_unreadable"),
        // Binary data named like a document.
        (
            "lying.pdf",
            vec![0x7f, 0x45, 0x4c, 0x46, 0, 1, 2, 3],
            415,
            "file_type_unsupported",
        ),
        // Text that is not UTF-8.
        (
            "latin1.txt",
            b"caf\xe9 cr\xe8me".to_vec(),
            415,
            "file_type_unsupported",
        ),
        // Only blanks.
        ("blank.md", b"  \n\n \t".to_vec(), 422, "file_unreadable"),
    ];
    for (name, bytes, status, code) in refused {
        let body = assert_error(upload(&app, &token, name, bytes).await, status, code).await;
        assert!(!body["message"].as_str().unwrap().is_empty(), "{name}");
    }
    let body = assert_error(
        upload(&app, &token, "cut.pdf", full[..200].to_vec()).await,
        422,
        "file_unreadable",
    )
    .await;
    assert_eq!(
        body["message"],
        json!("The file could not be read: it is damaged, password-protected or holds no text")
    );
    assert_eq!(app.state.db.stored_bytes(&ann.id).await.unwrap(), 0);
    let dir = app.data_dir.path().join("files").join(&ann.id);
    assert_eq!(std::fs::read_dir(&dir).map_or(0, |d| d.count()), 0);

    // A PDF whose pages hold no text (a scan) is found out while processing: it fails,
    // and every tab hears it.
    app.state.realtime.accounts.forget(&ann.id);
    let (mut tab, _) = WsClient::ready(&app, &token).await;
    let scan = uploaded(&app, &ann, "scan.pdf", pdf(&["", ""])).await;
    let last = processed(&mut tab, &scan).await.pop().unwrap();
    assert_eq!(last["status"], json!("failed"));
    let id = scan["_id"].as_str().unwrap();
    let stored = app.state.db.file(&ann.id, id).await.unwrap().unwrap();
    assert_eq!(stored.status.as_str(), "failed");
    tab.send(send_with("scan", None, "x", &[&scan])).await;
    assert_eq!(next_of(&mut tab, "error").await["code"], json!("file_unreadable"));
}

#[actix_web::test]
async fn decompression_bombs_are_stopped_a_pdf_page_skipped_a_docx_refused() {
    let app = spawn_app_with(|s| s.model.demo_reply_tokens = 3).await;
    let (ann, mut tab) = paid_user(&app).await;

    // A page that inflates past 16 MB is skipped; the rest of the PDF is read.
    let file = uploaded(&app, &ann, "bomb.pdf", pdf_bomb(20)).await;
    assert!(file["size"].as_u64().unwrap() < 200_000, "{file}");
    assert_eq!(
        processed(&mut tab, &file).await.pop().unwrap()["status"],
        json!("ready")
    );
    tab.send(send_with("b1", None, QUESTION, &[&file])).await;
    let done = answer(&mut tab).await;
    assert_eq!(
        done["message"]["sources"],
        json!([{ "fileId": file["_id"], "name": "bomb.pdf", "page": 2 }])
    );
    assert!(done["message"]["content"]
        .as_str()
        .unwrap()
        .contains("LIGHTHOUSE-42"));

    // A DOCX whose text part inflates past 64 MB is refused before it is inflated.
    let huge = format!(
        "<w:document><w:body><w:p><w:r><w:t>{}</w:t></w:r></w:p></w:body></w:document>",
        "a".repeat(65 * 1024 * 1024)
    );
    let bomb = zip_of(&[("word/document.xml", &huge)]);
    assert!(bomb.len() < 1024 * 1024, "{} bytes", bomb.len());
    assert_error(
        upload(&app, &ann.token, "bomb.docx", bomb).await,
        422,
        "file_unreadable",
    )
    .await;
}

#[actix_web::test]
async fn every_paid_plan_takes_documents_up_to_its_own_size() {
    let app = spawn_app_with(|_| {}).await;
    let ann = app.register_ann().await;
    for (plan, max) in [("base", 20), ("plus", 20), ("pro", 50)] {
        app.set_plan(&ann.id, plan).await;
        let body = vec![b'a'; max * 1024 * 1024 + 1];
        let refused = assert_error(
            upload(&app, &ann.token, "big.txt", body).await,
            413,
            "file_too_large",
        )
        .await;
        assert_eq!(
            refused["message"],
            json!(format!("The file must be at most {max} MB")),
            "{plan}"
        );
        let mut fits = vec![b'a'; max * 1024 * 1024];
        fits[0] = b'x';
        let response = upload(&app, &ann.token, "fits.txt", fits).await;
        assert_eq!(response.status(), 201, "{plan}");
    }
}

#[actix_web::test]
async fn a_send_with_documents_it_may_not_send_is_refused_and_counts_nothing() {
    let (app, stub) = stub_app_with(5, |_| {}).await;
    let (ann, mut tab) = paid_user(&app).await;
    let bob = app.register("Bob", "bob@example.com", "password-2").await;
    app.set_plan(&bob.id, "base").await;

    // Still processing (the embedding endpoint holds it at half way).
    stub.embeddings_hold.store(true, Ordering::SeqCst);
    let held = uploaded(&app, &ann, "held.txt", filler(true).into_bytes()).await;
    let half = tab.expect("file.updated").await;
    assert_eq!(half["file"]["progress"], json!(50), "{half}");
    tab.send(send_with("p1", None, QUESTION, &[&held])).await;
    let error = next_of(&mut tab, "error").await;
    assert_eq!(
        (error["code"].clone(), error["message"].clone()),
        (
            json!("file_processing"),
            json!("The document is still being processed. Send it when it is ready.")
        )
    );
    stub.embeddings_hold.store(false, Ordering::SeqCst);
    assert_eq!(
        processed(&mut tab, &held).await.pop().unwrap()["status"],
        json!("ready")
    );

    // Another user's document is not found, over REST or in a send.
    let bobs = uploaded(&app, &bob, "bob.txt", b"Bob's own notes".to_vec()).await;
    let bob_id = bobs["_id"].as_str().unwrap();
    for path in [
        format!("/api/files/{bob_id}"),
        format!("/api/files/{bob_id}/info"),
    ] {
        assert_error(app.get_auth(&path, &ann.token).await, 404, "not_found").await;
    }
    let own = assert_ok(
        app.get_auth(&format!("/api/files/{bob_id}/info"), &bob.token)
            .await,
    )
    .await;
    assert_eq!(own["data"]["name"], json!("bob.txt"));
    tab.send(send_with("p2", None, "x", &[&bobs])).await;
    assert_eq!(next_of(&mut tab, "error").await["code"], json!("not_found"));

    // Eleven documents are one too many, in both languages.
    let mut many = Vec::new();
    for i in 0..11 {
        let file = uploaded(&app, &ann, &format!("n{i}.txt"), format!("note {i}").into_bytes()).await;
        processed(&mut tab, &file).await;
        many.push(file);
    }
    tab.send(send_with("p3", None, "x", &many.iter().collect::<Vec<_>>()))
        .await;
    let error = next_of(&mut tab, "error").await;
    assert_eq!(
        (error["code"].clone(), error["message"].clone()),
        (
            json!("too_many_documents"),
            json!("You can attach at most 10 documents to a message")
        )
    );
    assert_ok(
        app.put_auth("/api/settings", &ann.token, json!({"language": "hu-HU"}))
            .await,
    )
    .await;
    tab.expect("settings.updated").await;
    tab.send(send_with("p4", None, "x", &many.iter().collect::<Vec<_>>()))
        .await;
    assert_eq!(
        next_of(&mut tab, "error").await["message"],
        json!("Egy üzenethez legfeljebb 10 dokumentumot csatolhat")
    );

    // After a downgrade to free, an uploaded document can no longer be sent.
    app.set_plan(&ann.id, "free").await;
    app.state.realtime.accounts.forget(&ann.id);
    tab.send(send_with("p5", None, "x", &[&held])).await;
    let error = next_of(&mut tab, "error").await;
    assert_eq!(
        (error["code"].clone(), error["message"].clone()),
        (
            json!("premium_required"),
            json!("A dokumentumfeltöltés prémium funkció")
        )
    );

    // Nothing was counted or stored as a conversation.
    let usage = assert_ok(app.get_auth("/api/usage/limits", &ann.token).await).await;
    assert_eq!(
        usage["limitInfo"]["services"]["responses"]["daily"]["used"],
        json!(0),
        "{usage}"
    );
    let list = assert_ok(app.get_auth("/api/conversations", &ann.token).await).await;
    assert_eq!(list["data"], json!([]));
}

#[actix_web::test]
async fn with_an_embedding_endpoint_pieces_are_embedded_and_the_nearest_reach_the_prompt() {
    let (app, stub) = stub_app_with(5, |_| {}).await;
    let (ann, mut tab) = paid_user(&app).await;
    let file = uploaded(&app, &ann, "notes.txt", filler(true).into_bytes()).await;
    let updates = processed(&mut tab, &file).await;
    assert_eq!(updates.last().unwrap()["status"], json!("ready"));
    let embedded = stub.embedding_requests.lock().unwrap().clone();
    assert_eq!(embedded.len(), 1, "one batch for a short document");
    assert_eq!(embedded[0]["model"], json!("text-embedding-3-small"));
    let pieces = embedded[0]["input"].as_array().unwrap();
    assert!(pieces.len() >= 2, "{pieces:?}");
    let stored = app
        .state
        .db
        .file(&ann.id, file["_id"].as_str().unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.embedding_model.as_deref(), Some("text-embedding-3-small"));

    tab.send(send_with("e1", None, QUESTION, &[&file])).await;
    let done = answer(&mut tab).await;
    assert_eq!(
        done["message"]["sources"],
        json!([{ "fileId": file["_id"], "name": "notes.txt", "page": null }])
    );
    // The question was embedded with the same model, and the nearest piece sits in a
    // system turn right before the question.
    let asked = stub.embedding_requests.lock().unwrap().last().cloned().unwrap();
    assert_eq!(asked["input"], json!([QUESTION]));
    let request = stub.last_answer_request();
    let messages = request["messages"].as_array().unwrap();
    let excerpts = &messages[messages.len() - 2];
    assert_eq!(excerpts["role"], json!("system"));
    let text = excerpts["content"].as_str().unwrap();
    assert!(
        text.starts_with("Excerpts from the user's documents follow."),
        "{text}"
    );
    assert!(text.contains("[1] notes.txt\n") && text.contains(FACT), "{text}");
    assert_eq!(messages.last().unwrap()["content"], json!(QUESTION));

    // An endpoint that fails: the document is still taken, ranked by BM25.
    stub.embeddings_fail.store(true, Ordering::SeqCst);
    let second = uploaded(&app, &ann, "again.txt", filler(true).into_bytes()).await;
    assert_eq!(
        processed(&mut tab, &second).await.pop().unwrap()["status"],
        json!("ready")
    );
    let stored = app
        .state
        .db
        .file(&ann.id, second["_id"].as_str().unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.embedding_model, None);
    app.advance_minutes(1);
    tab.send(send_with("e2", None, QUESTION, &[&second])).await;
    let done = answer(&mut tab).await;
    assert_eq!(done["message"]["sources"][0]["name"], json!("again.txt"));
    let request = stub.last_answer_request();
    let messages = request["messages"].as_array().unwrap();
    assert!(messages[messages.len() - 2]["content"]
        .as_str()
        .unwrap()
        .contains(FACT));
}

#[actix_web::test]
async fn a_documents_pieces_leave_with_its_conversation_and_a_stalled_one_fails() {
    let app = spawn_app_with(|s| s.model.demo_reply_tokens = 3).await;
    let (ann, mut tab) = paid_user(&app).await;
    let file = uploaded(&app, &ann, "notes.txt", filler(true).into_bytes()).await;
    processed(&mut tab, &file).await;
    let id = file["_id"].as_str().unwrap().to_owned();
    assert!(!app
        .state
        .db
        .chunks_of(std::slice::from_ref(&id), 100)
        .await
        .unwrap()
        .is_empty());
    tab.send(send_with("s1", None, QUESTION, &[&file])).await;
    let done = answer(&mut tab).await;
    let c = done["conversationId"].as_str().unwrap();
    assert_ok(
        app.delete_auth(&format!("/api/conversations/{c}"), &ann.token)
            .await,
    )
    .await;
    next_of(&mut tab, "conversation.deleted").await;
    for _ in 0..100 {
        if app
            .state
            .db
            .chunks_of(std::slice::from_ref(&id), 100)
            .await
            .unwrap()
            .is_empty()
        {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(app
        .state
        .db
        .chunks_of(std::slice::from_ref(&id), 100)
        .await
        .unwrap()
        .is_empty());
    assert_eq!(
        app.get_auth(&format!("/api/files/{id}"), &ann.token)
            .await
            .status(),
        404
    );

    // A document left `processing` by an instance that stopped is failed by the sweep.
    let stalled = chat_server::db::files::FileRow {
        id: "stalled".into(),
        user_id: ann.id.clone(),
        conversation_id: None,
        message_id: None,
        kind: chat_contract::states::FileKind::Document,
        name: "stalled.pdf".into(),
        mime: "application/pdf".into(),
        size: 10,
        width: None,
        height: None,
        created_at: app.clock_now(),
        status: chat_contract::states::FileStatus::Processing,
        progress: 50,
        pages: Some(1),
        embedding_model: None,
        project_id: None,
    };
    app.state.db.insert_file(&stalled).await.unwrap();
    let unsent = std::time::Duration::from_secs(24 * 3600);
    app.state.files.sweep_once(unsent, false).await.unwrap();
    assert_eq!(
        app.state
            .db
            .file(&ann.id, "stalled")
            .await
            .unwrap()
            .unwrap()
            .status
            .as_str(),
        "processing"
    );
    app.advance_minutes(31);
    app.state.files.sweep_once(unsent, false).await.unwrap();
    assert_eq!(
        app.state
            .db
            .file(&ann.id, "stalled")
            .await
            .unwrap()
            .unwrap()
            .status
            .as_str(),
        "failed"
    );
    // Every tab hears it, and a tab that did not reads it.
    let told = next_of(&mut tab, "file.updated").await;
    assert_eq!(
        (told["file"]["_id"].clone(), told["file"]["status"].clone()),
        (json!("stalled"), json!("failed"))
    );
    let info = assert_ok(app.get_auth("/api/files/stalled/info", &ann.token).await).await;
    assert_eq!(info["data"]["status"], json!("failed"));
    tab.send(send_with("s2", None, "x", &[&json!({"_id": "stalled"})]))
        .await;
    assert_eq!(next_of(&mut tab, "error").await["code"], json!("file_unreadable"));
}

/// A PDF with one page, whose object stream (`/ObjStm`, deflated: a few kilobytes)
/// lists `objects` objects all at its offset 0, where `body` stands: parsed, every one
/// of them is a copy of `body`.
fn pdf_object_stream_bomb(objects: usize, body: &[u8]) -> Vec<u8> {
    let header: String = (0..objects).map(|i| format!("{} 0 ", 100 + i)).collect();
    let mut plain = header.clone().into_bytes();
    plain.extend_from_slice(body);
    let packed = miniz_oxide::deflate::compress_to_vec_zlib(&plain, 9);
    let text = b"BT /F1 12 Tf 72 720 Td (Harbour notes.) Tj ET";
    let stream = |dict: String, data: &[u8]| {
        let mut o = format!("<< {dict} /Length {} >>\nstream\n", data.len()).into_bytes();
        o.extend_from_slice(data);
        o.extend_from_slice(b"\nendstream");
        o
    };
    let objects_of_file = [
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R \
           /Resources << /Font << /F1 5 0 R >> >> >>"
            .to_vec(),
        stream(String::new(), text),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_vec(),
        stream(
            format!(
                "/Type /ObjStm /N {objects} /First {} /Filter /FlateDecode",
                header.len()
            ),
            &packed,
        ),
    ];
    let mut pdf = b"%PDF-1.7\n".to_vec();
    let mut offsets = Vec::new();
    for (i, object) in objects_of_file.iter().enumerate() {
        offsets.push(pdf.len());
        pdf.extend_from_slice(format!("{} 0 obj\n", i + 1).as_bytes());
        pdf.extend_from_slice(object);
        pdf.extend_from_slice(b"\nendobj\n");
    }
    let xref = pdf.len();
    pdf.extend_from_slice(format!("xref\n0 {}\n0000000000 65535 f \n", offsets.len() + 1).as_bytes());
    for offset in offsets {
        pdf.extend_from_slice(format!("{offset:010} 00000 n \n").as_bytes());
    }
    pdf.extend_from_slice(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objects_of_file.len() + 1
        )
        .as_bytes(),
    );
    pdf
}

/// `VmHWM` (peak resident memory) of process `pid`, in MB.
fn peak_rss_mb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    let kb: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kb / 1024
}

/// Memory bombs in documents never reach the server's memory: they are read in a reader
/// process with a memory limit, which they end; the upload is refused as unreadable and
/// the server's peak memory stays where it was. Run against the server binary, whose
/// `/proc/<pid>/status` is its own (the other tests share this test process).
#[actix_web::test]
async fn memory_bombs_in_documents_are_refused_and_the_servers_memory_stays_flat() {
    let data_dir = tempfile::tempdir().unwrap();
    let token = binary::seed_user(data_dir.path(), "bomb", "base");
    let (mut server, base) = binary::serve(data_dir.path(), &[], std::process::Stdio::null()).await;
    let client = reqwest::Client::new();
    let upload = |name: &str, bytes: Vec<u8>| {
        let form = Form::new().part("file", Part::bytes(bytes).file_name(name.to_owned()));
        client
            .post(format!("{base}/api/files"))
            .bearer_auth(&token)
            .multipart(form)
            .send()
    };
    let before = peak_rss_mb(server.id());
    let string = [b"(".as_slice(), &vec![b'A'; 20 << 20], b")"].concat();
    let zeros = [b"[".as_slice(), &b"0 ".repeat(10 << 20), b"]"].concat();
    let bombs = [
        // 40 copies of a 20 MiB string: 800 MiB from a file of a few kilobytes.
        ("copies.pdf", pdf_object_stream_bomb(40, &string)),
        // One array of ten million numbers: each is a parsed object many times its text.
        ("numbers.pdf", pdf_object_stream_bomb(1, &zeros)),
    ];
    for (name, bytes) in bombs {
        assert!(bytes.len() < 200 * 1024, "{name}: {} bytes", bytes.len());
        let refused = upload(name, bytes).await.unwrap();
        assert_error(refused, 422, "file_unreadable").await;
    }
    let peak = peak_rss_mb(server.id());
    // Stated bound: the bombs add less than 100 MB to the server's peak (without the
    // reader process they added hundreds).
    assert!(
        peak < before + 100,
        "the server's peak memory went from {before} MB to {peak} MB"
    );
    // An honest document of the same shape is still read.
    let honest = upload("honest.pdf", pdf_object_stream_bomb(2, b"(fine)"))
        .await
        .unwrap();
    let honest: Value = honest.json().await.unwrap();
    assert_eq!(honest["data"]["status"], json!("processing"), "{honest}");
    assert_eq!(honest["data"]["pages"], json!(1), "{honest}");
    server.kill().unwrap();
    server.wait().unwrap();
}

#[actix_web::test]
async fn a_document_sent_with_a_replaced_question_is_not_read_for_its_new_version() {
    let app = spawn_app_with(|s| s.model.demo_reply_tokens = 3).await;
    let (ann, mut tab) = paid_user(&app).await;
    let file = uploaded(&app, &ann, "notes.md", filler(true).into_bytes()).await;
    processed(&mut tab, &file).await;
    tab.send(send("d1", None, "Hello")).await;
    let first = answer(&mut tab).await;
    let conversation = first["conversationId"].clone();
    app.clock.advance_ms(1000);
    tab.send(send_with("d2", Some(&conversation), QUESTION, &[&file]))
        .await;
    let frames = tab.until("message.completed").await;
    let question = frames
        .iter()
        .find(|f| f["type"] == json!("message.created") && f["message"]["role"] == json!("user"))
        .unwrap()["message"]
        .clone();
    assert_eq!(
        frames.last().unwrap()["message"]["sources"][0]["fileId"],
        file["_id"]
    );

    // The same question as a new version without the document: its branch has none.
    app.clock.advance_ms(1000);
    let mut edit = send("d3", Some(&conversation), QUESTION);
    edit["editOf"] = question["_id"].clone();
    tab.send(edit).await;
    let edited = answer(&mut tab).await;
    assert_eq!(edited["message"]["sources"], json!([]), "{edited}");
}
