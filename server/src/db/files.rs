//! Attachments' rows; their bytes are in the file store (`crate::files`).
//!
//! A row lives until the sweep has deleted its objects: a file whose message (or
//! conversation, or account) is gone, or that was never sent, is first marked gone and
//! only then removed, so nothing is ever left in the store that no row names. Deleting a
//! conversation or an account marks its files; the sweep's regular pass reads only the
//! marked ones (an index), and a full pass now and then finds any whose owner went
//! another way.

use super::{on_pool, on_writer, Db};
use chat_contract::states::{FileKind, FileStatus};

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct FileRow {
    pub id: String,
    pub user_id: String,
    pub conversation_id: Option<String>,
    /// Set when sent; [`GONE`] once deleted and waiting for the sweep.
    pub message_id: Option<String>,
    pub kind: FileKind,
    pub name: String,
    pub mime: String,
    pub size: i64,
    pub width: Option<i32>,
    pub height: Option<i32>,
    pub created_at: i64,
    /// `ready`, or for a document also `processing` or `failed`.
    pub status: FileStatus,
    /// Percent of a document's processing done (100 once ready).
    pub progress: i32,
    /// A PDF's page count.
    pub pages: Option<i32>,
    /// The model that embedded a document's pieces; `None`: ranked by BM25.
    pub embedding_model: Option<String>,
    /// The project whose file it is (never sent in a message), if any.
    pub project_id: Option<String>,
}

/// A piece of a document's text, as stored (`documents::chunks` cuts them).
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct ChunkRow {
    pub file_id: String,
    pub seq: i32,
    pub page: Option<i32>,
    pub text: String,
    pub embedding: Option<Vec<u8>>,
}

/// The `message_id` of a file deleted but not swept yet: no message has it, so the file
/// can no longer be sent, and the sweep takes it like any file whose message is gone.
pub const GONE: &str = "";

/// The condition of a file not deleted (sent or not), in SQL.
pub(super) const NOT_GONE: &str = "(message_id IS NULL OR message_id <> '')";

pub(super) const FILE_COLUMNS: &str =
    "id, user_id, conversation_id, message_id, kind, name, mime, size, width, height, \
     created_at, status, progress, pages, embedding_model, project_id";

