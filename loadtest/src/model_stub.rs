//! `loadtest model-stub`: an OpenAI-compatible chat API that answers at a model's pace,
//! in its own process. The server talks to it as to any upstream (async-openai, SSE), and
//! `loadtest direct` calls it the same way as the reference, so the bench can tell what
//! the server adds on the real-model path.
//!
//! - `POST /v1/chat/completions` with `"stream": true`: one `chat.completion.chunk` per
//!   token, each written when due (token `i` at `first_token + i / tokens_per_sec` after
//!   the request), then a chunk with `finish_reason: "stop"` and `data: [DONE]`.
//!   Without `stream`: one `chat.completion` with a short fixed text (the server asks for
//!   conversation titles that way).
//! - `GET /v1/models`: one model.
//!
//! Any `Authorization` is accepted; of the request only `model` and `stream` are read.

use std::convert::Infallible;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use actix_web::web::{self, Bytes};
use actix_web::{App, HttpResponse, HttpServer};
use clap::Args;
use futures_util::Stream;
use serde::Deserialize;
use serde_json::json;

#[derive(Args)]
pub struct StubArgs {
    #[arg(long, default_value = "127.0.0.1:9300")]
    bind: String,
    #[arg(long, default_value_t = 50)]
    tokens_per_sec: u32,
    /// Tokens in one answer.
    #[arg(long, default_value_t = 120)]
    reply_tokens: usize,
    /// Extra wait before the first token (a model's prompt processing).
    #[arg(long, default_value_t = 0)]
    first_token_ms: u64,
    /// Worker threads, each with its own event loop; connections are spread over them.
    #[arg(long, default_value_t = 2)]
    threads: usize,
}

/// When the tokens of an answer are due.
#[derive(Clone, Copy, Debug)]
pub struct Pace {
    pub first: Duration,
    pub period: Duration,
    pub tokens: usize,
}

/// The text of an answer: plain words, with a line break and a quoted word now and then
/// so the JSON of the chunks has escapes in it as a real model's does.
const WORDS: &[&str] = &[
    "The ",
    "stub ",
    "streams ",
    "one ",
    "token ",
    "at ",
    "a ",
    "time, ",
    "like ",
    "a ",
    "\"real\" ",
    "model ",
    "would.\n",
];

/// The title of every conversation (answers without `stream`).
const TITLE: &str = "Bench conversation";

pub fn serve(args: StubArgs) -> anyhow::Result<()> {
    let pace = Pace {
        first: Duration::from_millis(args.first_token_ms),
        period: Duration::from_secs_f64(1.0 / f64::from(args.tokens_per_sec.max(1))),
        tokens: args.reply_tokens.max(1),
    };
    eprintln!(
        "model stub on http://{}/v1: {} tokens at {}/s after {} ms, {} threads",
        args.bind, pace.tokens, args.tokens_per_sec, args.first_token_ms, args.threads
    );
    actix_web::rt::System::new().block_on(async move {
        HttpServer::new(move || {
            App::new()
                .app_data(web::Data::new(pace))
                // The server sends up to 20 earlier messages of up to 32,000 characters.
                .app_data(web::PayloadConfig::new(16 * 1024 * 1024))
                .route("/v1/chat/completions", web::post().to(completions))
                .route("/v1/models", web::get().to(models))
        })
        // The head and the first chunk are two small writes: with Nagle on, the chunk
        // waits for the client's delayed ACK (~40 ms), which would be all we measure.
        .on_connect(|conn, _| {
            if let Some(tcp) = conn.downcast_ref::<actix_web::rt::net::TcpStream>() {
                let _ = tcp.set_nodelay(true);
            }
        })
        .workers(args.threads.max(1))
        .backlog(4096)
        .bind(&args.bind)?
        .run()
        .await?;
        Ok(())
    })
}

