//! Conversations and messages.

use super::{on_pool, on_writer, Db};
use chat_contract::states::{FinishReason, MessageRole, MessageStatus};

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct ConversationRow {
    pub id: String,
    pub user_id: String,
    pub title: Option<String>,
    pub model: String,
    pub web_search: bool,
    pub created_at: i64,
    pub updated_at: i64,
    /// The project it is in, if any.
    pub project_id: Option<String>,
    /// The last message of the branch shown.
    pub current_message_id: Option<String>,
    pub pinned: bool,
    pub archived: bool,
}

/// What a send reads of its user and conversation (see [`Db::send_context`]).
pub struct SendContext {
    pub token_version: i64,
    /// `None` until the user's subscription row exists (they are on free).
    pub plan: Option<chat_contract::states::PlanType>,
    pub conversation: Option<ConversationRow>,
}

/// What `PATCH /api/conversations/{id}` changes (`None`: left as it is).
#[derive(Debug, Default)]
pub struct ConversationChange {
    pub title: Option<String>,
    pub pinned: Option<bool>,
    pub archived: Option<bool>,
}

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct MessageRow {
    pub id: String,
    pub conversation_id: String,
    pub role: MessageRole,
    pub content: String,
    pub status: MessageStatus,
    pub model: Option<String>,
    pub client_id: Option<String>,
    pub finish_reason: Option<FinishReason>,
    pub created_at: i64,
    /// An answer's sources, as JSON (`[{fileId, name, page}]`); `None` without any.
    pub sources: Option<String>,
    /// The message it follows (`None` for a conversation's first question).
    pub parent_id: Option<String>,
    /// A question's send options, replayed by a regenerate (see [`SendMode`]).
    pub mode: Option<String>,
    /// An answer's rating (`up` or `down`) and comment.
    pub feedback_rating: Option<String>,
    pub feedback_comment: Option<String>,
}

/// A message of a prompt's history, and how many files it carries.
#[derive(sqlx::FromRow)]
struct HistoryRow {
    #[sqlx(flatten)]
    message: MessageRow,
    files: i64,
    /// The conversation's documents (the same on every row).
    documents: i64,
}

/// A prompt's history: its messages, oldest first, each with how many files it carries,
/// and whether the conversation holds documents (sent in any message, however old).
pub struct History {
    pub messages: Vec<(MessageRow, i64)>,
    pub has_documents: bool,
}

/// The last `limit` usable messages of the branch that ends at `leaf`, followed up
/// through `parent_id` among `rows` (the conversation's newest messages, newest first).
/// `Err` with what was found when the branch leaves `rows` before its first question.
fn branch_of(rows: Vec<HistoryRow>, leaf: &str, limit: i64) -> Result<History, History> {
    let has_documents = rows.first().is_some_and(|r| r.documents > 0);
    let at: std::collections::HashMap<String, usize> = rows
        .iter()
        .enumerate()
        .map(|(i, r)| (r.message.id.clone(), i))
        .collect();
    let mut rows: Vec<Option<HistoryRow>> = rows.into_iter().map(Some).collect();
    let mut picked = Vec::new();
    let mut next = Some(leaf.to_owned());
    let mut whole = true;
    // Each row is taken once: a loop in the tree (never written) cannot hang a send.
    while let Some(id) = next.take() {
        let Some(row) = at.get(&id).and_then(|&i| rows[i].take()) else {
            whole = false;
            break;
        };
        next = row.message.parent_id.clone();
        let usable = row.message.role == MessageRole::User
            || (!row.message.content.is_empty() && row.message.status != MessageStatus::Error);
        if usable {
            picked.push((row.message, row.files));
            if picked.len() as i64 >= limit {
                break;
            }
        }
    }
    picked.reverse();
    let history = History {
        messages: picked,
        has_documents,
    };
    if whole {
        Ok(history)
    } else {
        Err(history)
    }
}

pub(super) const CONVERSATION_COLUMNS: &str =
    "id, user_id, title, model, web_search, created_at, updated_at, project_id, current_message_id, pinned, archived";