/// `$from, $from+1, …` for `n` values.
pub(super) fn placeholders(from: usize, n: usize) -> String {
    (from..from + n)
        .map(|i| format!("${i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

impl Db {
    /// Inserts `f` whatever its user keeps (a file the user did not upload: an image an
    /// answer made).
    pub async fn insert_file(&self, f: &FileRow) -> sqlx::Result<()> {
        self.insert_file_within(f, i64::MAX).await.map(drop)
    }

    /// Inserts `f` unless it and the bytes its user keeps would pass `limit`; `false`
    /// then. One write, so two uploads at once cannot both pass the limit: Postgres locks
    /// the user's row for it, SQLite has one writer.
    pub async fn insert_file_within(&self, f: &FileRow, limit: i64) -> sqlx::Result<bool> {
        let lock = matches!(self, Db::Postgres(_)).then_some("SELECT id FROM users WHERE id = $1 FOR UPDATE");
        let insert = format!(
            "INSERT INTO files ({FILE_COLUMNS}) \
             SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16 \
             WHERE (SELECT COALESCE(SUM(size), 0) FROM files WHERE user_id = $2 AND {NOT_GONE}) + $8 <= $17"
        );
        let f = f.clone();
        let inserted = on_writer!(self, conn => {
            if let Some(lock) = lock {
                sqlx::query(lock).bind(&f.user_id).execute(&mut *conn).await?;
            }
            sqlx::query(&insert)
                .bind(&f.id)
                .bind(&f.user_id)
                .bind(&f.conversation_id)
                .bind(&f.message_id)
                .bind(f.kind)
                .bind(&f.name)
                .bind(&f.mime)
                .bind(f.size)
                .bind(f.width)
                .bind(f.height)
                .bind(f.created_at)
                .bind(f.status)
                .bind(f.progress)
                .bind(f.pages)
                .bind(&f.embedding_model)
                .bind(&f.project_id)
                .bind(limit)
                .execute(&mut *conn)
                .await
                .map(|r| r.rows_affected())
        })?;
        Ok(inserted == 1)
    }

    /// The user's file, unless it is deleted; another user's is `None`, like a missing one.
    pub async fn file(&self, user_id: &str, id: &str) -> sqlx::Result<Option<FileRow>> {
        let sql = format!("SELECT {FILE_COLUMNS} FROM files WHERE id = $1 AND user_id = $2 AND {NOT_GONE}");
        on_pool!(self, pool => sqlx::query_as(&sql).bind(id).bind(user_id).fetch_optional(pool).await)
    }

    /// Those of `ids` that are the user's and not deleted, in no particular order.
    pub async fn files_of_user(&self, user_id: &str, ids: &[String]) -> sqlx::Result<Vec<FileRow>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let sql = format!(
            "SELECT {FILE_COLUMNS} FROM files WHERE user_id = $1 AND {NOT_GONE} AND id IN ({})",
            placeholders(2, ids.len())
        );
        on_pool!(self, pool => {
            let mut query = sqlx::query_as(&sql).bind(user_id);
            for id in ids {
                query = query.bind(id);
            }
            query.fetch_all(pool).await
        })
    }

    /// The files sent in a conversation's messages, oldest first.
    pub async fn files_of_conversation(&self, conversation_id: &str) -> sqlx::Result<Vec<FileRow>> {
        let sql = format!(
            "SELECT {FILE_COLUMNS} FROM files WHERE conversation_id = $1 AND message_id <> '' \
             ORDER BY created_at, id"
        );
        on_pool!(self, pool => sqlx::query_as(&sql).bind(conversation_id).fetch_all(pool).await)
    }

    /// The files sent on the branch that ends at `leaf` (other versions' files left out),
    /// oldest first. The branch is followed up from the leaf over the conversation's
    /// message links (small rows, one index scan): a recursive query would be planned
    /// badly by Postgres.
    pub async fn files_of_branch(&self, conversation_id: &str, leaf: &str) -> sqlx::Result<Vec<FileRow>> {
        let mut files = self.files_of_conversation(conversation_id).await?;
        if files.is_empty() {
            return Ok(files);
        }
        let sql = "SELECT id, parent_id FROM messages WHERE conversation_id = $1";
        let links: Vec<(String, Option<String>)> =
            on_pool!(self, pool => sqlx::query_as(sql).bind(conversation_id).fetch_all(pool).await)?;
        let parent: std::collections::HashMap<String, Option<String>> = links.into_iter().collect();
        let mut branch = std::collections::HashSet::new();
        let mut next = Some(leaf.to_owned());
        // A message seen twice would be a loop (never written): the walk stops.
        while let Some(id) = next.take() {
            next = parent.get(&id).cloned().flatten();
            if !branch.insert(id) {
                break;
            }
        }
        files.retain(|f| f.message_id.as_ref().is_some_and(|m| branch.contains(m)));
        Ok(files)
    }

    /// The files sent with a message, oldest first.
    pub async fn files_of_message(&self, message_id: &str) -> sqlx::Result<Vec<FileRow>> {
        let sql = format!("SELECT {FILE_COLUMNS} FROM files WHERE message_id = $1 ORDER BY created_at, id");
        on_pool!(self, pool => sqlx::query_as(&sql).bind(message_id).fetch_all(pool).await)
    }

    /// Bytes the user keeps stored: deleted files (on their way out) do not count.
    pub async fn stored_bytes(&self, user_id: &str) -> sqlx::Result<i64> {
        // SUM over BIGINT is NUMERIC on Postgres: cast back.
        let sql = format!(
            "SELECT CAST(COALESCE(SUM(size), 0) AS BIGINT) FROM files WHERE user_id = $1 AND {NOT_GONE}"
        );
        on_pool!(self, pool => sqlx::query_scalar(&sql).bind(user_id).fetch_one(pool).await)
    }

    /// Marks an unsent file of the user deleted; `false` when it is not the user's, is
    /// deleted already, or was sent.
    pub async fn mark_unsent_file_gone(&self, user_id: &str, id: &str) -> sqlx::Result<bool> {
        let sql = "UPDATE files SET message_id = $3 WHERE id = $1 AND user_id = $2 AND message_id IS NULL";
        let done = on_pool!(self, pool => sqlx::query(sql)
            .bind(id)
            .bind(user_id)
            .bind(GONE)
            .execute(pool)
            .await
            .map(|r| r.rows_affected()))?;
        Ok(done == 1)
    }

    /// Marks a file gone whoever's it is (a generated image that could not be stored).
    pub async fn mark_file_gone(&self, id: &str) -> sqlx::Result<()> {
        let sql = "UPDATE files SET message_id = $1 WHERE id = $2";
        on_pool!(self, pool => sqlx::query(sql).bind(GONE).bind(id).execute(pool).await.map(drop))
    }

    /// Makes the user's unsent file a file of the user's project; `false` when either is
    /// not the user's, or the file was sent or is in a project already.
    pub async fn add_project_file(
        &self,
        user_id: &str,
        project_id: &str,
        file_id: &str,
    ) -> sqlx::Result<bool> {
        let sql = "UPDATE files SET project_id = $3 WHERE id = $1 AND user_id = $2 AND message_id IS NULL \
                   AND project_id IS NULL AND EXISTS (SELECT 1 FROM projects WHERE id = $3 AND user_id = $2)";
        let (file_id, user_id, project_id) = (file_id.to_owned(), user_id.to_owned(), project_id.to_owned());
        let done = on_writer!(self, conn => sqlx::query(sql)
            .bind(file_id)
            .bind(user_id)
            .bind(project_id)
            .execute(&mut *conn)
            .await
            .map(|r| r.rows_affected()))?;
        Ok(done == 1)
    }

    /// The files of a project, oldest first, unless deleted.
    pub async fn files_of_project(&self, project_id: &str) -> sqlx::Result<Vec<FileRow>> {
        let sql = format!(
            "SELECT {FILE_COLUMNS} FROM files WHERE project_id = $1 AND {NOT_GONE} ORDER BY created_at, id"
        );
        on_pool!(self, pool => sqlx::query_as(&sql).bind(project_id).fetch_all(pool).await)
    }

    /// Marks a project's files gone (the project is being deleted).
    pub async fn mark_project_files_gone(&self, user_id: &str, project_id: &str) -> sqlx::Result<()> {
        let sql = "UPDATE files SET message_id = $1 WHERE user_id = $2 AND project_id = $3";
        on_pool!(self, pool => sqlx::query(sql).bind(GONE).bind(user_id).bind(project_id).execute(pool).await.map(drop))
    }

    /// Marks the user's files gone (only those of one conversation, if given).
    pub async fn mark_files_gone(&self, user_id: &str, conversation_id: Option<&str>) -> sqlx::Result<()> {
        let sql = match conversation_id {
            Some(_) => "UPDATE files SET message_id = $1 WHERE user_id = $2 AND conversation_id = $3",
            None => "UPDATE files SET message_id = $1 WHERE user_id = $2",
        };
        on_pool!(self, pool => {
            let mut query = sqlx::query(sql).bind(GONE).bind(user_id);
            if let Some(c) = conversation_id {
                query = query.bind(c);
            }
            query.execute(pool).await.map(drop)
        })
    }

    /// Marks gone the files uploaded before `before` and never sent.
    pub async fn mark_unsent_files_gone(&self, before: i64) -> sqlx::Result<()> {
        // A project's files are kept: they are never sent.
        let sql = "UPDATE files SET message_id = $2 WHERE message_id IS NULL AND project_id IS NULL AND created_at < $1";
        on_pool!(self, pool => sqlx::query(sql).bind(before).bind(GONE).execute(pool).await.map(drop))
    }

    /// At most `limit` files marked gone (an index lookup).
    pub async fn files_marked_gone(&self, limit: i64) -> sqlx::Result<Vec<FileRow>> {
        let sql = format!("SELECT {FILE_COLUMNS} FROM files WHERE message_id = $1 LIMIT $2");
        on_pool!(self, pool => sqlx::query_as(&sql).bind(GONE).bind(limit).fetch_all(pool).await)
    }

    /// At most `limit` files whose message or account no longer exists though nothing
    /// marked them. A scan of every file: run it rarely.
    pub async fn files_orphaned(&self, limit: i64) -> sqlx::Result<Vec<FileRow>> {
        let sql = format!(
            "SELECT {FILE_COLUMNS} FROM files f WHERE \
             (f.message_id <> '' AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.id = f.message_id)) \
             OR NOT EXISTS (SELECT 1 FROM users u WHERE u.id = f.user_id) LIMIT $1"
        );
        on_pool!(self, pool => sqlx::query_as(&sql).bind(limit).fetch_all(pool).await)
    }

    /// Forgets files whose objects are deleted, and their pieces.
    pub async fn delete_file_rows(&self, ids: &[String]) -> sqlx::Result<()> {
        if ids.is_empty() {
            return Ok(());
        }
        let list = placeholders(1, ids.len());
        // The pieces first: a file row is never gone while pieces name it.
        for sql in [
            format!("DELETE FROM file_chunks WHERE file_id IN ({list})"),
            format!("DELETE FROM files WHERE id IN ({list})"),
        ] {
            on_pool!(self, pool => {
                let mut query = sqlx::query(&sql);
                for id in ids {
                    query = query.bind(id);
                }
                query.execute(pool).await.map(drop)
            })?;
        }
        Ok(())
    }

    /// Records how far a document's processing is.
    pub async fn set_file_progress(&self, id: &str, progress: i32) -> sqlx::Result<()> {
        let sql = "UPDATE files SET progress = $2 WHERE id = $1 AND status = 'processing'";
        on_pool!(self, pool => sqlx::query(sql).bind(id).bind(progress).execute(pool).await.map(drop))
    }

    /// Stores a document's pieces, many rows a statement, on the pool: a large document
    /// never holds the writer that sends commit through.
    pub async fn insert_chunks(&self, chunks: &[ChunkRow]) -> sqlx::Result<()> {
        const ROWS: usize = 100;
        for batch in chunks.chunks(ROWS) {
            let values: Vec<String> = (0..batch.len())
                .map(|i| format!("({})", placeholders(i * 5 + 1, 5)))
                .collect();
            let sql = format!(
                "INSERT INTO file_chunks (file_id, seq, page, text, embedding) VALUES {}",
                values.join(", ")
            );
            on_pool!(self, pool => {
                let mut query = sqlx::query(&sql);
                for c in batch {
                    query = query.bind(&c.file_id).bind(c.seq).bind(c.page).bind(&c.text).bind(&c.embedding);
                }
                query.execute(pool).await.map(drop)
            })?;
        }
        Ok(())
    }

    /// Marks a document whose pieces are stored ready; `false` when it is no longer
    /// being processed (deleted meanwhile, or failed as stale).
    pub async fn finish_document(&self, id: &str, embedding_model: Option<&str>) -> sqlx::Result<bool> {
        let sql = format!(
            "UPDATE files SET status = 'ready', progress = 100, embedding_model = $2 \
             WHERE id = $1 AND status = 'processing' AND {NOT_GONE}"
        );
        let done = on_pool!(self, pool => sqlx::query(&sql)
            .bind(id)
            .bind(embedding_model)
            .execute(pool)
            .await
            .map(|r| r.rows_affected()))?;
        Ok(done == 1)
    }

    /// Deletes a document's pieces (one deleted while it was processed).
    pub async fn delete_chunks(&self, file_id: &str) -> sqlx::Result<()> {
        let sql = "DELETE FROM file_chunks WHERE file_id = $1";
        on_pool!(self, pool => sqlx::query(sql).bind(file_id).execute(pool).await.map(drop))
    }

    /// Marks a document that could not be processed as failed.
    pub async fn fail_document(&self, id: &str) -> sqlx::Result<()> {
        let sql = "UPDATE files SET status = 'failed' WHERE id = $1 AND status = 'processing'";
        on_pool!(self, pool => sqlx::query(sql).bind(id).execute(pool).await.map(drop))
    }

    /// Fails documents still processing since before `before` (the instance that
    /// processed them stopped), and answers them as they now are.
    pub async fn fail_stale_documents(&self, before: i64) -> sqlx::Result<Vec<FileRow>> {
        let sql = format!("SELECT {FILE_COLUMNS} FROM files WHERE status = 'processing' AND created_at < $1");
        let mut stale: Vec<FileRow> =
            on_pool!(self, pool => sqlx::query_as(&sql).bind(before).fetch_all(pool).await)?;
        for file in &mut stale {
            self.fail_document(&file.id).await?;
            file.status = FileStatus::Failed;
        }
        Ok(stale)
    }

    /// The pieces of `file_ids`, at most `limit`, in reading order per file.
    pub async fn chunks_of(&self, file_ids: &[String], limit: i64) -> sqlx::Result<Vec<ChunkRow>> {
        if file_ids.is_empty() {
            return Ok(Vec::new());
        }
        let sql = format!(
            "SELECT file_id, seq, page, text, embedding FROM file_chunks WHERE file_id IN ({}) \
             ORDER BY file_id, seq LIMIT ${}",
            placeholders(1, file_ids.len()),
            file_ids.len() + 1
        );
        on_pool!(self, pool => {
            let mut query = sqlx::query_as(&sql);
            for id in file_ids {
                query = query.bind(id);
            }
            query.bind(limit).fetch_all(pool).await
        })
    }
}
