//! Image generation: the demo draws a PNG with no key; an OpenAI-compatible images API
//! (the stub) is asked for one image; the image is a file of the answer in every tab;
//! the plan's image limit holds under parallel sends; failures count nothing.

use chat_contract::states::Service;
use serde_json::{json, Value};

use crate::chat::{send, stub_app_with};
use crate::helpers::{assert_ok, spawn_app_with};
use crate::ws::WsClient;

fn image_send(client_id: &str, conversation: Option<&Value>, prompt: &str) -> Value {
    let mut frame = send(client_id, conversation, prompt);
    frame["imageGeneration"] = json!(true);
    frame
}

#[actix_web::test]
async fn the_demo_draws_an_image_that_every_tab_shows_and_its_owner_downloads() {
    let app = spawn_app_with(|_| {}).await;
    let (ann, mut tab) = app.user_on("base").await;
    let (mut other, _) = WsClient::ready(&app, &ann.token).await;
    tab.send(image_send("i1", None, "A red fox in the snow")).await;
    let frames = tab.until("message.completed").await;
    let answer = &frames.last().unwrap()["message"];
    assert_eq!(
        answer["content"],
        json!("Here is the image: *A red fox in the snow*")
    );
    assert_eq!(answer["model"], json!("gpt-image-1"));
    let image = &answer["attachments"][0];
    assert_eq!(
        (
            image["kind"].clone(),
            image["mime"].clone(),
            image["name"].clone(),
            image["width"].clone()
        ),
        (
            json!("image"),
            json!("image/jpeg"),
            json!("a-red-fox-in-the-snow.jpg"),
            json!(256)
        )
    );
    assert_eq!(answer["attachments"].as_array().unwrap().len(), 1);
    assert_eq!(
        other.until("message.completed").await.last().unwrap()["message"]["attachments"],
        answer["attachments"]
    );

    // Stored (re-encoded like an upload): the owner downloads it; anyone else finds nothing.
    let url = image["url"].as_str().unwrap();
    let got = app.get_auth(url, &ann.token).await;
    assert_eq!(got.status(), 200);
    let bytes = got.bytes().await.unwrap();
    assert_eq!(image::guess_format(&bytes).unwrap(), image::ImageFormat::Jpeg);
    let bob = app.register("Bob", "bob@example.com", "password-2").await;
    assert_eq!(app.get_auth(url, &bob.token).await.status(), 404);
    // It is the answer's in the stored conversation, and cannot be deleted on its own.
    let conversation = frames.last().unwrap()["conversationId"]
        .as_str()
        .unwrap()
        .to_owned();
    let stored = assert_ok(
        app.get_auth(&format!("/api/conversations/{conversation}"), &ann.token)
            .await,
    )
    .await;
    assert_eq!(
        stored["data"]["messages"][1]["attachments"],
        answer["attachments"]
    );
    assert_eq!(app.delete_auth(url, &ann.token).await.status(), 409);
    assert_eq!(app.used_today(&ann.token, "images").await, json!(1));
    assert_eq!(app.used_today(&ann.token, "responses").await, json!(1));

    // Deleting the conversation takes the image with it.
    assert_ok(
        app.delete_auth(&format!("/api/conversations/{conversation}"), &ann.token)
            .await,
    )
    .await;
    assert_eq!(app.get_auth(url, &ann.token).await.status(), 404);
}

#[actix_web::test]
async fn image_generation_is_refused_on_plans_without_it_and_beside_a_web_search() {
    let app = spawn_app_with(|_| {}).await;
    let (ann, mut tab) = app.user_on("free").await;
    tab.send(image_send("f1", None, "A fox")).await;
    let error = tab.expect("error").await;
    assert_eq!(
        (
            error["code"].clone(),
            error["message"].clone(),
            error["field"].clone()
        ),
        (
            json!("premium_required"),
            json!("Image generation is a premium feature"),
            json!("imageGeneration")
        )
    );
    assert_ok(
        app.put_auth("/api/settings", &ann.token, json!({"language": "hu-HU"}))
            .await,
    )
    .await;
    app.state.realtime.accounts.forget(&ann.id);
    let (mut hu, _) = WsClient::ready(&app, &ann.token).await;
    hu.send(image_send("f2", None, "A fox")).await;
    assert_eq!(
        hu.expect("error").await["message"],
        json!("A képgenerálás prémium funkció")
    );

    app.set_plan(&ann.id, "base").await;
    app.state.realtime.accounts.forget(&ann.id);
    let mut both = image_send("f3", None, "A fox");
    both["webSearch"] = json!(true);
    hu.send(both).await;
    assert_eq!(hu.expect("error").await["code"], json!("invalid_frame"));
    assert_eq!(app.used_today(&ann.token, "responses").await, json!(0));
    assert_eq!(app.used_today(&ann.token, "images").await, json!(0));
}