pub(super) const MESSAGE_COLUMNS: &str =
    "id, conversation_id, role, content, status, model, client_id, finish_reason, \
                               created_at, sources, parent_id, mode, feedback_rating, feedback_comment";

/// Binds a [`MessageRow`]'s values in [`MESSAGE_COLUMNS`] order: one list for every
/// statement that writes whole messages. A macro, since the query's type differs per
/// database inside `on_writer!`.
macro_rules! bind_message {
    ($query:expr, $m:expr) => {{
        let m = $m;
        $query
            .bind(&m.id)
            .bind(&m.conversation_id)
            .bind(m.role)
            .bind(&m.content)
            .bind(m.status)
            .bind(&m.model)
            .bind(&m.client_id)
            .bind(m.finish_reason)
            .bind(m.created_at)
            .bind(&m.sources)
            .bind(&m.parent_id)
            .bind(&m.mode)
            .bind(&m.feedback_rating)
            .bind(&m.feedback_comment)
    }};
}
pub(super) use bind_message;

impl Db {
    /// The user's conversation; another user's is `None`, like a missing one.
    pub async fn conversation(&self, user_id: &str, id: &str) -> sqlx::Result<Option<ConversationRow>> {
        let sql = format!("SELECT {CONVERSATION_COLUMNS} FROM conversations WHERE id = $1 AND user_id = $2");
        on_pool!(self, pool => sqlx::query_as(&sql).bind(id).bind(user_id).fetch_optional(pool).await)
    }

    /// What a send checks in one statement: the user's token version and plan as stored
    /// (`None`: no such user) and, when `conversation_id` is given, that conversation if it
    /// is the user's.
    pub async fn send_context(
        &self,
        user_id: &str,
        conversation_id: Option<&str>,
    ) -> sqlx::Result<Option<SendContext>> {
        use sqlx::Row;
        let sql = "SELECT u.token_version, s.plan_type, c.id, c.user_id, c.title, c.model, c.web_search, \
                   c.created_at, c.updated_at, c.project_id, c.current_message_id, c.pinned, c.archived \
                   FROM users u LEFT JOIN subscriptions s ON s.user_id = u.id \
                   LEFT JOIN conversations c ON c.id = $2 AND c.user_id = u.id WHERE u.id = $1";
        // An id no conversation has when the send starts a new one.
        let wanted = conversation_id.unwrap_or("");
        on_pool!(self, pool => {
            let row = sqlx::query(sql).bind(user_id).bind(wanted).fetch_optional(pool).await?;
            row.map(|row| {
                let id: Option<String> = row.try_get(2)?;
                let conversation = match id {
                    Some(id) => Some(ConversationRow {
                        id,
                        user_id: row.try_get(3)?,
                        title: row.try_get(4)?,
                        model: row.try_get(5)?,
                        web_search: row.try_get(6)?,
                        created_at: row.try_get(7)?,
                        updated_at: row.try_get(8)?,
                        project_id: row.try_get(9)?,
                        current_message_id: row.try_get(10)?,
                        pinned: row.try_get(11)?,
                        archived: row.try_get(12)?,
                    }),
                    None => None,
                };
                Ok(SendContext {
                    token_version: row.try_get(0)?,
                    plan: row.try_get(1)?,
                    conversation,
                })
            })
            .transpose()
        })
    }

