//! Projects: folders of conversations whose answers follow the project's instructions;
//! moving conversations in and out; deleting with or without them; one user's projects
//! invisible to another; every rule's refusal.

use reqwest::Response;
use serde_json::{json, Value};

use crate::chat::send;
use crate::helpers::{assert_error, assert_ok, spawn_app_with, TestApp, TestUser};
use crate::ws::WsClient;

async fn post_project(app: &TestApp, user: &TestUser, body: Value) -> Response {
    app.client
        .post(app.url("/api/projects"))
        .bearer_auth(&user.token)
        .json(&body)
        .send()
        .await
        .unwrap()
}

async fn patch_project(app: &TestApp, user: &TestUser, id: &str, body: Value) -> Response {
    app.client
        .patch(app.url(&format!("/api/projects/{id}")))
        .bearer_auth(&user.token)
        .json(&body)
        .send()
        .await
        .unwrap()
}

async fn move_to(app: &TestApp, user: &TestUser, conversation: &str, project: Value) -> Response {
    app.put_auth(
        &format!("/api/conversations/{conversation}/project"),
        &user.token,
        json!({ "projectId": project }),
    )
    .await
}

/// A new project of `user`, answered as the API shows it.
async fn project(app: &TestApp, user: &TestUser, name: &str, instructions: &str) -> Value {
    let response = post_project(app, user, json!({ "name": name, "instructions": instructions })).await;
    assert_eq!(response.status(), 201);
    response.json::<Value>().await.unwrap()["data"].clone()
}

/// Sends `content` in a new conversation (in `project`, if given); answers the
/// conversation's id and the answer.
async fn converse(
    tab: &mut WsClient,
    client_id: &str,
    project: Option<&Value>,
    content: &str,
) -> (Value, Value) {
    let mut frame = send(client_id, None, content);
    if let Some(p) = project {
        frame["projectId"] = p["_id"].clone();
    }
    tab.send(frame).await;
    let frames = tab.until("message.completed").await;
    let created = frames
        .iter()
        .find(|f| f["type"] == "conversation.created")
        .unwrap();
    // Its title comes after the answer: taken here, so later frames are the test's.
    next_of(tab, "conversation.updated").await;
    (
        created["conversation"].clone(),
        frames.last().unwrap()["message"].clone(),
    )
}

async fn projects_of(app: &TestApp, user: &TestUser) -> Vec<Value> {
    assert_ok(app.get_auth("/api/projects", &user.token).await).await["data"]
        .as_array()
        .unwrap()
        .clone()
}

/// The next frame of `kind`, skipping others (titles, usage).
async fn next_of(tab: &mut WsClient, kind: &str) -> Value {
    loop {
        let f = tab.next().await.expect("a frame");
        if f["type"] == kind {
            return f;
        }
    }
}