#[derive(Deserialize)]
struct Request {
    #[serde(default)]
    model: String,
    #[serde(default)]
    stream: bool,
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

fn unix_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

async fn completions(body: Bytes, pace: web::Data<Pace>) -> HttpResponse {
    let request: Request = match serde_json::from_slice(&body) {
        Ok(r) => r,
        Err(e) => {
            return HttpResponse::BadRequest().json(json!({
                "error": { "message": format!("bad request body: {e}"), "type": "invalid_request_error" }
            }))
        }
    };
    let id = format!("chatcmpl-stub-{}", NEXT_ID.fetch_add(1, Ordering::Relaxed));
    if !request.stream {
        return HttpResponse::Ok().json(completion(&id, unix_secs(), &request.model));
    }
    HttpResponse::Ok()
        .content_type("text/event-stream")
        .insert_header(("Cache-Control", "no-cache"))
        .streaming(answer(id, request.model, unix_secs(), **pace))
}

async fn models() -> HttpResponse {
    HttpResponse::Ok().json(json!({
        "object": "list",
        "data": [{ "id": "stub", "object": "model", "created": 0, "owned_by": "loadtest" }],
    }))
}

fn completion(id: &str, created: u64, model: &str) -> serde_json::Value {
    json!({
        "id": id,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [{
            "index": 0,
            "message": { "role": "assistant", "content": TITLE },
            "finish_reason": "stop",
        }],
        "usage": { "prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12 },
    })
}

/// The `i`-th token of every answer.
pub fn token(i: usize) -> &'static str {
    WORDS[i % WORDS.len()]
}

/// One `data:` event: a chunk with `delta` and `finish_reason`.
fn event(id: &str, created: u64, model: &str, delta: serde_json::Value, finish: Option<&str>) -> Bytes {
    let chunk = json!({
        "id": id,
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
        "choices": [{ "index": 0, "delta": delta, "finish_reason": finish }],
    });
    Bytes::from(format!("data: {chunk}\n\n"))
}

/// The SSE body of one answer. Each token waits for its own due time (measured from the
/// start, so a late wake-up does not push the later tokens back), and is handed to actix
/// alone: the stream is pending until the next is due, so actix writes it out at once.
pub fn answer(
    id: String,
    model: String,
    created: u64,
    pace: Pace,
) -> impl Stream<Item = Result<Bytes, Infallible>> {
    let start = tokio::time::Instant::now();
    futures_util::stream::unfold(0usize, move |i| {
        let (id, model) = (id.clone(), model.clone());
        async move {
            let bytes = if i < pace.tokens {
                let due = start + pace.first + pace.period.mul_f64(i as f64);
                // A token already due goes now, not at the timer's next millisecond tick.
                if due > tokio::time::Instant::now() {
                    tokio::time::sleep_until(due).await;
                }
                // The first chunk names the role, as OpenAI's does.
                let delta = if i == 0 {
                    json!({ "role": "assistant", "content": token(i) })
                } else {
                    json!({ "content": token(i) })
                };
                event(&id, created, &model, delta, None)
            } else if i == pace.tokens {
                event(&id, created, &model, json!({}), Some("stop"))
            } else if i == pace.tokens + 1 {
                Bytes::from_static(b"data: [DONE]\n\n")
            } else {
                return None;
            };
            Some((Ok(bytes), i + 1))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use async_openai::types::chat::{CreateChatCompletionResponse, CreateChatCompletionStreamResponse};
    use futures_util::StreamExt;

    #[tokio::test]
    async fn chunks_parse_as_async_openai_reads_them_and_come_at_the_pace() {
        let pace = Pace {
            first: Duration::from_millis(5),
            period: Duration::from_millis(2),
            tokens: 15,
        };
        let started = std::time::Instant::now();
        let events: Vec<Bytes> = answer("c1".into(), "m".into(), 7, pace)
            .map(|b| b.unwrap())
            .collect()
            .await;
        // 5 ms to the first token, then 14 periods of 2 ms.
        assert!(started.elapsed() >= Duration::from_millis(33));
        assert_eq!(events.len(), 15 + 2);
        assert_eq!(events.last().unwrap().as_ref(), b"data: [DONE]\n\n");
        let mut text = String::new();
        for (i, e) in events[..16].iter().enumerate() {
            let line = std::str::from_utf8(e).unwrap();
            let data = line.strip_prefix("data: ").unwrap().strip_suffix("\n\n").unwrap();
            let chunk: CreateChatCompletionStreamResponse = serde_json::from_str(data).unwrap();
            assert_eq!(
                (chunk.id.as_str(), chunk.model.as_str(), chunk.created),
                ("c1", "m", 7)
            );
            assert_eq!(chunk.object, "chat.completion.chunk");
            let choice = &chunk.choices[0];
            assert_eq!(choice.delta.role.is_some(), i == 0);
            assert_eq!(choice.finish_reason.is_some(), i == 15);
            text.push_str(choice.delta.content.as_deref().unwrap_or(""));
        }
        let want: String = (0..15).map(token).collect();
        assert_eq!(text, want);
        assert!(text.contains("\"real\"") && text.contains('\n'));
    }

    #[test]
    fn the_title_answer_parses_as_a_chat_completion() {
        let body = completion("c2", 7, "m").to_string();
        let r: CreateChatCompletionResponse = serde_json::from_str(&body).unwrap();
        assert_eq!(r.choices[0].message.content.as_deref(), Some(TITLE));
    }
}