#[actix_web::test]
async fn parallel_sends_cannot_pass_the_image_limit_together() {
    let app = spawn_app_with(|_| {}).await;
    let (ann, mut tab) = app.user_on("base").await;
    // Base makes 5 images a day: 4 are made.
    for _ in 0..4 {
        app.state
            .quotas
            .consume(&ann.id, Service::ImageGenerations)
            .await
            .unwrap();
    }
    let (mut other, _) = WsClient::ready(&app, &ann.token).await;
    futures_util::join!(
        tab.send(image_send("p1", None, "A fox")),
        other.send(image_send("p2", None, "An owl")),
    );
    let mut outcomes = [tab.outcome_of("p1").await, other.outcome_of("p2").await];
    outcomes.sort();
    assert_eq!(outcomes, ["answered", "image_limit_reached"]);
    assert_eq!(app.used_today(&ann.token, "images").await, json!(5));
    assert_eq!(app.used_today(&ann.token, "responses").await, json!(1));
}

#[actix_web::test]
async fn an_images_api_is_asked_for_one_image_and_its_failures_count_nothing() {
    let (app, stub) = stub_app_with(5, |s| s.model.total_timeout_secs = 2).await;
    let (ann, mut tab) = app.user_on("base").await;
    tab.send(image_send("o1", None, "A lighthouse at night")).await;
    let frames = tab.until("message.completed").await;
    let answer = &frames.last().unwrap()["message"];
    // The model's own words for what it drew.
    assert_eq!(
        answer["content"],
        json!("Here is the image: *A lighthouse at night, in watercolour*")
    );
    assert_eq!(answer["attachments"][0]["width"], json!(64));
    let asked = stub.image_requests.lock().unwrap()[0].clone();
    assert_eq!(
        (
            asked["model"].clone(),
            asked["prompt"].clone(),
            asked["n"].clone(),
            asked.get("response_format").cloned()
        ),
        (
            json!("gpt-image-1"),
            json!("A lighthouse at night"),
            json!(1),
            None
        )
    );
    assert_eq!(app.used_today(&ann.token, "images").await, json!(1));

    // A follow-up question: the model is not shown the answer's image as a turn of its own.
    let conversation = frames.last().unwrap()["conversationId"].clone();
    tab.send(send("o2", Some(&conversation), "Describe it")).await;
    tab.until("message.completed").await;
    let chat = stub.last_answer_request();
    assert!(!chat.to_string().contains("image_url"), "{chat}");

    // Refused upstream, hung, or not an image: an error, and nothing counted or kept.
    for (client, prompt, code) in [
        ("o3", "please refuse this", "image_refused"),
        ("o4", "hang forever", "model_error"),
        ("o5", "garbage please", "model_error"),
    ] {
        tab.send(image_send(client, None, prompt)).await;
        let frames = tab.until("message.completed").await;
        let done = frames.last().unwrap();
        assert_eq!(done["finishReason"], json!("error"), "{prompt}");
        assert_eq!(done["message"]["attachments"], json!([]));
        let error = tab.expect("error").await;
        assert_eq!(error["code"], json!(code), "{prompt}");
    }
    let error_text = {
        tab.send(image_send("o6", None, "refuse again")).await;
        tab.until("message.completed").await;
        tab.expect("error").await["message"].clone()
    };
    assert_eq!(
        error_text,
        json!("The image could not be made: the request was refused. Try describing it differently.")
    );
    assert_eq!(app.used_today(&ann.token, "images").await, json!(1));
    assert_eq!(app.used_today(&ann.token, "responses").await, json!(2));
}

#[actix_web::test]
async fn an_image_cancelled_once_asked_for_counts_and_stores_nothing() {
    let (app, stub) = stub_app_with(5, |_| {}).await;
    let (ann, mut tab) = app.user_on("base").await;
    tab.send(image_send("c1", None, "hang a while")).await;
    let created = tab.expect("conversation.created").await;
    for _ in 0..100 {
        if !stub.image_requests.lock().unwrap().is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(stub.image_requests.lock().unwrap().len(), 1);
    tab.send(json!({"type": "chat.cancel", "conversationId": created["conversation"]["_id"]}))
        .await;
    let frames = tab.until("message.completed").await;
    assert_eq!(frames.last().unwrap()["finishReason"], json!("cancelled"));
    // The images API was asked (and bills the image): a cancel does not make it free.
    assert_eq!(app.used_today(&ann.token, "images").await, json!(1));
    assert_eq!(app.used_today(&ann.token, "responses").await, json!(1));
    assert_eq!(app.state.db.stored_bytes(&ann.id).await.unwrap(), 0);
}