    /// A page of the user's conversations, newest first, after the cursor
    /// (`updated_at`, `id`) of the previous page's last one.
    /// With `project`, only that project's.
    /// A page of the user's conversations: pinned first, then the newest; only the
    /// archived ones when `archived`, else only the others. `after` is the last row of
    /// the previous page (pinned, updated_at, id).
    pub async fn conversations(
        &self,
        user_id: &str,
        project: Option<&str>,
        archived: bool,
        after: Option<(bool, i64, &str)>,
        limit: i64,
    ) -> sqlx::Result<Vec<ConversationRow>> {
        let (before_pinned, before_time, before_id) = after.unwrap_or((true, i64::MAX, "\u{10FFFF}"));
        let in_project = if project.is_some() {
            "AND project_id = $7"
        } else {
            ""
        };
        let sql = format!(
            "SELECT {CONVERSATION_COLUMNS} FROM conversations WHERE user_id = $1 AND archived = $2 {in_project} \
             AND (pinned < $3 OR (pinned = $3 AND (updated_at < $4 OR (updated_at = $4 AND id < $5)))) \
             ORDER BY pinned DESC, updated_at DESC, id DESC LIMIT $6"
        );
        on_pool!(self, pool => {
            let mut query = sqlx::query_as(&sql)
                .bind(user_id)
                .bind(archived)
                .bind(before_pinned)
                .bind(before_time)
                .bind(before_id)
                .bind(limit);
            if let Some(project) = project {
                query = query.bind(project);
            }
            query.fetch_all(pool).await
        })
    }

    /// Changes what is given of a conversation's title, pin and archive flags; a new
    /// title moves it to the top like a new message (pinning and archiving do not).
    /// False when the user has no such conversation.
    pub async fn update_conversation(
        &self,
        user_id: &str,
        id: &str,
        change: &ConversationChange,
        now: i64,
    ) -> sqlx::Result<bool> {
        let sql = "UPDATE conversations SET title = COALESCE($3, title), pinned = COALESCE($4, pinned), \
                   archived = COALESCE($5, archived), \
                   updated_at = CASE WHEN $3 IS NULL THEN updated_at ELSE $6 END \
                   WHERE id = $1 AND user_id = $2";
        let done = on_pool!(self, pool => sqlx::query(sql)
            .bind(id)
            .bind(user_id)
            .bind(change.title.as_deref())
            .bind(change.pinned)
            .bind(change.archived)
            .bind(now)
            .execute(pool)
            .await
            .map(|r| r.rows_affected()))?;
        Ok(done > 0)
    }

    /// Sets a generated title unless the conversation has one (e.g. renamed meanwhile).
    pub async fn set_generated_title(&self, id: &str, title: &str) -> sqlx::Result<bool> {
        let sql = "UPDATE conversations SET title = $2 WHERE id = $1 AND title IS NULL";
        let (id, title) = (id.to_owned(), title.to_owned());
        let done = on_writer!(self, conn => sqlx::query(sql).bind(id).bind(title).execute(&mut *conn).await.map(|r| r.rows_affected()))?;
        Ok(done == 1)
    }

    /// Moves the user's conversation into the user's project (`None`: out of any);
    /// `false` when either is not the user's. Its place in the list (by its last
    /// message) does not change.
    pub async fn move_conversation(
        &self,
        user_id: &str,
        id: &str,
        project_id: Option<&str>,
    ) -> sqlx::Result<bool> {
        let sql = "UPDATE conversations SET project_id = $3 WHERE id = $1 AND user_id = $2 \
                   AND ($3 IS NULL OR EXISTS (SELECT 1 FROM projects WHERE id = $3 AND user_id = $2))";
        let (id, user_id, project_id) = (id.to_owned(), user_id.to_owned(), project_id.map(str::to_owned));
        let done = on_writer!(self, conn => sqlx::query(sql)
            .bind(id)
            .bind(user_id)
            .bind(project_id)
            .execute(&mut *conn)
            .await
            .map(|r| r.rows_affected()))?;
        Ok(done == 1)
    }

    /// Deletes the conversation (its messages go with it) and marks its files gone for
    /// the sweep (see `db::files`).
    pub async fn delete_conversation(&self, user_id: &str, id: &str) -> sqlx::Result<bool> {
        let sql = "DELETE FROM conversations WHERE id = $1 AND user_id = $2";
        let done = on_pool!(self, pool => sqlx::query(sql).bind(id).bind(user_id).execute(pool).await.map(|r| r.rows_affected()))?;
        if done == 1 {
            self.mark_files_gone(user_id, Some(id)).await?;
        }
        Ok(done == 1)
    }

