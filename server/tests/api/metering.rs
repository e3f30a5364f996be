//! Metering: every model call records its model, tokens and cost (`model_calls`). Through
//! the OpenAI-compatible stub, which reports usage: answers (from the last chunk of the
//! stream), titles, embeddings, images; cut-off answers counted by us; the demo model's
//! own counts; a deleted account's calls kept.

use std::time::Duration;

use chat_contract::states::{CallOutcome, ModelCallKind, PlanType};
use chat_server::db::model_calls::CallRow;
use serde_json::{json, Value};

use crate::chat::{send, send_with_model, stub_app_with};
use crate::helpers::{assert_ok, spawn_app_with, TestApp};
use crate::model_stub::{EMBEDDING_TOKENS, STUB_USAGE, TITLE_USAGE};
use crate::ws::WsClient;

/// The stub's prices in the catalogue: €1 and €2 per million tokens in and out (1000 and
/// 2000 billionths a token), €0.04 an image.
const MODELS: &str = "[default]\ncontext_tokens = 8192\n\n\
    [models.stub]\ncontext_tokens = 8192\ninput_price = 1.0\noutput_price = 2.0\n\n\
    [models.\"text-embedding-3-small\"]\ncontext_tokens = 8192\ninput_price = 0.5\n\n\
    [models.\"gpt-image-1\"]\ncontext_tokens = 8192\nimage_price = 0.04\n";

/// The stub app, with the stub's prices in its catalogue.
async fn priced_app() -> (TestApp, crate::model_stub::ModelStub) {
    stub_app_with(5, |s| {
        std::fs::write(s.config_dir.join("models.toml"), MODELS).unwrap();
    })
    .await
}

