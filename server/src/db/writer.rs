//! SQLite's one writer: every write of the send path goes to one connection, which
//! commits what is queued in one transaction (group commit). SQLite takes one writer at
//! a time; many pool connections writing at once wait on its lock in a sleeping busy
//! handler (measured: 65 ms an insert at 250 sends a second, send → first token in
//! seconds), while queued writes on one connection cost one commit per batch.
//!
//! Each write runs in its own savepoint, so one failing (a constraint) leaves the others
//! of its batch; a write's answer comes after its batch committed.
//!
//! The writer's connection does not checkpoint (its `wal_autocheckpoint` is 0): a
//! checkpoint copies the WAL into the database file and syncs it, and every write queued
//! behind one waits for the disk. A task checkpoints every [`CHECKPOINT_EVERY`] from a
//! pooled connection instead (`PASSIVE`: it never blocks the writer or readers).

use futures_util::future::BoxFuture;
use sqlx::{Connection, SqliteConnection, SqlitePool};
use tokio::sync::{mpsc, oneshot};

/// A write: statements on the writer's connection; answers the rows it affected.
pub type Write = Box<dyn for<'c> FnOnce(&'c mut SqliteConnection) -> BoxFuture<'c, sqlx::Result<u64>> + Send>;

struct Job {
    write: Write,
    done: oneshot::Sender<sqlx::Result<u64>>,
}

/// Writes queued at most (then callers wait for room).
const QUEUE: usize = 4096;
/// Writes in one transaction at most.
const BATCH: usize = 256;
/// How often the WAL is checkpointed off the writer.
const CHECKPOINT_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

#[derive(Clone)]
pub struct SqliteWriter {
    jobs: mpsc::Sender<Job>,
}

impl std::fmt::Debug for SqliteWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SqliteWriter")
    }
}

fn gone() -> sqlx::Error {
    sqlx::Error::Protocol("the SQLite writer stopped".into())
}

impl SqliteWriter {
    /// Starts the writer on `conn` (opened with `wal_autocheckpoint = 0`), and its
    /// checkpoints on `pool`; both end when the last handle is dropped.
    pub fn start(conn: SqliteConnection, pool: SqlitePool) -> SqliteWriter {
        let (jobs, rx) = mpsc::channel(QUEUE);
        tokio::spawn(run(conn, rx));
        let writer = jobs.downgrade();
        tokio::spawn(async move {
            let mut ticks = tokio::time::interval(CHECKPOINT_EVERY);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            ticks.tick().await;
            loop {
                ticks.tick().await;
                if writer.upgrade().is_none() {
                    return;
                }
                if let Err(e) = sqlx::query("PRAGMA wal_checkpoint(PASSIVE)").execute(&pool).await {
                    tracing::warn!(error = %e, "checkpointing the SQLite WAL");
                }
            }
        });
        SqliteWriter { jobs }
    }

    /// Runs `write` in the next batch; answers once that batch committed.
    pub async fn write(&self, write: Write) -> sqlx::Result<u64> {
        let (done, answer) = oneshot::channel();
        self.jobs.send(Job { write, done }).await.map_err(|_| gone())?;
        answer.await.map_err(|_| gone())?
    }
}

async fn run(mut conn: SqliteConnection, mut rx: mpsc::Receiver<Job>) {
    let mut batch = Vec::with_capacity(BATCH);
    while let Some(first) = rx.recv().await {
        batch.push(first);
        while batch.len() < BATCH {
            match rx.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        commit(&mut conn, std::mem::take(&mut batch)).await;
    }
    let _ = conn.close().await;
}

async fn exec(conn: &mut SqliteConnection, sql: &str) -> sqlx::Result<()> {
    sqlx::query(sql).execute(&mut *conn).await.map(drop)
}

/// One transaction for the batch, a savepoint per write.
async fn commit(conn: &mut SqliteConnection, jobs: Vec<Job>) {
    // IMMEDIATE: take the write lock now, not halfway through the batch.
    if let Err(e) = exec(conn, "BEGIN IMMEDIATE").await {
        let reason = e.to_string();
        for job in jobs {
            let _ = job.done.send(Err(sqlx::Error::Protocol(reason.clone())));
        }
        return;
    }
    let mut results = Vec::with_capacity(jobs.len());
    for job in jobs {
        let outcome = match exec(conn, "SAVEPOINT w").await {
            Ok(()) => {
                let outcome = (job.write)(conn).await;
                let end = match outcome {
                    Ok(_) => "RELEASE w",
                    Err(_) => "ROLLBACK TO w; RELEASE w",
                };
                match exec(conn, end).await {
                    Ok(()) => outcome,
                    Err(e) => Err(e),
                }
            }
            Err(e) => Err(e),
        };
        results.push((job.done, outcome));
    }
    let committed = exec(conn, "COMMIT").await;
    if let Err(e) = &committed {
        // Nothing of the batch is stored: leave no transaction open behind it.
        let _ = exec(conn, "ROLLBACK").await;
        let reason = e.to_string();
        for (done, _) in results {
            let _ = done.send(Err(sqlx::Error::Protocol(reason.clone())));
        }
        return;
    }
    for (done, outcome) in results {
        let _ = done.send(outcome);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn insert(id: i64) -> Write {
        Box::new(move |conn| {
            Box::pin(async move {
                sqlx::query("INSERT INTO t (id) VALUES ($1)")
                    .bind(id)
                    .execute(conn)
                    .await
                    .map(|r| r.rows_affected())
            })
        })
    }

    #[tokio::test]
    async fn a_failing_write_leaves_the_rest_of_its_batch() {
        let dir = tempfile::tempdir().unwrap();
        let options = sqlx::sqlite::SqliteConnectOptions::new()
            .filename(dir.path().join("w.db"))
            .create_if_missing(true);
        let mut reader = SqliteConnection::connect_with(&options).await.unwrap();
        sqlx::query("CREATE TABLE t (id INTEGER PRIMARY KEY)")
            .execute(&mut reader)
            .await
            .unwrap();
        let pool = SqlitePool::connect_with(options.clone()).await.unwrap();
        let writer = SqliteWriter::start(SqliteConnection::connect_with(&options).await.unwrap(), pool);
        // Queued together, so they share batches; 2 is inserted twice.
        let (a, b, c, d) = tokio::join!(
            writer.write(insert(1)),
            writer.write(insert(2)),
            writer.write(insert(2)),
            writer.write(insert(3)),
        );
        assert_eq!(a.unwrap(), 1);
        assert_eq!(b.unwrap(), 1);
        assert!(c.is_err(), "the duplicate is refused");
        assert_eq!(d.unwrap(), 1);
        let ids: Vec<i64> = sqlx::query_scalar("SELECT id FROM t ORDER BY id")
            .fetch_all(&mut reader)
            .await
            .unwrap();
        assert_eq!(ids, [1, 2, 3]);
    }
}