#[actix_web::test]
async fn a_projects_conversations_follow_its_instructions_in_every_tab() {
    let app = spawn_app_with(|s| s.model.demo_reply_tokens = 3).await;
    let (ann, mut tab) = app.user_on("plus").await;
    let (mut other, _) = WsClient::ready(&app, &ann.token).await;
    let garden = project(&app, &ann, "  Garden  ", "Answer as a gardener.\nKeep it short.").await;
    assert_eq!(
        (
            garden["name"].clone(),
            garden["instructions"].clone(),
            garden["conversations"].clone()
        ),
        (
            json!("Garden"),
            json!("Answer as a gardener.\nKeep it short."),
            json!(0)
        )
    );
    assert_eq!(next_of(&mut other, "project.updated").await["project"], garden);

    let (conversation, answer) = converse(&mut tab, "g1", Some(&garden), "When do I plant tulips?").await;
    assert_eq!(conversation["projectId"], garden["_id"]);
    assert_eq!(
        next_of(&mut other, "project.updated").await["project"]["conversations"],
        json!(1)
    );
    let content = answer["content"].as_str().unwrap();
    assert!(
        content.starts_with("Following the instructions of Garden: «Answer as a gardener.»."),
        "{content}"
    );
    // A follow-up in the conversation follows them too.
    app.advance_minutes(1);
    tab.send(send("g2", Some(&conversation["_id"]), "And roses?"))
        .await;
    let followed = tab.until("message.completed").await.last().unwrap()["message"]["content"].clone();
    assert!(followed
        .as_str()
        .unwrap()
        .starts_with("Following the instructions of Garden"));
    // A conversation outside the project is told nothing of it.
    let (outside, plain) = converse(&mut tab, "o1", None, "Hello").await;
    assert_eq!(outside["projectId"], Value::Null);
    assert!(!plain["content"].as_str().unwrap().contains("instructions"));

    let listed = projects_of(&app, &ann).await;
    assert_eq!((listed.len(), listed[0]["conversations"].clone()), (1, json!(1)));
    let id = garden["_id"].as_str().unwrap();
    let inside = assert_ok(
        app.get_auth(&format!("/api/conversations?projectId={id}"), &ann.token)
            .await,
    )
    .await;
    let inside: Vec<Value> = inside["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["_id"].clone())
        .collect();
    assert_eq!(inside, [conversation["_id"].clone()]);
    let all = assert_ok(app.get_auth("/api/conversations", &ann.token).await).await;
    assert_eq!(all["data"].as_array().unwrap().len(), 2);

    // Renaming keeps what is left out.
    let renamed = assert_ok(patch_project(&app, &ann, id, json!({ "name": "Allotment" })).await).await;
    assert_eq!(
        (
            renamed["data"]["name"].clone(),
            renamed["data"]["instructions"].clone()
        ),
        (json!("Allotment"), garden["instructions"].clone())
    );
    assert_eq!(
        next_of(&mut other, "project.updated").await["project"]["name"],
        json!("Allotment")
    );
}

#[actix_web::test]
async fn conversations_move_in_and_out_and_a_deleted_project_keeps_or_takes_them() {
    let app = spawn_app_with(|s| s.model.demo_reply_tokens = 3).await;
    let (ann, mut tab) = app.user_on("pro").await;
    let work = project(&app, &ann, "Work", "").await;
    let (conversation, _) = converse(&mut tab, "m1", None, "Plan my week").await;
    let id = conversation["_id"].as_str().unwrap();

    let moved = assert_ok(move_to(&app, &ann, id, work["_id"].clone()).await).await;
    assert_eq!(moved["data"]["projectId"], work["_id"]);
    assert_eq!(
        next_of(&mut tab, "conversation.updated").await["conversation"]["projectId"],
        work["_id"]
    );
    assert_eq!(
        next_of(&mut tab, "project.updated").await["project"]["conversations"],
        json!(1)
    );
    let out = assert_ok(move_to(&app, &ann, id, Value::Null).await).await;
    assert_eq!(out["data"]["projectId"], Value::Null);
    assert_eq!(
        next_of(&mut tab, "project.updated").await["project"]["conversations"],
        json!(0)
    );

    // Deleted without its conversations: they leave it.
    assert_ok(move_to(&app, &ann, id, work["_id"].clone()).await).await;
    let work_id = work["_id"].as_str().unwrap();
    assert_ok(
        app.delete_auth(&format!("/api/projects/{work_id}"), &ann.token)
            .await,
    )
    .await;
    assert_eq!(
        next_of(&mut tab, "project.deleted").await["projectId"],
        work["_id"]
    );
    let kept = assert_ok(
        app.get_auth(&format!("/api/conversations/{id}"), &ann.token)
            .await,
    )
    .await;
    assert_eq!(kept["data"]["projectId"], Value::Null);
    assert_error(
        app.get_auth(&format!("/api/projects/{work_id}"), &ann.token)
            .await,
        404,
        "not_found",
    )
    .await;

    // Deleted with them: they are gone, and every tab is told.
    let trip = project(&app, &ann, "Trip", "Plan trips.").await;
    let (inside, _) = converse(&mut tab, "m2", Some(&trip), "Rome in May").await;
    let trip_id = trip["_id"].as_str().unwrap();
    let inside_id = inside["_id"].as_str().unwrap();
    assert_ok(
        app.delete_auth(
            &format!("/api/projects/{trip_id}?deleteConversations=true"),
            &ann.token,
        )
        .await,
    )
    .await;
    assert_eq!(
        next_of(&mut tab, "conversation.deleted").await["conversationId"],
        inside["_id"]
    );
    assert_eq!(
        next_of(&mut tab, "project.deleted").await["projectId"],
        trip["_id"]
    );
    assert_error(
        app.get_auth(&format!("/api/conversations/{inside_id}"), &ann.token)
            .await,
        404,
        "not_found",
    )
    .await;
    assert_ok(
        app.get_auth(&format!("/api/conversations/{id}"), &ann.token)
            .await,
    )
    .await;
    assert!(projects_of(&app, &ann).await.is_empty());
}

#[actix_web::test]
async fn another_users_project_is_not_found_anywhere_it_can_be_named() {
    let app = spawn_app_with(|s| s.model.demo_reply_tokens = 3).await;
    let (ann, _) = app.user_on("plus").await;
    let secret = project(&app, &ann, "Secret", "Never tell Bob.").await;
    let id = secret["_id"].as_str().unwrap();
    let bob = app.register("Bob", "bob@example.com", "password-2").await;
    app.set_plan(&bob.id, "plus").await;
    app.state.realtime.accounts.forget(&bob.id);
    let (mut bobs, _) = WsClient::ready(&app, &bob.token).await;
    let path = format!("/api/projects/{id}");
    assert_error(app.get_auth(&path, &bob.token).await, 404, "not_found").await;
    assert_error(
        patch_project(&app, &bob, id, json!({ "name": "Mine" })).await,
        404,
        "not_found",
    )
    .await;
    assert_error(app.delete_auth(&path, &bob.token).await, 404, "not_found").await;
    assert!(projects_of(&app, &bob).await.is_empty());

    // Bob's own conversation cannot go into it, nor start in it.
    let (own, _) = converse(&mut bobs, "b1", None, "Hi").await;
    let own_id = own["_id"].as_str().unwrap();
    assert_error(move_to(&app, &bob, own_id, json!(id)).await, 404, "not_found").await;
    let mut frame = send("b2", None, "Tell me the secret");
    frame["projectId"] = json!(id);
    bobs.send(frame).await;
    let error = next_of(&mut bobs, "error").await;
    assert_eq!(
        (error["code"].clone(), error["clientId"].clone()),
        (json!("not_found"), json!("b2"))
    );
    assert_eq!(app.used_today(&bob.token, "responses").await, json!(1));
    // And Ann's conversations cannot be moved by Bob into his.
    let (mut anns, _) = WsClient::ready(&app, &ann.token).await;
    let (anns_conversation, _) = converse(&mut anns, "a1", Some(&secret), "Hello").await;
    let his = project(&app, &bob, "His", "").await;
    assert_error(
        move_to(
            &app,
            &bob,
            anns_conversation["_id"].as_str().unwrap(),
            his["_id"].clone(),
        )
        .await,
        404,
        "not_found",
    )
    .await;
    let unchanged = assert_ok(app.get_auth(&path, &ann.token).await).await;
    assert_eq!(
        (
            unchanged["data"]["name"].clone(),
            unchanged["data"]["conversations"].clone()
        ),
        (json!("Secret"), json!(1))
    );
}

#[actix_web::test]
async fn projects_need_the_plan_and_bad_input_changes_nothing() {
    let app = spawn_app_with(|s| s.model.demo_reply_tokens = 3).await;
    let (ann, mut tab) = app.user_on("free").await;
    let refused = post_project(&app, &ann, json!({ "name": "Garden" })).await;
    let body = assert_error(refused, 403, "premium_required").await;
    assert_eq!(body["message"], json!("Project management is a premium feature"));
    let mut frame = send("f1", None, "Hi");
    frame["projectId"] = json!("whatever");
    tab.send(frame).await;
    assert_eq!(
        next_of(&mut tab, "error").await["code"],
        json!("premium_required")
    );

    app.set_plan(&ann.id, "plus").await;
    for (body, status, code) in [
        (json!({}), 400, "field_required"),
        (json!({ "name": "   " }), 400, "field_required"),
        (json!({ "name": "a\u{7}b" }), 400, "validation_error"),
        (json!({ "name": "x".repeat(101) }), 400, "field_too_long"),
        (
            json!({ "name": "Ok", "instructions": "y".repeat(8001) }),
            400,
            "field_too_long",
        ),
        (json!({ "name": 5 }), 400, "validation_error"),
    ] {
        assert_error(post_project(&app, &ann, body.clone()).await, status, code).await;
    }
    assert!(projects_of(&app, &ann).await.is_empty());
    let long = assert_error(
        post_project(&app, &ann, json!({ "name": "x".repeat(101) })).await,
        400,
        "field_too_long",
    )
    .await;
    assert_eq!(long["message"], json!("Name must be at most 100 characters"));

    // Hungarian texts.
    assert_ok(
        app.put_auth("/api/settings", &ann.token, json!({"language": "hu-HU"}))
            .await,
    )
    .await;
    let hu = assert_error(
        post_project(&app, &ann, json!({ "name": "x".repeat(101) })).await,
        400,
        "field_too_long",
    )
    .await;
    assert_eq!(hu["message"], json!("A név legfeljebb 100 karakter lehet"));

    // At most 100 projects.
    for i in 0..100 {
        let row = chat_server::db::projects::ProjectRow {
            id: format!("p{i}"),
            user_id: ann.id.clone(),
            name: format!("P{i}"),
            instructions: String::new(),
            created_at: 1,
            updated_at: 1,
            conversations: 0,
        };
        app.state.db.insert_project(&row).await.unwrap();
    }
    assert_ok(
        app.put_auth("/api/settings", &ann.token, json!({"language": "en-US"}))
            .await,
    )
    .await;
    let full = assert_error(
        post_project(&app, &ann, json!({ "name": "One more" })).await,
        400,
        "too_many_projects",
    )
    .await;
    assert_eq!(full["message"], json!("You can have at most 100 projects"));
    assert_eq!(projects_of(&app, &ann).await.len(), 100);

    // After a downgrade projects are read and deleted, not changed or filled.
    app.set_plan(&ann.id, "free").await;
    assert_error(
        patch_project(&app, &ann, "p1", json!({ "name": "New" })).await,
        403,
        "premium_required",
    )
    .await;
    let (conversation, _) = converse(&mut tab, "f2", None, "Hi").await;
    assert_error(
        move_to(&app, &ann, conversation["_id"].as_str().unwrap(), json!("p1")).await,
        403,
        "premium_required",
    )
    .await;
    assert_ok(app.delete_auth("/api/projects/p1", &ann.token).await).await;
    assert_eq!(projects_of(&app, &ann).await.len(), 99);
}

async fn upload_note(app: &TestApp, user: &TestUser, name: &str, text: &str) -> Value {
    use reqwest::multipart::{Form, Part};
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
    let file = response.json::<Value>().await.unwrap()["data"].clone();
    // Read in the background: wait until it is.
    let info = format!("/api/files/{}/info", file["_id"].as_str().unwrap());
    for _ in 0..200 {
        let now = assert_ok(app.get_auth(&info, &user.token).await).await;
        if now["data"]["status"] == "ready" {
            return now["data"].clone();
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    panic!("{name} was not read in time");
}

async fn add_file(app: &TestApp, user: &TestUser, project: &Value, file: &Value) -> Response {
    app.client
        .post(app.url(&format!(
            "/api/projects/{}/files",
            project["_id"].as_str().unwrap()
        )))
        .bearer_auth(&user.token)
        .json(&json!({ "fileId": file["_id"] }))
        .send()
        .await
        .unwrap()
}

#[actix_web::test]
async fn a_projects_documents_answer_its_conversations_and_leave_with_it() {
    let app = spawn_app_with(|s| s.model.demo_reply_tokens = 3).await;
    let (ann, mut tab) = app.user_on("plus").await;
    let harbour = project(&app, &ann, "Harbour", "").await;
    let note = upload_note(
        &app,
        &ann,
        "notes.md",
        "# Harbour\n\nThe harbour code is ANCHOR-31.\n",
    )
    .await;
    let added = assert_ok(add_file(&app, &ann, &harbour, &note).await).await;
    assert_eq!(added["data"]["files"][0]["_id"], note["_id"]);
    assert_eq!(added["data"]["files"].as_array().unwrap().len(), 1);
    // Adding it again changes nothing.
    let again = assert_ok(add_file(&app, &ann, &harbour, &note).await).await;
    assert_eq!(again["data"]["files"].as_array().unwrap().len(), 1);

    let (_, answer) = converse(&mut tab, "h1", Some(&harbour), "What is the harbour code?").await;
    let content = answer["content"].as_str().unwrap();
    assert!(
        content.starts_with("From your documents (notes.md): «The harbour code is ANCHOR-31»."),
        "{content}"
    );
    assert_eq!(
        answer["sources"],
        json!([{ "fileId": note["_id"], "name": "notes.md", "page": null }])
    );
    // Outside the project the document is not read.
    let (_, outside) = converse(&mut tab, "h2", None, "What is the harbour code?").await;
    assert_eq!(outside["sources"], json!([]));

    // A project's file is never sent in a message, nor put in another project.
    let mut frame = send("h3", None, "Here");
    frame["attachments"] = json!([note["_id"]]);
    tab.send(frame).await;
    assert_eq!(next_of(&mut tab, "error").await["code"], json!("file_in_use"));
    let other = project(&app, &ann, "Other", "").await;
    assert_error(add_file(&app, &ann, &other, &note).await, 409, "file_in_use").await;
    // Another user's file is not found; a file id left out is required.
    let bob = app.register("Bob", "bob@example.com", "password-2").await;
    app.set_plan(&bob.id, "plus").await;
    let bobs = upload_note(&app, &bob, "bob.md", "Bob's notes.").await;
    assert_error(add_file(&app, &ann, &other, &bobs).await, 404, "not_found").await;
    let missing = app
        .client
        .post(app.url(&format!("/api/projects/{}/files", other["_id"].as_str().unwrap())))
        .bearer_auth(&ann.token)
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_error(missing, 400, "field_required").await;
    // Bob cannot add his file to Ann's project either.
    assert_error(add_file(&app, &bob, &harbour, &bobs).await, 404, "not_found").await;

    // Kept by the sweep of files never sent; gone with the project.
    let far = app.clock_now() + 365 * 24 * 3600 * 1000;
    app.state.db.mark_unsent_files_gone(far).await.unwrap();
    let url = format!("/api/files/{}", note["_id"].as_str().unwrap());
    assert_eq!(app.get_auth(&url, &ann.token).await.status(), 200);
    let harbour_id = harbour["_id"].as_str().unwrap();
    assert_ok(
        app.delete_auth(&format!("/api/projects/{harbour_id}"), &ann.token)
            .await,
    )
    .await;
    assert_eq!(app.get_auth(&url, &ann.token).await.status(), 404);
}

/// A project's count and documents never go stale in another tab: starting a conversation
/// in it, deleting one of its conversations and deleting one of its documents each tell
/// every tab the project as it now is.
#[actix_web::test]
async fn every_tab_hears_a_projects_count_and_documents_change() {
    let app = spawn_app_with(|s| s.model.demo_reply_tokens = 3).await;
    let (ann, mut tab) = app.user_on("plus").await;
    let (mut other, _) = WsClient::ready(&app, &ann.token).await;
    let garden = project(&app, &ann, "Garden", "").await;
    next_of(&mut other, "project.updated").await;

    let (conversation, _) = converse(&mut tab, "g1", Some(&garden), "Tulips?").await;
    let created = next_of(&mut other, "conversation.created").await;
    assert_eq!(created["conversation"]["_id"], conversation["_id"]);
    let grown = next_of(&mut other, "project.updated").await;
    assert_eq!(
        (
            grown["project"]["_id"].clone(),
            grown["project"]["conversations"].clone()
        ),
        (garden["_id"].clone(), json!(1))
    );

    let id = conversation["_id"].as_str().unwrap();
    assert_ok(
        app.delete_auth(&format!("/api/conversations/{id}"), &ann.token)
            .await,
    )
    .await;
    assert_eq!(
        next_of(&mut other, "conversation.deleted").await["conversationId"],
        conversation["_id"]
    );
    assert_eq!(
        next_of(&mut other, "project.updated").await["project"]["conversations"],
        json!(0)
    );

    let note = upload_note(&app, &ann, "plan.md", "# Beds\n\nRoses by the wall.\n").await;
    assert_ok(add_file(&app, &ann, &garden, &note).await).await;
    next_of(&mut other, "project.updated").await;
    let file = note["_id"].as_str().unwrap();
    assert_ok(app.delete_auth(&format!("/api/files/{file}"), &ann.token).await).await;
    assert_eq!(
        next_of(&mut other, "project.updated").await["project"]["_id"],
        garden["_id"]
    );
    let read = assert_ok(
        app.get_auth(
            &format!("/api/projects/{}", garden["_id"].as_str().unwrap()),
            &ann.token,
        )
        .await,
    )
    .await;
    assert_eq!(read["data"]["files"], json!([]));
}
