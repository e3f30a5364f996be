//! Export and import (`crate::portability`): an account read in pages, so an export's
//! memory does not grow with the account, and imported conversations stored in one
//! transaction.

use super::conversations::{
    bind_message, ConversationRow, MessageRow, CONVERSATION_COLUMNS, MESSAGE_COLUMNS,
};
use super::files::{placeholders, FileRow, FILE_COLUMNS, NOT_GONE};
use super::{on_pool, on_writer, Db};

/// Where a page read in `(created_at, id)` order starts: after this row.
pub type After = Option<(i64, String)>;

/// Rows per multi-row INSERT of an import (14 values each: well under both backends'
/// limits on bound parameters).
const INSERT_ROWS: usize = 100;

/// A conversation to import, its messages in an order where each parent comes first.
pub struct Imported {
    pub conversation: ConversationRow,
    pub messages: Vec<MessageRow>,
}

/// The bounds of a keyset page: `(created_at, id)` strictly after `after`.
fn start(after: &After) -> (i64, &str) {
    match after {
        Some((time, id)) => (*time, id.as_str()),
        None => (i64::MIN, ""),
    }
}

impl Db {
    /// A page of the user's conversations, oldest first, after `after`.
    pub async fn conversations_page(
        &self,
        user_id: &str,
        after: &After,
        limit: i64,
    ) -> sqlx::Result<Vec<ConversationRow>> {
        let sql = format!(
            "SELECT {CONVERSATION_COLUMNS} FROM conversations WHERE user_id = $1 \
             AND (created_at > $2 OR (created_at = $2 AND id > $3)) ORDER BY created_at, id LIMIT $4"
        );
        let (time, id) = start(after);
        on_pool!(self, pool => sqlx::query_as(&sql).bind(user_id).bind(time).bind(id).bind(limit).fetch_all(pool).await)
    }

    /// A page of a conversation's messages (every branch), oldest first, after `after`.
    pub async fn messages_page(
        &self,
        conversation_id: &str,
        after: &After,
        limit: i64,
    ) -> sqlx::Result<Vec<MessageRow>> {
        let sql = format!(
            "SELECT {MESSAGE_COLUMNS} FROM messages WHERE conversation_id = $1 \
             AND (created_at > $2 OR (created_at = $2 AND id > $3)) ORDER BY created_at, id LIMIT $4"
        );
        let (time, id) = start(after);
        on_pool!(self, pool => sqlx::query_as(&sql).bind(conversation_id).bind(time).bind(id).bind(limit).fetch_all(pool).await)
    }

    /// Each message's parent in a conversation: small rows, to find the branch shown.
    pub async fn message_links(&self, conversation_id: &str) -> sqlx::Result<Vec<(String, Option<String>)>> {
        let sql = "SELECT id, parent_id FROM messages WHERE conversation_id = $1";
        on_pool!(self, pool => sqlx::query_as(sql).bind(conversation_id).fetch_all(pool).await)
    }

    /// A page of the user's files not deleted (uploaded, sent, made by an answer, a
    /// project's), oldest first, after `after`.
    pub async fn files_page(&self, user_id: &str, after: &After, limit: i64) -> sqlx::Result<Vec<FileRow>> {
        let sql = format!(
            "SELECT {FILE_COLUMNS} FROM files WHERE user_id = $1 AND {NOT_GONE} \
             AND (created_at > $2 OR (created_at = $2 AND id > $3)) ORDER BY created_at, id LIMIT $4"
        );
        let (time, id) = start(after);
        on_pool!(self, pool => sqlx::query_as(&sql).bind(user_id).bind(time).bind(id).bind(limit).fetch_all(pool).await)
    }

    /// Stores imported conversations and their messages in one transaction: all of them
    /// or, on any failure, none. Answers how many messages were stored.
    pub async fn import_conversations(&self, imported: Vec<Imported>) -> sqlx::Result<u64> {
        let conversations: Vec<ConversationRow> = imported.iter().map(|i| i.conversation.clone()).collect();
        let messages: Vec<MessageRow> = imported.into_iter().flat_map(|i| i.messages).collect();
        on_writer!(self, conn => {
            for chunk in conversations.chunks(INSERT_ROWS) {
                let sql = insert_sql("conversations", CONVERSATION_COLUMNS, 11, chunk.len(), None);
                let mut query = sqlx::query(&sql);
                for c in chunk {
                    query = query
                        .bind(&c.id)
                        .bind(&c.user_id)
                        .bind(&c.title)
                        .bind(&c.model)
                        .bind(c.web_search)
                        .bind(c.created_at)
                        .bind(c.updated_at)
                        .bind(&c.project_id)
                        .bind(&c.current_message_id)
                        .bind(c.pinned)
                        .bind(c.archived);
                }
                query.execute(&mut *conn).await?;
            }
            let mut stored = 0;
            for chunk in messages.chunks(INSERT_ROWS) {
                // `updated_at` is the message's `created_at` (the 9th value).
                let sql = insert_sql("messages", &format!("{MESSAGE_COLUMNS}, updated_at"), 14, chunk.len(), Some(9));
                let mut query = sqlx::query(&sql);
                for m in chunk {
                    query = bind_message!(query, m);
                }
                stored += query.execute(&mut *conn).await?.rows_affected();
            }
            Ok(stored)
        })
    }
}

/// `INSERT INTO table (columns) VALUES (…), (…)` for `rows` rows of `values` bound values
/// each; `repeat` (1-based) is a value of the row given again as the last column.
fn insert_sql(table: &str, columns: &str, values: usize, rows: usize, repeat: Option<usize>) -> String {
    let tuples: Vec<String> = (0..rows)
        .map(|row| {
            let first = row * values + 1;
            let mut tuple = placeholders(first, values);
            if let Some(at) = repeat {
                tuple.push_str(&format!(", ${}", first + at - 1));
            }
            format!("({tuple})")
        })
        .collect();
    format!("INSERT INTO {table} ({columns}) VALUES {}", tuples.join(", "))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_multi_row_insert_numbers_every_value_once_and_repeats_one() {
        assert_eq!(
            super::insert_sql("t", "a, b, c", 2, 2, Some(1)),
            "INSERT INTO t (a, b, c) VALUES ($1, $2, $1), ($3, $4, $3)"
        );
    }
}