    /// Stores a send in one transaction: the new conversation (if it is one), the
    /// question (none when an answer is made again) and the empty answer, and the
    /// question's `attachments` (files of its user not sent yet) bound to it; the answer
    /// becomes the conversation's current message and the conversation moves to the top
    /// of the list. A file sent meanwhile by another tab fails it all with `RowNotFound`.
    pub async fn insert_exchange(
        &self,
        new_conversation: Option<&ConversationRow>,
        question: Option<&MessageRow>,
        answer: &MessageRow,
        user_id: &str,
        attachments: &[String],
    ) -> sqlx::Result<()> {
        // A project deleted since the send's checks leaves the conversation in none. A new
        // conversation is neither pinned nor archived (the columns' defaults).
        let conversation = "INSERT INTO conversations (id, user_id, title, model, web_search, created_at, \
                            updated_at, project_id, current_message_id) VALUES ($1, $2, $3, $4, $5, $6, $7, \
                            (SELECT id FROM projects WHERE id = $8 AND user_id = $2), $9)";
        let message = format!(
            "INSERT INTO messages ({MESSAGE_COLUMNS}, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $9)"
        );
        let touch = "UPDATE conversations SET updated_at = $2, current_message_id = $3 WHERE id = $1";
        let bind = "UPDATE files SET message_id = $1, conversation_id = $2 \
                    WHERE id = $3 AND user_id = $4 AND message_id IS NULL AND project_id IS NULL";
        let conversation_row = new_conversation.cloned();
        let rows: Vec<MessageRow> = question.into_iter().chain([answer]).cloned().collect();
        let (user_id, attachments) = (user_id.to_owned(), attachments.to_vec());
        on_writer!(self, conn => {
            if let Some(c) = &conversation_row {
                let answer = rows.last().expect("an answer");
                sqlx::query(conversation)
                    .bind(&c.id)
                    .bind(&c.user_id)
                    .bind(&c.title)
                    .bind(&c.model)
                    .bind(c.web_search)
                    .bind(c.created_at)
                    .bind(c.updated_at)
                    .bind(&c.project_id)
                    .bind(&answer.id)
                    .execute(&mut *conn)
                    .await?;
            }
            for m in &rows {
                bind_message!(sqlx::query(&message), m)
                    .execute(&mut *conn)
                    .await?;
            }
            for file in &attachments {
                let question = &rows[0];
                let bound = sqlx::query(bind)
                    .bind(&question.id)
                    .bind(&question.conversation_id)
                    .bind(file)
                    .bind(&user_id)
                    .execute(&mut *conn)
                    .await?;
                if bound.rows_affected() != 1 {
                    return Err(sqlx::Error::RowNotFound);
                }
            }
            // A new conversation was inserted with its time and current message already.
            if conversation_row.is_none() {
                let answer = rows.last().expect("an answer");
                sqlx::query(touch)
                    .bind(&answer.conversation_id)
                    .bind(answer.created_at)
                    .bind(&answer.id)
                    .execute(&mut *conn)
                    .await?;
            }
            Ok(0)
        })
        .map(drop)
    }

    /// Shows the branch through `message_id` of the user's conversation: its current
    /// message becomes the newest message below it (always a leaf: a reply is newer than
    /// what it follows). `false` when the conversation is not the user's or the message
    /// not in it.
    pub async fn select_branch(
        &self,
        user_id: &str,
        conversation_id: &str,
        message_id: &str,
    ) -> sqlx::Result<bool> {
        let sql = "UPDATE conversations SET current_message_id = ( \
                       WITH RECURSIVE below(id, created_at) AS ( \
                           SELECT id, created_at FROM messages WHERE id = $3 \
                           UNION ALL \
                           SELECT m.id, m.created_at FROM messages m JOIN below b ON m.parent_id = b.id) \
                       SELECT id FROM below ORDER BY created_at DESC, id DESC LIMIT 1) \
                   WHERE id = $1 AND user_id = $2 \
                   AND EXISTS (SELECT 1 FROM messages WHERE id = $3 AND conversation_id = $1)";
        let (user_id, conversation_id, message_id) = (
            user_id.to_owned(),
            conversation_id.to_owned(),
            message_id.to_owned(),
        );
        let done = on_writer!(self, conn => sqlx::query(sql)
            .bind(conversation_id)
            .bind(user_id)
            .bind(message_id)
            .execute(&mut *conn)
            .await
            .map(|r| r.rows_affected()))?;
        Ok(done == 1)
    }

