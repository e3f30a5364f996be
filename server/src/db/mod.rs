//! Storage: one `Db` over SQLite (embedded default) or Postgres (`DATABASE_URL`).
//!
//! Both backends run the same SQL (`$1` placeholders work in both, times are i64 unix
//! milliseconds), so each query is written once and `on_pool!` expands it for both pool
//! types. Where the SQL must differ, a function matches on `Db` itself.

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use anyhow::Context;
use secrecy::{ExposeSecret, SecretString};
use sqlx::migrate::Migrator;
use sqlx::postgres::PgPoolOptions;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Connection, PgPool, SqlitePool};

pub mod admin;
pub mod audit;
pub mod billing;
pub mod conversations;
pub mod files;
pub mod invoices;
pub mod model_calls;
pub mod payments;
pub mod portability;
pub mod projects;
pub mod refunds;
pub mod registrations;
pub mod resets;
pub mod search;
pub mod secrets;
pub mod shares;
pub mod stats;
pub mod stripe;
pub mod subscriptions;
pub mod usage;
pub mod users;
pub mod writer;

use writer::SqliteWriter;

static SQLITE_MIGRATIONS: Migrator = sqlx::migrate!("../migrations/sqlite");
static POSTGRES_MIGRATIONS: Migrator = sqlx::migrate!("../migrations/postgres");
/// The page cache of each pooled SQLite reader, in KiB (see `Db::sqlite`).
const READER_CACHE_KIB: u32 = 256;

#[derive(Clone, Debug)]
pub enum Db {
    /// Reads (and rare writes) on the pool; the send path's writes on the one writer.
    Sqlite(SqlitePool, SqliteWriter),
    Postgres(PgPool),
}

/// Runs `$body` with `$pool` bound to whichever pool `$db` holds.
///
/// Each storage call has a span (debug level), under the request's span with its id and
/// user, and ends with a line giving its time: `RUST_LOG=chat_server=debug` shows which
/// call of a slow request took it. `at` is the calling line.
macro_rules! on_pool {
    ($db:expr, $pool:ident => $body:expr) => {{
        let span = ::tracing::debug_span!("db", at = %concat!(module_path!(), ":", line!()));
        let started = ::std::time::Instant::now();
        let out = ::tracing::Instrument::instrument(
            async {
                match $db {
                    $crate::db::Db::Sqlite($pool, _) => $body,
                    $crate::db::Db::Postgres($pool) => $body,
                }
            },
            span.clone(),
        )
        .await;
        span.in_scope(|| ::tracing::debug!(us = started.elapsed().as_micros() as u64, "storage call"));
        out
    }};
}
pub(crate) use on_pool;

/// Runs a write: on SQLite through the one writer (group commit, see `writer`), on
/// Postgres in a transaction of the pool. `$body` evaluates to `sqlx::Result<u64>` with
/// `$conn` as its executor; it must own what it uses (SQLite runs it on another task).
macro_rules! on_writer {
    ($db:expr, $conn:ident => $body:expr) => {{
        let span = ::tracing::debug_span!("db", at = %concat!(module_path!(), ":", line!()));
        let started = ::std::time::Instant::now();
        let out = ::tracing::Instrument::instrument(
            async {
                match $db {
                    $crate::db::Db::Sqlite(_, writer) => {
                        writer
                            .write(Box::new(move |$conn| Box::pin(async move { $body })))
                            .await
                    }
                    $crate::db::Db::Postgres(pool) => {
                        let mut tx = pool.begin().await?;
                        let out: sqlx::Result<u64> = {
                            let $conn = &mut *tx;
                            async move { $body }.await
                        };
                        match out {
                            Ok(n) => tx.commit().await.map(|()| n),
                            Err(e) => Err(e),
                        }
                    }
                }
            },
            span.clone(),
        )
        .await;
        span.in_scope(|| ::tracing::debug!(us = started.elapsed().as_micros() as u64, "storage call"));
        out
    }};
}
pub(crate) use on_writer;

impl Db {
    /// Connects to `url` (a Postgres URL) or, when it is empty, to the SQLite file in
    /// `data_dir`; then applies the migrations.
    pub async fn connect(url: &SecretString, data_dir: &Path, max_connections: u32) -> anyhow::Result<Db> {
        let url = url.expose_secret().trim();
        let db = if url.is_empty() {
            std::fs::create_dir_all(data_dir)
                .with_context(|| format!("creating data dir {}", data_dir.display()))?;
            let options = SqliteConnectOptions::new()
                .filename(data_dir.join("chat.db"))
                .create_if_missing(true)
                .journal_mode(SqliteJournalMode::Wal)
                .synchronous(SqliteSynchronous::Normal)
                .busy_timeout(Duration::from_secs(5))
                .foreign_keys(true);
            Self::sqlite(options, max_connections).await?
        } else if url.starts_with("sqlite:") {
            let options = SqliteConnectOptions::from_str(url)
                .context("parsing sqlite DATABASE_URL")?
                .create_if_missing(true)
                .journal_mode(SqliteJournalMode::Wal)
                .busy_timeout(Duration::from_secs(5))
                .foreign_keys(true);
            Self::sqlite(options, max_connections).await?
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            let pool = PgPoolOptions::new()
                .max_connections(max_connections)
                .acquire_timeout(Duration::from_secs(5))
                .connect(url)
                .await
                .context("connecting to Postgres")?;
            Db::Postgres(pool)
        } else {
            anyhow::bail!("DATABASE_URL must start with postgres:// or sqlite:");
        };
        db.migrate().await?;
        Ok(db)
    }

    async fn sqlite(options: SqliteConnectOptions, max: u32) -> anyhow::Result<Db> {
        // Every connection keeps its own page cache (SQLite's default is 2 MB each): the
        // readers' are kept small, as the pages they share are in the OS's cache anyway,
        // so memory does not grow by 2 MB per pool connection as sessions come.
        let readers = options
            .clone()
            .pragma("cache_size", format!("-{READER_CACHE_KIB}"));
        let pool = SqlitePoolOptions::new()
            .max_connections(max)
            .acquire_timeout(Duration::from_secs(5))
            .connect_with(readers)
            .await
            .context("opening the SQLite database")?;
        // The writer leaves checkpoints (copying the WAL into the database file, with an
        // fsync) to a task of its own, so no send waits behind one.
        let writer = sqlx::SqliteConnection::connect_with(&options.pragma("wal_autocheckpoint", "0"))
            .await
            .context("opening the SQLite writer")?;
        Ok(Db::Sqlite(pool.clone(), SqliteWriter::start(writer, pool)))
    }

    async fn migrate(&self) -> anyhow::Result<()> {
        match self {
            Db::Sqlite(pool, _) => SQLITE_MIGRATIONS.run(pool).await,
            Db::Postgres(pool) => POSTGRES_MIGRATIONS.run(pool).await,
        }
        .context("applying database migrations")
    }

    pub fn backend(&self) -> &'static str {
        match self {
            Db::Sqlite(..) => "sqlite",
            Db::Postgres(_) => "postgres",
        }
    }

    /// A round trip to the database, for the health check.
    pub async fn ping(&self) -> sqlx::Result<()> {
        on_pool!(self, pool => sqlx::query("SELECT 1").execute(pool).await.map(drop))
    }

    pub async fn close(&self) {
        on_pool!(self, pool => pool.close().await)
    }
}
