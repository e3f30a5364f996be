//! Redis commands go out on a connection of the thread that sends them.
//!
//! A managed connection runs a driver task on the runtime it was made on, and every
//! command is handed to that task and its reply handed back. With one connection made at
//! startup, that task ran on the System thread: every quota check, claim and relayed
//! event of a shard (an HTTP worker) woke the System thread and was woken back. Here each
//! thread that sends commands gets its own managed connection on first use (the workers,
//! and the System thread for startup and the scheduler), so a command and its reply stay
//! on the thread that waits for them. A few connections more (one per worker) is the
//! price.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use redis::aio::{ConnectionLike, ConnectionManager, ConnectionManagerConfig};
use redis::{Cmd, Pipeline, RedisFuture, Value};
use tokio::sync::OnceCell;

use crate::metrics;

/// A Redis database whose commands go out on the calling thread's connection; usable
/// wherever redis-rs takes a connection (`query_async(&mut redis)`). Clones share the
/// connections.
#[derive(Clone)]
pub struct Redis {
    /// Tells the connections of several servers in one process (tests) apart.
    id: u64,
    /// What a thread's connection is made from (shared: a clone is a pointer).
    how: Arc<(redis::Client, ConnectionManagerConfig)>,
}

thread_local! {
    /// This thread's connection to each database, made on first use.
    static CONNECTIONS: RefCell<HashMap<u64, Arc<OnceCell<ConnectionManager>>>> = RefCell::new(HashMap::new());
}

impl Redis {
    /// Connects (on this thread) to check that Redis answers.
    pub async fn connect(
        client: redis::Client,
        config: ConnectionManagerConfig,
    ) -> redis::RedisResult<Redis> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let redis = Redis {
            id: NEXT.fetch_add(1, Ordering::Relaxed),
            how: Arc::new((client, config)),
        };
        redis.here().await?;
        Ok(redis)
    }

    pub fn client(&self) -> &redis::Client {
        &self.how.0
    }

    /// This thread's connection, made now if it has none. A failed attempt leaves none,
    /// so the next command tries again; once made, the connection reconnects by itself.
    async fn here(&self) -> redis::RedisResult<ConnectionManager> {
        let cell =
            CONNECTIONS.with(|connections| connections.borrow_mut().entry(self.id).or_default().clone());
        let (client, config) = &*self.how;
        let connect = || ConnectionManager::new_with_config(client.clone(), config.clone());
        cell.get_or_try_init(connect).await.cloned()
    }
}

/// Records a command's (or pipeline's) time, connecting included, in
/// `chat_redis_command_duration_seconds`: every Redis call of the server passes here.
fn timed<T>(started: Instant, result: redis::RedisResult<T>) -> redis::RedisResult<T> {
    // Literal labels make a static key: with metrics off this allocates nothing.
    let histogram = match &result {
        Ok(_) => metrics::histogram!(metrics::REDIS_COMMAND_DURATION, "outcome" => "ok"),
        Err(_) => metrics::histogram!(metrics::REDIS_COMMAND_DURATION, "outcome" => "error"),
    };
    histogram.record(started.elapsed());
    result
}

impl ConnectionLike for Redis {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        let started = Instant::now();
        Box::pin(async move {
            let result = async { self.here().await?.req_packed_command(cmd).await }.await;
            timed(started, result)
        })
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        let started = Instant::now();
        Box::pin(async move {
            let result = async {
                self.here()
                    .await?
                    .req_packed_commands(pipeline, offset, count)
                    .await
            }
            .await;
            timed(started, result)
        })
    }

    fn get_db(&self) -> i64 {
        self.how.0.get_connection_info().redis.db
    }
}
