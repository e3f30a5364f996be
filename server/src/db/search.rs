//! Full-text search over a user's conversations: SQLite's FTS5 tables and Postgres's
//! `tsvector` columns (migration 0016), both kept by every write. Titles and messages
//! of every branch, archived conversations too; the rules (what a query is, the snippet)
//! are in `crate::conversation_search`.

use std::collections::HashMap;

use super::files::placeholders;
use super::{on_pool, Db};

/// A hit: the conversation, and the message (`None`: its title) with its text.
#[derive(Debug, Clone)]
pub struct SearchRow {
    pub conversation_id: String,
    pub title: Option<String>,
    pub message_id: Option<String>,
    pub archived: bool,
    pub updated_at: i64,
    /// The message's text, or the title.
    pub text: String,
}

/// Title hits weigh twice a message's: a conversation named after the words is the
/// likeliest one wanted.
const SQLITE_RANKED: &str = "\
    SELECT c.id AS conversation_id, NULL AS message_id, c.updated_at, -2.0 * bm25(conversation_search) AS rank \
    FROM conversation_search JOIN conversations c ON c.rowid = conversation_search.rowid \
    WHERE conversation_search MATCH $2 AND c.user_id = $1 \
    UNION ALL \
    SELECT m.conversation_id, m.id, c.updated_at, -bm25(message_search) \
    FROM message_search JOIN messages m ON m.rowid = message_search.rowid \
    JOIN conversations c ON c.id = m.conversation_id \
    WHERE message_search MATCH $2 AND c.user_id = $1 \
    ORDER BY rank DESC, updated_at DESC, conversation_id, message_id LIMIT $3 OFFSET $4";

const POSTGRES_RANKED: &str = "\
    WITH q AS (SELECT to_tsquery('simple'::regconfig, search_fold($2)) AS q) \
    SELECT c.id AS conversation_id, NULL::text AS message_id, c.updated_at, 2 * ts_rank(c.search_vector, q.q) AS rank \
    FROM conversations c, q WHERE c.user_id = $1 AND c.search_vector @@ q.q \
    UNION ALL \
    SELECT m.conversation_id, m.id, c.updated_at, ts_rank(m.search_vector, q.q) \
    FROM messages m JOIN conversations c ON c.id = m.conversation_id, q \
    WHERE c.user_id = $1 AND m.search_vector @@ q.q \
    ORDER BY rank DESC, updated_at DESC, conversation_id, message_id LIMIT $3 OFFSET $4";

impl Db {
    /// A page of the user's hits, best first. `fts5` and `tsquery` are the same query
    /// written for each database.
    pub async fn search(
        &self,
        user_id: &str,
        fts5: &str,
        tsquery: &str,
        limit: i64,
        offset: i64,
    ) -> sqlx::Result<Vec<SearchRow>> {
        // The ranking reads ids only; the texts (up to a long answer each) are read for
        // the page alone.
        let ranked: Vec<(String, Option<String>)> = match self {
            Db::Sqlite(pool, _) => {
                sqlx::query_as(&format!(
                    "SELECT conversation_id, message_id FROM ({SQLITE_RANKED})"
                ))
                .bind(user_id)
                .bind(fts5)
                .bind(limit)
                .bind(offset)
                .fetch_all(pool)
                .await?
            }
            Db::Postgres(pool) => {
                sqlx::query_as(&format!(
                    "SELECT conversation_id, message_id FROM ({POSTGRES_RANKED}) hits"
                ))
                .bind(user_id)
                .bind(tsquery)
                .bind(limit)
                .bind(offset)
                .fetch_all(pool)
                .await?
            }
        };
        if ranked.is_empty() {
            return Ok(Vec::new());
        }
        // The page's conversations and messages in two reads.
        let mut conversation_ids: Vec<&str> = ranked.iter().map(|(c, _)| c.as_str()).collect();
        conversation_ids.sort_unstable();
        conversation_ids.dedup();
        let message_ids: Vec<&str> = ranked.iter().filter_map(|(_, m)| m.as_deref()).collect();
        let sql = format!(
            "SELECT id, title, archived, updated_at FROM conversations WHERE id IN ({})",
            placeholders(1, conversation_ids.len())
        );
        let conversations: Vec<(String, Option<String>, bool, i64)> = on_pool!(self, pool => {
            let mut query = sqlx::query_as(&sql);
            for id in &conversation_ids {
                query = query.bind(*id);
            }
            query.fetch_all(pool).await
        })?;
        let conversations: HashMap<String, (Option<String>, bool, i64)> = conversations
            .into_iter()
            .map(|(id, title, archived, updated_at)| (id, (title, archived, updated_at)))
            .collect();
        let mut contents: HashMap<String, String> = HashMap::new();
        if !message_ids.is_empty() {
            let sql = format!(
                "SELECT id, content FROM messages WHERE id IN ({})",
                placeholders(1, message_ids.len())
            );
            let found: Vec<(String, String)> = on_pool!(self, pool => {
                let mut query = sqlx::query_as(&sql);
                for id in &message_ids {
                    query = query.bind(*id);
                }
                query.fetch_all(pool).await
            })?;
            contents.extend(found);
        }
        let mut rows = Vec::with_capacity(ranked.len());
        for (conversation_id, message_id) in ranked {
            // Deleted between the reads: not a hit any more.
            let Some((title, archived, updated_at)) = conversations.get(&conversation_id) else {
                continue;
            };
            let text = match &message_id {
                Some(id) => match contents.get(id) {
                    Some(content) => content.clone(),
                    None => continue,
                },
                None => title.clone().unwrap_or_default(),
            };
            rows.push(SearchRow {
                text,
                title: title.clone(),
                archived: *archived,
                updated_at: *updated_at,
                conversation_id,
                message_id,
            });
        }
        Ok(rows)
    }
}