    /// A message of the user's, with its conversation's id; `None` for another user's or
    /// a missing one.
    pub async fn message_of_user(&self, user_id: &str, id: &str) -> sqlx::Result<Option<MessageRow>> {
        let sql = "SELECT m.id, m.conversation_id, m.role, m.content, m.status, m.model, m.client_id, \
                   m.finish_reason, m.created_at, m.sources, m.parent_id, m.mode, m.feedback_rating, \
                   m.feedback_comment FROM messages m JOIN conversations c ON c.id = m.conversation_id \
                   WHERE m.id = $1 AND c.user_id = $2";
        on_pool!(self, pool => sqlx::query_as(sql).bind(id).bind(user_id).fetch_optional(pool).await)
    }

    /// Sets (or with `None`, clears) an answer's rating and comment.
    pub async fn set_feedback(
        &self,
        id: &str,
        rating: Option<&str>,
        comment: Option<&str>,
    ) -> sqlx::Result<()> {
        let sql = "UPDATE messages SET feedback_rating = $2, feedback_comment = $3 WHERE id = $1";
        let (id, rating, comment) = (
            id.to_owned(),
            rating.map(str::to_owned),
            comment.map(str::to_owned),
        );
        on_writer!(self, conn => sqlx::query(sql)
            .bind(id)
            .bind(rating)
            .bind(comment)
            .execute(&mut *conn)
            .await
            .map(|r| r.rows_affected()))
        .map(drop)
    }

    /// The final text and status of a streamed answer.
    pub async fn finish_message(
        &self,
        id: &str,
        content: &str,
        status: MessageStatus,
        finish_reason: FinishReason,
        sources: Option<String>,
        now: i64,
    ) -> sqlx::Result<()> {
        let sql = "UPDATE messages SET content = $2, status = $3, finish_reason = $4, updated_at = $5, sources = $6 \
                   WHERE id = $1";
        let (id, content, status, finish_reason) = (id.to_owned(), content.to_owned(), status, finish_reason);
        on_writer!(self, conn => sqlx::query(sql)
            .bind(id)
            .bind(content)
            .bind(status)
            .bind(finish_reason)
            .bind(now)
            .bind(sources)
            .execute(&mut *conn)
            .await
            .map(|r| r.rows_affected()))
        .map(drop)
    }

    /// Ends an answer still `streaming` as interrupted, with `content` when known (the
    /// text another instance relayed) or the text it has. False if it is not streaming
    /// (its own instance stored it after all).
    pub async fn interrupt_message(&self, id: &str, content: Option<&str>, now: i64) -> sqlx::Result<bool> {
        let sql = "UPDATE messages SET content = COALESCE($2, content), status = 'error', \
                   finish_reason = 'interrupted', updated_at = $3 WHERE id = $1 AND status = 'streaming'";
        let (id, content) = (id.to_owned(), content.map(str::to_owned));
        on_writer!(self, conn => sqlx::query(sql)
            .bind(id)
            .bind(content)
            .bind(now)
            .execute(&mut *conn)
            .await
            .map(|r| r.rows_affected()))
        .map(|changed| changed == 1)
    }

    pub async fn message(&self, id: &str) -> sqlx::Result<Option<MessageRow>> {
        let sql = format!("SELECT {MESSAGE_COLUMNS} FROM messages WHERE id = $1");
        on_pool!(self, pool => sqlx::query_as(&sql).bind(id).fetch_optional(pool).await)
    }

