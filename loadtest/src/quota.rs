//! Quota checks per second through the server's own quota path: the user's plan from the
//! database, the quota actor, and the Redis counters (one Lua script call per check).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use base64::Engine;
use chat_actors::shard::Shards;
use chat_contract::states::Service;
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
    // As in the server: each thread sends on a connection of its own.
    let conn =
        chat_server::redis_conn::Redis::connect(client, redis::aio::ConnectionManagerConfig::new()).await?;
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

/// The same check as `redis-benchmark` runs it: the server's consume script, straight
/// on Redis with `concurrency` connections, for `secs` (about). The ceiling the server's
/// quota path is held against. `None` when `redis-benchmark` is not installed.
pub async fn redis_benchmark(concurrency: usize, secs: u64) -> anyhow::Result<Option<f64>> {
    let settings = Settings::load()?;
    let url = settings.redis.url.expose_secret().to_owned();
    let info = redis::Client::open(url.as_str())?.get_connection_info().clone();
    let redis::ConnectionAddr::Tcp(host, port) = info.addr else {
        anyhow::bail!("redis-benchmark needs a TCP Redis URL");
    };
    let client = redis::Client::open(url)?;
    let mut conn = client.get_multiplexed_async_connection().await?;
    let sha: String = redis::cmd("SCRIPT")
        .arg("LOAD")
        .arg(chat_server::quota::CONSUME_LUA)
        .query_async(&mut conn)
        .await?;
    // Keys shaped as the server's (a user, each service, day and month, the month's
    // mark, the check's id); with -r every `__rand_int__` is drawn anew (12 digits).
    // The marks of every user are set first, as the server's counters have them (a
    // missing mark would make each call a rebuild request); an id is two draws, so
    // calls rarely share one (a repeated id is not counted). No limits (-1), so every
    // call counts, as an allowed check does; the counters expire a minute later.
    const USERS: u32 = 25_000;
    let mut marks = redis::pipe();
    for user in 0..USERS {
        marks
            .cmd("SET")
            .arg(format!("bench-rb:quota:{{{user:012}}}:counted:2026-01"))
            .arg(1)
            .arg("EX")
            .arg(120)
            .ignore();
    }
    marks.query_async::<()>(&mut conn).await?;
    let mut args: Vec<String> = vec!["EVALSHA".into(), sha, (2 * Service::ALL.len() + 2).to_string()];
    for service in Service::ALL {
        for period in ["d:2026-01-01", "m:2026-01"] {
            args.push(format!(
                "bench-rb:quota:{{__rand_int__}}:{}:{period}",
                service.as_str()
            ));
        }
    }
    args.push("bench-rb:quota:{__rand_int__}:counted:2026-01".into());
    args.push("bench-rb:quota:{__rand_int__}:check:__rand_int__".into());
    args.extend(["-1", "-1", "60", "60", "1"].map(String::from));
    // A first short run tells the rate; the real one lasts about `secs`.
    let run = |requests: u64| {
        std::process::Command::new("redis-benchmark")
            .args([
                "-h",
                &host,
                "-p",
                &port.to_string(),
                "--csv",
                "-r",
                &USERS.to_string(),
            ])
            .args(["-c", &concurrency.to_string(), "-n", &requests.to_string()])
            .args(&args)
            .output()
    };
    let rate = |out: std::process::Output| -> anyhow::Result<f64> {
        let text = String::from_utf8_lossy(&out.stdout);
        // "test","rps",... then "EVALSHA ...","45871.56",...
        let line = text
            .lines()
            .find(|l| l.starts_with("\"EVALSHA"))
            .with_context(|| format!("redis-benchmark said: {text}"))?;
        let rps = line.split("\",\"").nth(1).context("no rps column")?;
        Ok(rps.trim_matches('"').parse()?)
    };
    let probe = match run(20_000) {
        Ok(out) => rate(out)?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let requests = (probe * secs as f64).max(20_000.0) as u64;
    Ok(Some(rate(run(requests)?)?))
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