#[cfg(test)]
mod tests {
    use sqlx::{Connection, Row};

    use crate::db::conversations::tests::migrations;

    /// Migration 0016 indexes what was stored before it; its triggers keep the index
    /// with later writes and deletions (a cascade included).
    #[tokio::test]
    async fn stored_conversations_are_indexed_and_kept_in_step() {
        // One connection: each in-memory connection is a database of its own.
        let mut db = sqlx::SqliteConnection::connect("sqlite::memory:").await.unwrap();
        for sql in migrations("0016") {
            sqlx::raw_sql(&sql).execute(&mut db).await.unwrap();
        }
        sqlx::raw_sql(
            "PRAGMA foreign_keys = ON; \
             INSERT INTO users (id, email, password_hash, name, created_at, updated_at) \
             VALUES ('u', 'u@example.com', 'x', 'U', 1, 1); \
             INSERT INTO conversations (id, user_id, title, model, created_at, updated_at) VALUES \
             ('c1', 'u', 'Árvíztűrő', 'm', 1, 1), ('c2', 'u', NULL, 'm', 1, 1); \
             INSERT INTO messages (id, conversation_id, role, content, status, created_at, updated_at) VALUES \
             ('q1', 'c1', 'user', 'tükörfúrógép', 'complete', 1, 1), ('a1', 'c2', 'assistant', '', 'streaming', 2, 2);",
        )
        .execute(&mut db)
        .await
        .unwrap();
        let migration = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../migrations/sqlite/0016_find_keep_share.sql"
        ));
        sqlx::raw_sql(&migration.unwrap()).execute(&mut db).await.unwrap();

        async fn hits(db: &mut sqlx::SqliteConnection, q: &str) -> Vec<String> {
            let sql = "SELECT m.id FROM message_search s JOIN messages m ON m.rowid = s.rowid \
                       WHERE message_search MATCH $1 UNION ALL \
                       SELECT c.id FROM conversation_search s JOIN conversations c ON c.rowid = s.rowid \
                       WHERE conversation_search MATCH $1 ORDER BY 1";
            let rows = sqlx::query(sql).bind(q).fetch_all(db).await.unwrap();
            rows.iter().map(|r| r.get(0)).collect()
        }
        assert_eq!(hits(&mut db, "\"tukor\"*").await, ["q1"]);
        assert_eq!(hits(&mut db, "\"ARVIZTURO\"").await, ["c1"]);
        // The streamed answer is indexed when its text is written; a new title too.
        sqlx::raw_sql(
            "UPDATE messages SET content = 'lighthouse keeper', status = 'complete' WHERE id = 'a1'; \
             UPDATE conversations SET title = 'Lighthouses' WHERE id = 'c2';",
        )
        .execute(&mut db)
        .await
        .unwrap();
        assert_eq!(hits(&mut db, "\"lighthouse\"*").await, ["a1", "c2"]);
        // A deleted conversation takes its messages' entries with it.
        sqlx::raw_sql("DELETE FROM conversations WHERE id = 'c1'")
            .execute(&mut db)
            .await
            .unwrap();
        assert!(hits(&mut db, "\"tukor\"*").await.is_empty());
        assert!(hits(&mut db, "\"arvizturo\"").await.is_empty());
        let left: i64 = sqlx::query_scalar("SELECT count(*) FROM message_search")
            .fetch_one(&mut db)
            .await
            .unwrap();
        assert_eq!(left, 1);
    }
}