    /// Messages of a conversation, oldest first.
    pub async fn messages(&self, conversation_id: &str) -> sqlx::Result<Vec<MessageRow>> {
        let sql = format!(
            "SELECT {MESSAGE_COLUMNS} FROM messages WHERE conversation_id = $1 ORDER BY created_at, id"
        );
        on_pool!(self, pool => sqlx::query_as(&sql).bind(conversation_id).fetch_all(pool).await)
    }

    /// The last `limit` messages a prompt can use (questions, and answers with text that
    /// did not fail) on the branch that ends at `leaf`: the path from the conversation's
    /// first question, other versions left out. Oldest first, each with how many files it
    /// carries (so a conversation without any reads no files). A question may have no
    /// text when it carries images.
    pub async fn recent_messages(
        &self,
        conversation_id: &str,
        leaf: &str,
        limit: i64,
    ) -> sqlx::Result<History> {
        // Most conversations are one branch: their newest messages are it. A few more than
        // needed are read (a failed answer is left out of the prompt, yet is the parent of
        // the next question) and the branch is followed up from the leaf; only when it
        // leaves what was read is the whole conversation read (a recursive query would be
        // planned badly by Postgres and cost more on every send). The documents' count is
        // a subquery that names no row: computed once.
        let sql = format!(
            "SELECT {MESSAGE_COLUMNS}, (SELECT COUNT(*) FROM files f WHERE f.message_id = messages.id) AS files, \
             (SELECT COUNT(*) FROM files d WHERE d.conversation_id = $1 AND d.kind = 'document' \
             AND d.message_id <> '') AS documents \
             FROM messages WHERE conversation_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2"
        );
        let read = |limit: i64| {
            let sql = &sql;
            async move {
                on_pool!(self, pool => sqlx::query_as::<_, HistoryRow>(sql).bind(conversation_id).bind(limit).fetch_all(pool).await)
            }
        };
        let rows = read(limit.saturating_mul(2).saturating_add(2)).await?;
        match branch_of(rows, leaf, limit) {
            Ok(history) => Ok(history),
            Err(_) => Ok(branch_of(read(i64::MAX).await?, leaf, limit).unwrap_or_else(|partial| partial)),
        }
    }

    /// Answers still `streaming` since before `cutoff`: their server stopped mid-way (no
    /// generation runs that long). They become errors with the text they have.
    pub async fn close_interrupted_messages(&self, cutoff: i64, now: i64) -> sqlx::Result<u64> {
        let sql = "UPDATE messages SET status = 'error', finish_reason = 'interrupted', updated_at = $2 \
                   WHERE status = 'streaming' AND updated_at < $1";
        on_pool!(self, pool => sqlx::query(sql).bind(cutoff).bind(now).execute(pool).await.map(|r| r.rows_affected()))
    }
}

/// A conversation of `users seed --messages`: a title and its messages, one chain.
pub struct SeedConversation {
    pub title: String,
    /// Question, answer, question… oldest first.
    pub messages: Vec<String>,
}

