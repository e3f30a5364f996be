//! Quota checks per second through the server's own quota path: the user's plan from the
//! database, the quota actor, and the Redis counters (one Lua script call per check).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use base64::Engine;
use chat_actors::quota::Service;
use chat_actors::shard::Shards;
use chat_server::clock::SystemClock;
use chat_server::config::Settings;
use chat_server::db::Db;
use chat_server::plans::Catalogue;
use chat_server::plans::PlanType;
use chat_server::quota::Quotas;
use secrecy::ExposeSecret;

use crate::metrics::{Delay, Metrics};

/// The user id (`sub`) inside an access token.
pub fn token_subject(token: &str) -> anyhow::Result<String> {
    let payload = token.split('.').nth(1).context("not a JWT")?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(payload)?;
    let claims: serde_json::Value = serde_json::from_slice(&bytes)?;
    claims["sub"].as_str().map(str::to_owned).context("no sub claim")
}

pub struct QuotaRun {
    pub checks: u64,
    pub failures: u64,
    pub secs: f64,
}

/// Runs `concurrency` loops of `consume` (then `refund`, so counters stay below any
/// limit) over the users for `duration`. Needs REDIS_URL; reads the database the server
/// uses (DATABASE_URL or DATA_DIR).
pub async fn run(
    user_ids: Vec<String>,
    concurrency: usize,
    duration: Duration,
    metrics: Arc<Metrics>,
) -> anyhow::Result<QuotaRun> {
    let settings = Settings::load()?;
    let redis_url = settings.redis.url.expose_secret().to_owned();
    anyhow::ensure!(
        !redis_url.is_empty(),
        "the quota scenario measures Redis: set REDIS_URL"
    );
    let db = Db::connect(&settings.database.url, &settings.server.data_dir, 16).await?;
    let client = redis::Client::open(redis_url)?;
    let conn = redis::aio::ConnectionManager::new(client).await?;
    let catalogue = Arc::new(Catalogue::load(&settings.config_dir)?);
    let quotas = Arc::new(Quotas::start(
        db,
        Some((conn, settings.redis.prefix.clone(), settings.redis_timeout())),
        catalogue,
        Arc::new(SystemClock),
        // As in the server: each user's quota actor on the user's shard.
        Some(Shards::start(2)),
    ));
    let users = Arc::new(user_ids);
    let checks = Arc::new(AtomicU64::new(0));
    let failures = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let deadline = started + duration;
    let loops = (0..concurrency).map(|w| {
        let (quotas, users, checks, failures, metrics) = (
            quotas.clone(),
            users.clone(),
            checks.clone(),
            failures.clone(),
            metrics.clone(),
        );
        actix::spawn(async move {
            let mut i = w;
            while Instant::now() < deadline {
                let user = &users[i % users.len()];
                i += concurrency;
                let t = Instant::now();
                // The send path's check: the plan is known (the seeded users are on plus).
                let ok = quotas
                    .consume_on(user, PlanType::Plus, Service::Responses)
                    .await
                    .is_ok();
                metrics.record(Delay::QuotaCheck, t.elapsed().as_micros() as i64);
                if ok {
                    checks.fetch_add(1, Ordering::Relaxed);
                    let _ = quotas.refund(user, Service::Responses).await;
                } else {
                    failures.fetch_add(1, Ordering::Relaxed);
                }
            }
        })
    });
    futures_util::future::join_all(loops).await;
    Ok(QuotaRun {
        checks: checks.load(Ordering::Relaxed),
        failures: failures.load(Ordering::Relaxed),
        secs: started.elapsed().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_user_id_from_a_token() {
        // {"sub":"u-1","ver":0}
        let payload = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(r#"{"sub":"u-1","ver":0}"#);
        assert_eq!(token_subject(&format!("h.{payload}.sig")).unwrap(), "u-1");
        assert!(token_subject("garbage").is_err());
    }
}
