//! `loadtest direct`: the model stub called directly, the reference for the chat runs
//! through the server. Each of `concurrency` virtual users asks for a new one-message
//! conversation, reads the answer's SSE stream to `[DONE]`, and asks again at once. The
//! time from sending the request to the first content chunk is recorded as
//! [`Delay::FirstDelta`], beside the chat run's send → first delta at the tab.

use std::path::PathBuf;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::Args;
use serde::Deserialize;
use tokio::sync::watch;

use crate::metrics::{Counters, Delay, Metrics};
use crate::report::{self, Phase, Report, ServerFigures, Shape};
use crate::scenarios::{first_send, Kind};
use crate::{cpu_spent, procfs};

#[derive(Args)]
pub struct DirectArgs {
    /// The stub's base URL (`/v1` is added).
    #[arg(long, default_value = "http://127.0.0.1:9300")]
    stub: String,
    /// Virtual users, each with one answer streaming at a time.
    #[arg(long, default_value_t = 1)]
    concurrency: usize,
    /// Seconds of the measured window, after every user got its first token.
    #[arg(long, default_value_t = 20)]
    duration: u64,
    /// Seconds the users' first requests are spread over.
    #[arg(long, default_value_t = 0.0)]
    spread: f64,
    /// The model named in the requests.
    #[arg(long, default_value = "gpt-4.1-mini")]
    model: String,
    /// The stub's process id, for its CPU time.
    #[arg(long)]
    stub_pid: Option<u32>,
    /// Tokio worker threads.
    #[arg(long, default_value_t = 2)]
    threads: usize,
    #[arg(long)]
    json: Option<PathBuf>,
    #[arg(long, default_value = "")]
    label: String,
}

pub fn run(args: DirectArgs) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(args.threads.max(1))
        .enable_all()
        .build()?;
    let report = runtime.block_on(measure(&args))?;
    crate::publish(&report, args.json.as_deref())
}

