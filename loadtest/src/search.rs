//! `loadtest search`: the time of `GET /api/conversations/search` over one user's history
//! (seeded with `chat-server users seed --messages N`), one query at a time, through
//! HTTP as the web client calls it. The queries are words of the user's own messages: a
//! whole word, a word's first three letters (search as you type), and a word with the
//! beginning of another.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Context;
use clap::Args;
use serde_json::Value;

#[derive(Args)]
pub struct SearchArgs {
    /// The server's base URL.
    #[arg(long, default_value = "http://127.0.0.1:8080")]
    base: String,
    /// `email<TAB>token` lines; the first user's history is searched.
    #[arg(long)]
    tokens: PathBuf,
    /// Queries measured (after 20 to warm up).
    #[arg(long, default_value_t = 600)]
    queries: usize,
}

pub fn run(args: SearchArgs) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(measure(args))
}

async fn measure(args: SearchArgs) -> anyhow::Result<()> {
    let token = crate::scenarios::first_token(&args.tokens)?;
    let client = reqwest::Client::new();
    let get = |path: String| {
        let request = client.get(format!("{}{path}", args.base)).bearer_auth(&token);
        async move {
            let response = request.send().await?.error_for_status()?;
            anyhow::Ok(response.json::<Value>().await?)
        }
    };
    // Words from a few of the user's conversations.
    let list = get("/api/conversations?limit=20".into()).await?;
    let mut words: Vec<String> = Vec::new();
    for c in list["data"].as_array().context("a list")? {
        let one = get(format!(
            "/api/conversations/{}",
            c["_id"].as_str().unwrap_or_default()
        ))
        .await?;
        for m in one["data"]["messages"].as_array().into_iter().flatten() {
            let text = m["content"].as_str().unwrap_or_default();
            words.extend(
                text.split_whitespace()
                    .filter(|w| w.chars().count() >= 4)
                    .map(str::to_owned),
            );
        }
    }
    anyhow::ensure!(
        words.len() >= 3,
        "the user has no history: seed it with --messages"
    );
    let mut histogram = hdrhistogram::Histogram::<u64>::new(3)?;
    let mut hits = 0usize;
    for i in 0..args.queries + 20 {
        let word = &words[(i * 7919) % words.len()];
        let other = &words[(i * 104_729 + 13) % words.len()];
        let prefix: String = other.chars().take(3).collect();
        let q = match i % 3 {
            0 => word.clone(),
            1 => prefix,
            _ => format!("{word} {prefix}"),
        };
        let q: String = url_encode(&q);
        let started = Instant::now();
        let page = get(format!("/api/conversations/search?q={q}&limit=20")).await?;
        let us = started.elapsed().as_micros() as u64;
        if i >= 20 {
            histogram.record(us.max(1))?;
            hits += page["data"].as_array().map_or(0, Vec::len);
        }
    }
    let ms = |q: f64| histogram.value_at_quantile(q) as f64 / 1000.0;
    println!(
        "search: {} queries, p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms, {:.1} hits a page on average",
        args.queries,
        ms(0.5),
        ms(0.99),
        histogram.max() as f64 / 1000.0,
        hits as f64 / args.queries as f64
    );
    Ok(())
}

fn url_encode(q: &str) -> String {
    q.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}