impl Db {
    /// Stores made-up history for a load-test user (the search bench), in one transaction.
    pub async fn insert_seed_history(
        &self,
        user_id: &str,
        conversations: &[SeedConversation],
        now: i64,
    ) -> sqlx::Result<()> {
        let conversation = "INSERT INTO conversations (id, user_id, title, model, created_at, updated_at) \
                            VALUES ($1, $2, $3, 'seed', $4, $4)";
        let message = "INSERT INTO messages (id, conversation_id, role, content, status, created_at, updated_at, parent_id) \
                       VALUES ($1, $2, $3, $4, 'complete', $5, $5, $6)";
        let current = "UPDATE conversations SET current_message_id = $2 WHERE id = $1";
        on_pool!(self, pool => {
            let mut tx = pool.begin().await?;
            for (i, c) in conversations.iter().enumerate() {
                let id = uuid::Uuid::now_v7().to_string();
                let at = now - ((conversations.len() - i) as i64) * 60_000;
                sqlx::query(conversation).bind(&id).bind(user_id).bind(&c.title).bind(at).execute(&mut *tx).await?;
                let mut parent: Option<String> = None;
                for (j, text) in c.messages.iter().enumerate() {
                    let message_id = uuid::Uuid::now_v7().to_string();
                    let role = if j % 2 == 0 { MessageRole::User } else { MessageRole::Assistant };
                    sqlx::query(message)
                        .bind(&message_id)
                        .bind(&id)
                        .bind(role)
                        .bind(text)
                        .bind(at + j as i64)
                        .bind(parent.as_deref())
                        .execute(&mut *tx)
                        .await?;
                    parent = Some(message_id);
                }
                sqlx::query(current).bind(&id).bind(parent.as_deref()).execute(&mut *tx).await?;
            }
            tx.commit().await
        })
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use sqlx::Row;

    /// The SQLite migrations up to (and without) `before`, in order.
    pub(crate) fn migrations(before: &str) -> Vec<String> {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../migrations/sqlite");
        let mut files: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.file_name().unwrap().to_str().unwrap() < before)
            .collect();
        files.sort();
        files
            .iter()
            .map(|p| std::fs::read_to_string(p).unwrap())
            .collect()
    }

    #[tokio::test]
    async fn conversations_stored_before_versions_become_one_branch() {
        use sqlx::Connection;
        // One connection: each in-memory connection is a database of its own.
        let mut db = sqlx::SqliteConnection::connect("sqlite::memory:").await.unwrap();
        for sql in migrations("0015") {
            sqlx::raw_sql(&sql).execute(&mut db).await.unwrap();
        }
        sqlx::raw_sql("PRAGMA foreign_keys = OFF")
            .execute(&mut db)
            .await
            .unwrap();
        sqlx::raw_sql(
            "INSERT INTO conversations (id, user_id, model, created_at, updated_at) VALUES \
             ('c1', 'u', 'm', 1, 4), ('c2', 'u', 'm', 1, 1), ('empty', 'u', 'm', 1, 1); \
             INSERT INTO messages (id, conversation_id, role, content, status, created_at, updated_at) VALUES \
             ('q1', 'c1', 'user', 'a', 'complete', 1, 1), ('a1', 'c1', 'assistant', 'b', 'complete', 2, 2), \
             ('q2b', 'c1', 'user', 'c', 'complete', 3, 3), ('q2a', 'c1', 'user', 'c', 'complete', 3, 3), \
             ('a2', 'c1', 'assistant', 'd', 'complete', 4, 4), ('x1', 'c2', 'user', 'e', 'complete', 2, 2);",
        )
        .execute(&mut db)
        .await
        .unwrap();
        let trees = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../migrations/sqlite/0015_trees.sql"
        ));
        sqlx::raw_sql(&trees.unwrap()).execute(&mut db).await.unwrap();

        let rows = sqlx::query("SELECT id, parent_id FROM messages ORDER BY conversation_id, created_at, id")
            .fetch_all(&mut db)
            .await
            .unwrap();
        let parents: Vec<(String, Option<String>)> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
        let expected = [
            ("q1", None),
            ("a1", Some("q1")),
            // Equal times keep the order of their ids.
            ("q2a", Some("a1")),
            ("q2b", Some("q2a")),
            ("a2", Some("q2b")),
            ("x1", None),
        ];
        let expected: Vec<(String, Option<String>)> = expected
            .iter()
            .map(|(id, parent)| (id.to_string(), parent.map(str::to_owned)))
            .collect();
        assert_eq!(parents, expected);
        let current = sqlx::query("SELECT id, current_message_id FROM conversations ORDER BY id")
            .fetch_all(&mut db)
            .await
            .unwrap();
        let current: Vec<(String, Option<String>)> = current.iter().map(|r| (r.get(0), r.get(1))).collect();
        assert_eq!(
            current,
            [
                ("c1".to_owned(), Some("a2".to_owned())),
                ("c2".to_owned(), Some("x1".to_owned())),
                ("empty".to_owned(), None)
            ]
        );
    }
}
