//! Share links (`shares`), and the copy of a shared conversation that a viewer continues.
//! A link names the last message of the branch it shows; the rows go with their
//! conversation, message or account (foreign keys with `ON DELETE CASCADE`).

use super::conversations::{bind_message, ConversationRow, MessageRow};
use super::{on_pool, on_writer, Db};

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct ShareRow {
    pub id: String,
    /// The secret in the link's URL.
    pub token: String,
    pub user_id: String,
    pub conversation_id: String,
    /// The last message of the branch shared: the snapshot is it and its ancestors.
    pub message_id: String,
    /// The conversation's title when shared.
    pub title: Option<String>,
    /// The owner's name when shared, if they chose to show it.
    pub owner_name: Option<String>,
    pub created_at: i64,
}

const SHARE_COLUMNS: &str = "id, token, user_id, conversation_id, message_id, title, owner_name, created_at";

impl Db {
    /// Stores a link, unless its message is no longer in the user's conversation (deleted
    /// meanwhile): `false` then.
    pub async fn insert_share(&self, s: &ShareRow) -> sqlx::Result<bool> {
        let sql = format!(
            "INSERT INTO shares ({SHARE_COLUMNS}) SELECT $1, $2, $3, $4, $5, $6, $7, $8 \
             WHERE EXISTS (SELECT 1 FROM messages m JOIN conversations c ON c.id = m.conversation_id \
             WHERE m.id = $5 AND c.id = $4 AND c.user_id = $3)"
        );
        let s = s.clone();
        let inserted = on_writer!(self, conn => sqlx::query(&sql)
            .bind(&s.id)
            .bind(&s.token)
            .bind(&s.user_id)
            .bind(&s.conversation_id)
            .bind(&s.message_id)
            .bind(&s.title)
            .bind(&s.owner_name)
            .bind(s.created_at)
            .execute(&mut *conn)
            .await
            .map(|r| r.rows_affected()))?;
        Ok(inserted == 1)
    }

    /// The user's links, newest first.
    pub async fn shares(&self, user_id: &str) -> sqlx::Result<Vec<ShareRow>> {
        let sql = format!(
            "SELECT {SHARE_COLUMNS} FROM shares WHERE user_id = $1 ORDER BY created_at DESC, id DESC"
        );
        on_pool!(self, pool => sqlx::query_as(&sql).bind(user_id).fetch_all(pool).await)
    }

    /// The link with this token, whoever's it is.
    pub async fn share_by_token(&self, token: &str) -> sqlx::Result<Option<ShareRow>> {
        let sql = format!("SELECT {SHARE_COLUMNS} FROM shares WHERE token = $1");
        on_pool!(self, pool => sqlx::query_as(&sql).bind(token).fetch_optional(pool).await)
    }

    /// Revokes the user's link; `false` when it is not the user's (or gone already).
    pub async fn delete_share(&self, user_id: &str, id: &str) -> sqlx::Result<bool> {
        let sql = "DELETE FROM shares WHERE id = $1 AND user_id = $2";
        let (id, user_id) = (id.to_owned(), user_id.to_owned());
        let done = on_writer!(self, conn => sqlx::query(sql)
            .bind(id)
            .bind(user_id)
            .execute(&mut *conn)
            .await
            .map(|r| r.rows_affected()))?;
        Ok(done == 1)
    }

    /// Stores a new conversation with its messages (already linked through `parent_id`)
    /// in one transaction: the copy of a shared conversation.
    pub async fn insert_conversation_copy(
        &self,
        conversation: &ConversationRow,
        messages: &[MessageRow],
    ) -> sqlx::Result<()> {
        let insert_conversation = "INSERT INTO conversations \
             (id, user_id, title, model, web_search, created_at, updated_at, project_id, current_message_id) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, NULL, $8)";
        let insert_message = "INSERT INTO messages (id, conversation_id, role, content, status, model, \
             client_id, finish_reason, created_at, sources, parent_id, mode, feedback_rating, \
             feedback_comment, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $9)";
        let (c, messages) = (conversation.clone(), messages.to_vec());
        on_writer!(self, conn => {
            sqlx::query(insert_conversation)
                .bind(&c.id)
                .bind(&c.user_id)
                .bind(&c.title)
                .bind(&c.model)
                .bind(c.web_search)
                .bind(c.created_at)
                .bind(c.updated_at)
                .bind(&c.current_message_id)
                .execute(&mut *conn)
                .await?;
            for m in &messages {
                bind_message!(sqlx::query(insert_message), m)
                    .execute(&mut *conn)
                    .await?;
            }
            Ok(0)
        })
        .map(drop)
    }
}
