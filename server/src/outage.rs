//! When a backend is away: the time limit on every Redis call, and which failures mean
//! "Redis or the database is unreachable" (the user is told `service_unavailable` and
//! may retry) rather than a fault of the server.

use std::future::Future;
use std::time::Duration;

/// A Redis call that got no answer in time (Redis paused, overloaded or unreachable).
#[derive(Debug, thiserror::Error)]
#[error("Redis did not answer within {0:?}")]
pub struct RedisTimeout(pub Duration);

/// Runs one Redis call with a time limit. The connection manager has its own response
/// timeout, but a call made while it reconnects waits for the reconnection, which has
/// none of its own.
pub async fn redis_call<T>(
    limit: Duration,
    call: impl Future<Output = redis::RedisResult<T>>,
) -> anyhow::Result<T> {
    match tokio::time::timeout(limit, call).await {
        Ok(result) => Ok(result?),
        Err(_) => Err(RedisTimeout(limit).into()),
    }
}

/// Whether `e` (anywhere in its chain) says a backend could not be reached.
pub fn is_unavailable(e: &anyhow::Error) -> bool {
    e.chain().any(|cause| {
        if cause.is::<RedisTimeout>() || cause.is::<chat_actors::quota::Overdue>() {
            return true;
        }
        if let Some(e) = cause.downcast_ref::<redis::RedisError>() {
            return e.is_io_error()
                || e.is_timeout()
                || e.is_connection_dropped()
                || e.is_connection_refusal();
        }
        match cause.downcast_ref::<sqlx::Error>() {
            Some(sqlx::Error::Io(_) | sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed) => true,
            // Postgres shutting down or starting (57P0x), or a broken connection (08xxx).
            Some(sqlx::Error::Database(db)) => db
                .code()
                .is_some_and(|code| code.starts_with("57P") || code.starts_with("08")),
            _ => false,
        }
    })
}

/// Runs a database write until it succeeds, fails for another reason than the database
/// being away, or `limit` has passed (then with the last error): what must not be lost to
/// a database restart (the end of an answer). Logs one line when it starts waiting.
pub async fn until_available<T, F, Fut>(limit: Duration, what: &str, mut write: F) -> anyhow::Result<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = sqlx::Result<T>>,
{
    let started = std::time::Instant::now();
    let mut pause = Duration::from_millis(200);
    let mut waited = false;
    loop {
        let error = match write().await {
            Ok(done) => {
                if waited {
                    tracing::info!(what, after = ?started.elapsed(), "stored once the database was back");
                }
                return Ok(done);
            }
            Err(e) => anyhow::Error::from(e),
        };
        if !is_unavailable(&error) || started.elapsed() + pause > limit {
            return Err(error.context(format!("{what}: not stored")));
        }
        if !waited {
            waited = true;
            tracing::warn!(what, error = %format!("{error:#}"), "the database is away; trying again");
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_secs(2));
    }
}

/// Logs a request that failed inside the server: a backend being away (expected during
/// an outage, and logged by every request it fails) as one line with its causes; any
/// other failure with everything it carries (a backtrace, when captured), since it is a
/// fault to find.
pub fn log_failure(cause: &anyhow::Error, what: &str) {
    if is_unavailable(cause) {
        tracing::warn!(error = %format!("{cause:#}"), "{what}: a backend is unavailable");
    } else {
        tracing::error!(error = ?cause, "{what}");
    }
}
