//! A local OpenAI-compatible server: streams chat completions as server-sent events.
//! The model name picks the behaviour: `stub` answers, `stub-error` fails with 500,
//! `stub-stall` sends one chunk and then nothing, `stub-flood` streams 12 MB at once,
//! `stub-hang` sends the response headers and never a chunk, `stub-trickle` sends a
//! chunk every second forever.
//!
//! It reports what each call used, as OpenAI does: [`STUB_USAGE`] for a streamed answer
//! (in a last chunk, when asked with `stream_options.include_usage`), [`TITLE_USAGE`] for
//! a call answered in full, [`EMBEDDING_TOKENS`] per input embedded.
//!
//! It also makes embeddings (`/v1/embeddings`): word counts hashed into
//! [`EMBEDDING_DIMENSIONS`] buckets, so texts sharing words are near each other.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::{web, App, HttpResponse, HttpServer};
use bytes::Bytes;
use futures_util::stream::{self, StreamExt};
use serde_json::{json, Value};

/// What a streamed answer used: (prompt, completion) tokens.
pub const STUB_USAGE: (u64, u64) = (120, 5);
/// What a call answered in full (a title, a search step) used.
pub const TITLE_USAGE: (u64, u64) = (30, 3);
/// The tokens of each input embedded.
pub const EMBEDDING_TOKENS: u64 = 7;

pub const STUB_WORDS: [&str; 5] = ["Hello ", "from ", "the ", "stub ", "model."];
/// What a search model (its name holds `search`) answers: a fact and the page it links.
pub const SEARCH_WORDS: [&str; 3] = [
    "The keeper's code is LIGHTHOUSE-77 ",
    "([The lighthouse page](https://example.com/lighthouse)), ",
    "says [example.com](https://example.com/lighthouse).",
];

#[derive(Clone, Default)]
pub struct ModelStub {
    pub requests: Arc<Mutex<Vec<Value>>>,
    pub embedding_requests: Arc<Mutex<Vec<Value>>>,
    /// Embeddings answer 500 while set.
    pub embeddings_fail: Arc<AtomicBool>,
    /// Embeddings wait while set.
    pub embeddings_hold: Arc<AtomicBool>,
    pub image_requests: Arc<Mutex<Vec<Value>>>,
}

impl ModelStub {
    /// The last streamed request: an answer's, not a title's (which may come later).
    pub fn last_answer_request(&self) -> Value {
        let requests = self.requests.lock().unwrap();
        requests
            .iter()
            .rev()
            .find(|r| r["stream"] == json!(true))
            .cloned()
            .expect("an answer was asked for")
    }
}

pub const EMBEDDING_DIMENSIONS: usize = 64;

/// A text's stub embedding: how often its words (lowercased, alphanumeric) fall in each
/// of [`EMBEDDING_DIMENSIONS`] buckets.
pub fn stub_embedding(text: &str) -> Vec<f32> {
    let mut v = vec![0f32; EMBEDDING_DIMENSIONS];
    for word in text.split(|c: char| !c.is_alphanumeric()).filter(|w| w.len() > 3) {
        let hash = word
            .to_lowercase()
            .bytes()
            .fold(2166136261u32, |h, b| (h ^ u32::from(b)).wrapping_mul(16777619));
        v[hash as usize % EMBEDDING_DIMENSIONS] += 1.0;
    }
    v
}

async fn embeddings(stub: web::Data<ModelStub>, body: web::Json<Value>) -> HttpResponse {
    let body = body.into_inner();
    stub.embedding_requests.lock().unwrap().push(body.clone());
    while stub.embeddings_hold.load(Ordering::SeqCst) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    if stub.embeddings_fail.load(Ordering::SeqCst) {
        return HttpResponse::InternalServerError()
            .json(json!({ "error": { "message": "the stub failed", "type": "server_error" } }));
    }
    let inputs: Vec<String> = match &body["input"] {
        Value::String(s) => vec![s.clone()],
        Value::Array(a) => a
            .iter()
            .map(|v| v.as_str().unwrap_or_default().to_owned())
            .collect(),
        _ => Vec::new(),
    };
    // Answered in reverse, as the API allows: the client must order them by index.
    let data: Vec<Value> = inputs
        .iter()
        .enumerate()
        .rev()
        .map(|(i, text)| json!({ "object": "embedding", "index": i, "embedding": stub_embedding(text) }))
        .collect();
    HttpResponse::Ok().json(json!({
        "object": "list", "data": data, "model": body["model"],
        "usage": { "prompt_tokens": EMBEDDING_TOKENS * inputs.len() as u64, "total_tokens": EMBEDDING_TOKENS * inputs.len() as u64 },
    }))
}

fn chunk(content: Option<&str>, finish: Option<&str>) -> Bytes {
    let delta = match content {
        Some(c) => json!({ "content": c }),
        None => json!({}),
    };
    let body = json!({
        "id": "chatcmpl-stub", "object": "chat.completion.chunk", "created": 1, "model": "stub",
        "choices": [{ "index": 0, "delta": delta, "finish_reason": finish }],
    });
    Bytes::from(format!("data: {body}\n\n"))
}

