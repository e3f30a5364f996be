//! `loadtest admin-stats`: the time of `GET /api/admin/stats` (the operator's dashboard)
//! over a seeded history (loadtest/stats-bench.sh), one call at a time through HTTP, for
//! the 30 days and the 365 days ending today. The first call is timed apart: it sums the
//! hours of every call stored so far (a server's first stats after an upgrade).

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Context;
use chrono::{Days, NaiveDate};
use clap::Args;
use serde_json::Value;

#[derive(Args)]
pub struct AdminStatsArgs {
    /// The server's base URL.
    #[arg(long, default_value = "http://127.0.0.1:8080")]
    base: String,
    /// `email<TAB>token` lines; the first is an admin's.
    #[arg(long)]
    tokens: PathBuf,
    /// Calls measured per range (after 3 to warm up).
    #[arg(long, default_value_t = 100)]
    runs: usize,
    /// The operator's time zone.
    #[arg(long, default_value = "Europe/Budapest")]
    tz: String,
}

pub fn run(args: AdminStatsArgs) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(measure(args))
}

async fn measure(args: AdminStatsArgs) -> anyhow::Result<()> {
    let token = crate::scenarios::first_token(&args.tokens)?;
    let client = reqwest::Client::new();
    let tz = args.tz.replace('/', "%2F");
    let call = |from: Option<NaiveDate>, to: Option<NaiveDate>| {
        let mut url = format!("{}/api/admin/stats?tz={tz}&by=day", args.base);
        if let (Some(from), Some(to)) = (from, to) {
            url.push_str(&format!("&from={from}&to={to}"));
        }
        let request = client.get(url).bearer_auth(&token);
        async move {
            let response = request.send().await?.error_for_status()?;
            anyhow::Ok(response.json::<Value>().await?)
        }
    };
    let started = Instant::now();
    // The default range: the 30 days ending today in `tz`.
    let first = call(None, None).await?;
    println!(
        "admin-stats: first call {:.0} ms (sums the hours of every stored call)",
        started.elapsed().as_secs_f64() * 1000.0
    );
    let to: NaiveDate = first["data"]["to"].as_str().context("a `to` date")?.parse()?;
    for days in [30u64, 365] {
        let from = to - Days::new(days - 1);
        let mut histogram = hdrhistogram::Histogram::<u64>::new(3)?;
        let mut messages = 0u64;
        for i in 0..args.runs + 3 {
            let started = Instant::now();
            let stats = call(Some(from), Some(to)).await?;
            let us = started.elapsed().as_micros() as u64;
            if i >= 3 {
                histogram.record(us.max(1))?;
            }
            messages = stats["data"]["days"]
                .as_array()
                .context("days")?
                .iter()
                .filter_map(|d| d["messages"].as_u64())
                .sum();
        }
        let ms = |q: f64| histogram.value_at_quantile(q) as f64 / 1000.0;
        println!(
            "admin-stats: {days} days to {to}: {} calls, p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms ({messages} messages)",
            args.runs,
            ms(0.5),
            ms(0.99),
            histogram.max() as f64 / 1000.0,
        );
    }
    Ok(())
}
