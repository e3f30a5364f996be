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
        if cause.is::<RedisTimeout>() {
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