/// The last chunk of a stream asked to tell its usage: no choices, the counts.
fn usage_chunk() -> Bytes {
    let (prompt, completion) = STUB_USAGE;
    let body = json!({
        "id": "chatcmpl-stub", "object": "chat.completion.chunk", "created": 1, "model": "stub",
        "choices": [],
        "usage": { "prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion },
    });
    Bytes::from(format!("data: {body}\n\n"))
}

async fn completions(stub: web::Data<ModelStub>, body: web::Json<Value>) -> HttpResponse {
    let body = body.into_inner();
    stub.requests.lock().unwrap().push(body.clone());
    let model = body["model"].as_str().unwrap_or("").to_owned();
    if model == "stub-error" {
        return HttpResponse::InternalServerError()
            .json(json!({ "error": { "message": "the stub failed", "type": "server_error" } }));
    }
    if body["stream"] != json!(true) {
        return HttpResponse::Ok().json(json!({
            "id": "chatcmpl-stub", "object": "chat.completion", "created": 1, "model": model,
            "choices": [{ "index": 0, "message": { "role": "assistant", "content": "Stub title" }, "finish_reason": "stop" }],
            "usage": { "prompt_tokens": TITLE_USAGE.0, "completion_tokens": TITLE_USAGE.1, "total_tokens": TITLE_USAGE.0 + TITLE_USAGE.1 },
        }));
    }
    if model == "stub-flood" {
        let block = "x".repeat(2048);
        let events =
            stream::iter((0..6000).map(move |_| Ok::<_, actix_web::Error>(chunk(Some(&block), None))))
                .chain(stream::iter([Ok(Bytes::from_static(b"data: [DONE]\n\n"))]));
        return HttpResponse::Ok()
            .content_type("text/event-stream")
            .streaming(events);
    }
    if model == "stub-hang" {
        return HttpResponse::Ok()
            .content_type("text/event-stream")
            .streaming(stream::pending::<Result<Bytes, actix_web::Error>>());
    }
    if model == "stub-trickle" {
        let events = stream::unfold(0usize, |i| async move {
            // The first chunk at once, so the answer has a start to keep.
            if i > 0 {
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            Some((
                Ok::<_, actix_web::Error>(chunk(Some(&format!("tick{i} ")), None)),
                i + 1,
            ))
        });
        return HttpResponse::Ok()
            .content_type("text/event-stream")
            .streaming(events);
    }
    let stall = model == "stub-stall";
    let tells_usage = body["stream_options"]["include_usage"] == json!(true);
    let words: &'static [&'static str] = if model.contains("search") {
        &SEARCH_WORDS
    } else {
        &STUB_WORDS
    };
    let events = stream::unfold(0usize, move |i| async move {
        if stall && i == 1 {
            tokio::time::sleep(Duration::from_secs(3600)).await;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
        let bytes = match i {
            _ if i < words.len() => chunk(Some(words[i]), None),
            _ if i == words.len() => chunk(None, Some("stop")),
            _ if i == words.len() + 1 && tells_usage => usage_chunk(),
            _ if i == words.len() + 1 => Bytes::from_static(b"data: [DONE]\n\n"),
            _ if i == words.len() + 2 && tells_usage => Bytes::from_static(b"data: [DONE]\n\n"),
            _ => return None,
        };
        Some((Ok::<_, actix_web::Error>(bytes), i + 1))
    });
    HttpResponse::Ok()
        .content_type("text/event-stream")
        .streaming(events)
}

/// `/v1/images/generations`: a 64×64 PNG as base64; a prompt with `refuse` is refused
/// as OpenAI's safety system does (400), one with `hang` never answered, one with
/// `garbage` answered with bytes that are no image.
async fn images(stub: web::Data<ModelStub>, body: web::Json<Value>) -> HttpResponse {
    use base64::Engine;
    let body = body.into_inner();
    stub.image_requests.lock().unwrap().push(body.clone());
    let prompt = body["prompt"].as_str().unwrap_or("").to_owned();
    if prompt.contains("refuse") {
        return HttpResponse::BadRequest().json(json!({ "error": {
            "message": "Your request was rejected as a result of our safety system.",
            "type": "image_generation_user_error", "param": null, "code": "content_policy_violation" } }));
    }
    if prompt.contains("hang") {
        tokio::time::sleep(Duration::from_secs(3600)).await;
    }
    let bytes = if prompt.contains("garbage") {
        b"not an image at all".to_vec()
    } else {
        let img = image::RgbImage::from_pixel(64, 64, image::Rgb([10, 120, 200]));
        let mut out = std::io::Cursor::new(Vec::new());
        img.write_to(&mut out, image::ImageFormat::Png).unwrap();
        out.into_inner()
    };
    let b64 = base64::engine::general_purpose::STANDARD.encode(bytes);
    HttpResponse::Ok().json(json!({ "created": 1, "data": [{ "b64_json": b64, "revised_prompt": format!("{prompt}, in watercolour") }] }))
}

/// Starts the stub; returns its base URL (`http://127.0.0.1:port/v1`).
pub fn start() -> (String, ModelStub) {
    let stub = ModelStub::default();
    let data = web::Data::new(stub.clone());
    let server = HttpServer::new(move || {
        App::new()
            .app_data(data.clone())
            .route("/v1/chat/completions", web::post().to(completions))
            .route("/v1/embeddings", web::post().to(embeddings))
            .route("/v1/images/generations", web::post().to(images))
    })
    .workers(1)
    .bind("127.0.0.1:0")
    .unwrap();
    let port = server.addrs()[0].port();
    actix_web::rt::spawn(server.run());
    (format!("http://127.0.0.1:{port}/v1"), stub)
}