/// The calls recorded for `message_id`, once there are `count` (they are written in the
/// background as each call ends).
pub(crate) async fn calls_of(app: &TestApp, message_id: &str, count: usize) -> Vec<CallRow> {
    for _ in 0..200 {
        let calls = app.state.db.model_calls_of_message(message_id).await.unwrap();
        if calls.len() >= count {
            assert_eq!(calls.len(), count, "{calls:#?}");
            return calls;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!(
        "{count} calls of {message_id} never came: {:#?}",
        app.state.db.model_calls_of_message(message_id).await.unwrap()
    );
}

fn of_kind(calls: &[CallRow], kind: ModelCallKind) -> &CallRow {
    calls
        .iter()
        .find(|c| c.kind == kind)
        .unwrap_or_else(|| panic!("no {kind:?} call in {calls:#?}"))
}

fn answer_id(frames: &[Value]) -> String {
    frames.last().unwrap()["message"]["_id"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[actix_web::test]
async fn an_answer_and_its_title_record_the_tokens_the_provider_reported_and_their_cost() {
    let (app, stub) = priced_app().await;
    let ann = app.register_ann().await;
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;
    tab.send(send("c1", None, "Hello there")).await;
    let frames = tab.until("message.completed").await;
    let answer = answer_id(&frames);
    // Asked to tell what the answer used.
    assert_eq!(
        stub.last_answer_request()["stream_options"],
        json!({ "include_usage": true })
    );

    let calls = calls_of(&app, &answer, 2).await;
    let streamed = of_kind(&calls, ModelCallKind::Answer);
    let (input, output) = (STUB_USAGE.0 as i64, STUB_USAGE.1 as i64);
    assert_eq!(
        (
            streamed.user_id.as_deref(),
            streamed.plan_type,
            streamed.model.as_str(),
            streamed.input_tokens,
            streamed.output_tokens,
            streamed.images,
            streamed.estimated,
            streamed.outcome,
        ),
        (
            Some(ann.id.as_str()),
            PlanType::Free,
            "stub",
            input,
            output,
            0,
            false,
            CallOutcome::Complete
        )
    );
    assert_eq!(streamed.cost_nanos, input * 1000 + output * 2000);
    let title = of_kind(&calls, ModelCallKind::Title);
    let (input, output) = (TITLE_USAGE.0 as i64, TITLE_USAGE.1 as i64);
    assert_eq!(
        (
            title.model.as_str(),
            title.input_tokens,
            title.output_tokens,
            title.estimated
        ),
        ("stub", input, output, false)
    );
    assert_eq!(title.cost_nanos, input * 1000 + output * 2000);
}

#[actix_web::test]
async fn a_cancelled_or_failed_answer_records_what_it_used_counted_by_us() {
    let (app, _stub) = priced_app().await;
    let ann = app.register_ann().await;
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;

    // Cut off after its first chunk: the provider never told; we count the prompt and
    // the text it sent ("Hello ": 3 tokens by the estimate of a model without a
    // tokenizer, a token for 2 bytes).
    tab.send(send_with_model("s1", "Tell me a story", "stub-stall"))
        .await;
    let first = tab.until("message.delta").await;
    let conversation = first[0]["conversation"]["_id"].clone();
    tab.send(json!({"type": "chat.cancel", "conversationId": conversation}))
        .await;
    let frames = tab.until("message.completed").await;
    assert_eq!(frames.last().unwrap()["finishReason"], json!("cancelled"));
    let calls = calls_of(&app, &answer_id(&frames), 1).await;
    let cut = &calls[0];
    assert_eq!(
        (
            cut.kind,
            cut.model.as_str(),
            cut.outcome,
            cut.estimated,
            cut.output_tokens
        ),
        (
            ModelCallKind::Answer,
            "stub-stall",
            CallOutcome::Cancelled,
            true,
            3
        )
    );
    // The service's prompt and the question, at least.
    assert!(cut.input_tokens > 20, "{cut:?}");
    // Not in the catalogue: [default]'s prices, none.
    assert_eq!(cut.cost_nanos, 0);

    // A model that fails before its first word was still asked: its prompt is counted.
    tab.send(send_with_model("s2", "Fail please", "stub-error")).await;
    let frames = tab.until("message.completed").await;
    assert_eq!(frames.last().unwrap()["finishReason"], json!("error"));
    let calls = calls_of(&app, &answer_id(&frames), 1).await;
    assert_eq!(
        (calls[0].outcome, calls[0].estimated, calls[0].output_tokens),
        (CallOutcome::Error, true, 0)
    );
    assert!(calls[0].input_tokens > 20, "{:?}", calls[0]);
}

#[actix_web::test]
async fn the_demo_model_reports_its_own_counts() {
    let app = spawn_app_with(|s| s.model.demo_reply_tokens = 4).await;
    let ann = app.register_ann().await;
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;
    tab.send(send("d1", None, "Count me please")).await;
    let frames = tab.until("message.completed").await;
    let calls = calls_of(&app, &answer_id(&frames), 2).await;
    let streamed = of_kind(&calls, ModelCallKind::Answer);
    // The free plan's model, at the embedded catalogue's prices.
    assert_eq!(
        (
            streamed.model.as_str(),
            streamed.output_tokens,
            streamed.estimated
        ),
        ("gpt-4o-mini", 4, false)
    );
    assert!(streamed.input_tokens > 0);
    let price = chat_server::chat::context::ContextSizes::embedded().price("gpt-4o-mini");
    assert_eq!(
        streamed.cost_nanos,
        price.cost(streamed.input_tokens as u64, 4, 0)
    );
    let title = of_kind(&calls, ModelCallKind::Title);
    // "Count me please": 15 bytes in, the same title out, a token for 4 bytes.
    assert_eq!(
        (title.input_tokens, title.output_tokens, title.estimated),
        (4, 4, false)
    );
}

#[actix_web::test]
async fn a_documents_embeddings_and_its_questions_are_recorded_with_the_tokens_reported() {
    let (app, _stub) = priced_app().await;
    let (ann, mut tab) = crate::documents::paid_user(&app).await;
    let text = crate::documents::filler(true);
    let file = crate::documents::uploaded(&app, &ann, "notes.txt", text.into_bytes()).await;
    crate::documents::processed(&mut tab, &file).await;
    // The document's pieces, in one batch, belong to no message.
    let mut stored = Vec::new();
    for _ in 0..200 {
        stored = app.state.db.model_calls_without_message(&ann.id).await.unwrap();
        if !stored.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(stored.len(), 1, "{stored:#?}");
    let pieces = &stored[0];
    assert_eq!(
        (
            pieces.kind,
            pieces.model.as_str(),
            pieces.estimated,
            pieces.output_tokens
        ),
        (ModelCallKind::Embedding, "text-embedding-3-small", false, 0)
    );
    assert_eq!(pieces.input_tokens % EMBEDDING_TOKENS as i64, 0);
    assert!(pieces.input_tokens >= 2 * EMBEDDING_TOKENS as i64);
    assert_eq!(pieces.cost_nanos, pieces.input_tokens * 500);

    // The question is embedded for the answer: a call of its message.
    let ask = crate::documents::send_with("q1", None, crate::documents::QUESTION, &[&file]);
    tab.send(ask).await;
    let frames = tab.until("message.completed").await;
    let calls = calls_of(&app, &answer_id(&frames), 3).await;
    let question = of_kind(&calls, ModelCallKind::Embedding);
    assert_eq!(question.input_tokens, EMBEDDING_TOKENS as i64);
    of_kind(&calls, ModelCallKind::Answer);
    of_kind(&calls, ModelCallKind::Title);
}

#[actix_web::test]
async fn an_image_is_recorded_at_its_price_and_a_refused_one_costs_nothing() {
    let (app, _stub) = priced_app().await;
    let (ann, mut tab) = app.user_on("base").await;
    let mut frame = send("i1", None, "A lighthouse at dusk");
    frame["imageGeneration"] = json!(true);
    tab.send(frame.clone()).await;
    let frames = tab.until("message.completed").await;
    let calls = calls_of(&app, &answer_id(&frames), 2).await;
    // Titled by the conversation's chat model, not the image model.
    assert_eq!(of_kind(&calls, ModelCallKind::Title).model, "stub");
    let calls = [of_kind(&calls, ModelCallKind::Image).clone()];
    assert_eq!(
        (
            calls[0].kind,
            calls[0].model.as_str(),
            calls[0].images,
            calls[0].input_tokens,
            calls[0].outcome,
            calls[0].cost_nanos
        ),
        (
            ModelCallKind::Image,
            "gpt-image-1",
            1,
            0,
            CallOutcome::Complete,
            40_000_000
        )
    );
    // With the plan the user had.
    assert_eq!(
        (calls[0].user_id.as_deref(), calls[0].plan_type),
        (Some(ann.id.as_str()), PlanType::Base)
    );

    frame["clientId"] = json!("i2");
    frame["content"] = json!("please refuse this one");
    tab.send(frame).await;
    let frames = tab.until("message.completed").await;
    let calls = calls_of(&app, &answer_id(&frames), 1).await;
    assert_eq!(
        (calls[0].images, calls[0].outcome, calls[0].cost_nanos),
        (0, CallOutcome::Error, 0)
    );
}

#[actix_web::test]
async fn a_deleted_accounts_calls_stay_without_it() {
    let (app, _stub) = priced_app().await;
    let ann = app.register_ann().await;
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;
    tab.send(send("c1", None, "Hello")).await;
    let answer = answer_id(&tab.until("message.completed").await);
    let before = calls_of(&app, &answer, 2).await;
    drop(tab);
    assert_ok(app.delete_auth("/api/auth/profile", &ann.token).await).await;
    let after = calls_of(&app, &answer, 2).await;
    assert!(after.iter().all(|c| c.user_id.is_none()), "{after:#?}");
    let cost = |calls: &[CallRow]| calls.iter().map(|c| c.cost_nanos).sum::<i64>();
    assert_eq!(cost(&after), cost(&before));
    assert!(cost(&after) > 0);
}