async fn measure(args: &DirectArgs) -> anyhow::Result<Report> {
    let url = format!(
        "{}/v1/chat/completions",
        args.stub.trim_end_matches('/').trim_end_matches("/v1")
    );
    let users = args.concurrency.max(1);
    // Kept-alive connections, like the server's own client to its model.
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(users)
        .tcp_nodelay(true)
        .build()?;
    let metrics = Arc::new(Metrics::default());
    let (stop, stop_rx) = watch::channel(false);
    let mut tasks = tokio::task::JoinSet::new();
    let spread = Duration::from_secs_f64(args.spread.max(0.0));
    for n in 0..users {
        let user = User {
            client: client.clone(),
            url: url.clone(),
            model: args.model.clone(),
            n,
            metrics: metrics.clone(),
        };
        tasks.spawn(user.run(first_send(n, users, spread), stop_rx.clone()));
    }
    // Warm-up: until every user has its first token (its connection open and streaming).
    let warming = Instant::now();
    let limit = spread + Duration::from_secs(60);
    while metrics.c.started.load(Relaxed) < users as u64 && warming.elapsed() < limit {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let warmup_secs = warming.elapsed().as_secs_f64();
    let stub = args.stub_pid.map(|p| vec![p]).unwrap_or_default();
    let cpu_go = procfs::cpu_secs(&stub);
    let at_go = metrics.c.read();
    metrics.set_recording(true);
    let measured = Instant::now();
    let end = measured + Duration::from_secs(args.duration);
    let mut last = at_go.clone();
    while Instant::now() < end {
        tokio::time::sleep(Duration::from_secs(1).min(end.saturating_duration_since(Instant::now()))).await;
        let now = metrics.c.read();
        eprintln!("{}", report::progress_rate_line(measured, &last, &now, &stub));
        last = now;
    }
    metrics.set_recording(false);
    let at_end = metrics.c.read();
    let secs = measured.elapsed().as_secs_f64();
    let stub_cpu = cpu_spent(&stub, cpu_go);
    // Let the answers in flight finish (they count for the integrity checks only).
    let _ = stop.send(true);
    let _ = tokio::time::timeout(Duration::from_secs(30), async {
        while tasks.join_next().await.is_some() {}
    })
    .await;
    tasks.abort_all();
    Ok(Report::new(
        Kind::Direct,
        Shape {
            label: args.label.clone(),
            users,
            tabs: 1,
            servers: 1,
            procs: 1,
        },
        Phase {
            ramp_secs: 0.0,
            warmup_secs,
            secs,
            at_go,
            at_end,
        },
        metrics.tally(),
        ServerFigures::default(),
        stub_cpu,
    ))
}

struct User {
    client: reqwest::Client,
    url: String,
    model: String,
    n: usize,
    metrics: Arc<Metrics>,
}

impl User {
    async fn run(self, first: Duration, stop: watch::Receiver<bool>) {
        tokio::time::sleep(first).await;
        let m = &self.metrics;
        let mut started = false;
        let mut asked = 0u64;
        while !*stop.borrow() {
            asked += 1;
            m.c.streaming.fetch_add(1, Relaxed);
            let outcome = self.ask(asked, &mut started).await;
            m.c.streaming.fetch_sub(1, Relaxed);
            if !started {
                // A failed first request must not hold the warm-up.
                started = true;
                Counters::inc(&m.c.started);
            }
            if let Err(e) = outcome {
                Counters::inc(&m.c.connect_errors);
                if m.c.connect_errors.load(Relaxed) <= 3 {
                    eprintln!("request failed: {e:#}");
                }
                // Back off a little so a refusing stub is not hammered in a tight loop.
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }

    /// One answer, read to `[DONE]`.
    async fn ask(&self, asked: u64, started: &mut bool) -> anyhow::Result<()> {
        let m = &self.metrics;
        let body = serde_json::json!({
            "model": self.model,
            "stream": true,
            "messages": [{ "role": "user", "content": format!("Load test message {asked} from user {}.", self.n) }],
        });
        let sent_at = Instant::now();
        Counters::inc(&m.c.sends);
        let mut response = self
            .client
            .post(&self.url)
            .bearer_auth("bench")
            .json(&body)
            .send()
            .await?
            .error_for_status()?;
        let mut events = SseEvents::default();
        let mut got_first = false;
        let mut finish: Option<String> = None;
        while let Some(bytes) = response.chunk().await? {
            m.c.bytes.fetch_add(bytes.len() as u64, Relaxed);
            events.push(&bytes);
            while let Some(data) = events.next_data()? {
                Counters::inc(&m.c.frames);
                if data == "[DONE]" {
                    Counters::inc(&m.c.answers);
                    if finish.as_deref() != Some("stop") {
                        Counters::inc(&m.c.bad_answers);
                    }
                    return Ok(());
                }
                let chunk: Chunk = serde_json::from_str(&data).context("a chunk that is not JSON")?;
                for choice in chunk.choices {
                    if choice.delta.content.is_some_and(|c| !c.is_empty()) {
                        Counters::inc(&m.c.deltas);
                        if !got_first {
                            got_first = true;
                            m.record(Delay::FirstDelta, sent_at.elapsed().as_micros() as i64);
                            if !*started {
                                *started = true;
                                Counters::inc(&m.c.started);
                            }
                        }
                    }
                    if choice.finish_reason.is_some() {
                        finish = choice.finish_reason;
                    }
                }
            }
        }
        anyhow::bail!("the stream ended without [DONE]")
    }
}

/// A streamed chunk, as far as the harness reads it.
#[derive(Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Vec<Choice>,
}

#[derive(Deserialize)]
struct Choice {
    #[serde(default)]
    delta: ChunkDelta,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Default, Deserialize)]
struct ChunkDelta {
    #[serde(default)]
    content: Option<String>,
}

/// Server-sent events out of the body's bytes, which may split an event (or a UTF-8
/// character) anywhere.
#[derive(Default)]
struct SseEvents {
    buf: Vec<u8>,
}

impl SseEvents {
    fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// The `data` of the next complete event, if one has come in whole.
    fn next_data(&mut self) -> anyhow::Result<Option<String>> {
        loop {
            let Some(end) = self.buf.windows(2).position(|w| w == b"\n\n") else {
                return Ok(None);
            };
            let event: Vec<u8> = self.buf.drain(..end + 2).collect();
            let text = std::str::from_utf8(&event).context("an event that is not UTF-8")?;
            let data: Vec<&str> = text
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(|d| d.strip_prefix(' ').unwrap_or(d))
                .collect();
            // Comments and other fields alone carry no data: skip them.
            if !data.is_empty() {
                return Ok(Some(data.join("\n")));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_split_anywhere_come_out_whole() {
        let body = "data: {\"a\":\"é\"}\n\n: a comment\n\ndata: [DONE]\n\n".as_bytes();
        for cut in 0..body.len() {
            let mut sse = SseEvents::default();
            let mut got = Vec::new();
            for part in [&body[..cut], &body[cut..]] {
                sse.push(part);
                while let Some(d) = sse.next_data().unwrap() {
                    got.push(d);
                }
            }
            assert_eq!(got, ["{\"a\":\"é\"}", "[DONE]"], "cut at {cut}");
        }
    }

    #[test]
    fn chunks_are_read_for_content_and_finish() {
        let c: Chunk = serde_json::from_str(
            r#"{"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"},"finish_reason":null}]}"#,
        )
        .unwrap();
        assert_eq!(c.choices[0].delta.content.as_deref(), Some("Hi"));
        let last: Chunk =
            serde_json::from_str(r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#).unwrap();
        assert_eq!(last.choices[0].finish_reason.as_deref(), Some("stop"));
    }
}
