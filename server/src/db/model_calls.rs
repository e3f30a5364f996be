//! `model_calls`: what each model call used and cost (issue 35). Written once, when the
//! call ends; read by the operator's stats. A call outlives its account (`user_id` set
//! to NULL) and its message (no foreign key): what was spent stays spent.

use chat_contract::states::{CallOutcome, ModelCallKind, PlanType};

use super::{on_pool, on_writer, Db};

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct CallRow {
    pub id: String,
    pub at: i64,
    pub user_id: Option<String>,
    /// The user's plan when the call was stored (a call ends seconds after it starts).
    pub plan_type: PlanType,
    pub kind: ModelCallKind,
    pub model: String,
    pub message_id: Option<String>,
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub images: i64,
    /// Counted by us: the provider said nothing (a cut-off stream, a provider that never
    /// tells).
    pub estimated: bool,
    pub outcome: CallOutcome,
    /// Billionths of a euro, at the catalogue's prices of when it was made.
    pub cost_nanos: i64,
}

/// Calls stored in one statement at most (12 parameters each, well inside SQLite's and
/// Postgres's limits).
pub const MAX_CALLS_AT_ONCE: usize = 200;

const CALL_COLUMNS: &str = "id, at, user_id, plan_type, kind, model, message_id, input_tokens, \
     output_tokens, images, estimated, outcome, cost_nanos";

impl Db {
    /// Stores calls, in one statement. Each one's `plan_type` is read here, from the
    /// user's subscription (free when there is none); a user deleted meanwhile leaves
    /// the call without one. At most [`MAX_CALLS_AT_ONCE`].
    pub async fn insert_model_calls(&self, calls: &[CallRow]) -> sqlx::Result<()> {
        if calls.is_empty() {
            return Ok(());
        }
        let rows: Vec<String> = (0..calls.len())
            .map(|i| {
                let p = |n: usize| format!("${}", i * 12 + n);
                format!(
                    "({}, {}, (SELECT id FROM users WHERE id = {user}), \
                     COALESCE((SELECT plan_type FROM subscriptions WHERE user_id = {user}), 'free'), \
                     {}, {}, {}, {}, {}, {}, {}, {}, {})",
                    p(1),
                    p(2),
                    p(4),
                    p(5),
                    p(6),
                    p(7),
                    p(8),
                    p(9),
                    p(10),
                    p(11),
                    p(12),
                    user = p(3),
                )
            })
            .collect();
        let sql = format!(
            "INSERT INTO model_calls ({CALL_COLUMNS}) VALUES {}",
            rows.join(", ")
        );
        let calls = calls.to_vec();
        let _stored: u64 = on_writer!(self, conn => {
            let mut query = sqlx::query(&sql);
            for c in &calls {
                query = query
                    .bind(&c.id)
                    .bind(c.at)
                    .bind(&c.user_id)
                    .bind(c.kind.as_str())
                    .bind(&c.model)
                    .bind(&c.message_id)
                    .bind(c.input_tokens)
                    .bind(c.output_tokens)
                    .bind(c.images)
                    .bind(c.estimated)
                    .bind(c.outcome.as_str())
                    .bind(c.cost_nanos);
            }
            query.execute(&mut *conn).await.map(|r| r.rows_affected())
        })?;
        Ok(())
    }

    /// The calls made for an answer (the answer, its title, search steps, its image,
    /// the embedding of its question), oldest first.
    pub async fn model_calls_of_message(&self, message_id: &str) -> sqlx::Result<Vec<CallRow>> {
        let sql = format!("SELECT {CALL_COLUMNS} FROM model_calls WHERE message_id = $1 ORDER BY id");
        on_pool!(self, pool => sqlx::query_as(&sql).bind(message_id).fetch_all(pool).await)
    }

    /// A user's calls that belong to no message (a document's embeddings), oldest first.
    pub async fn model_calls_without_message(&self, user_id: &str) -> sqlx::Result<Vec<CallRow>> {
        let sql = format!(
            "SELECT {CALL_COLUMNS} FROM model_calls WHERE user_id = $1 AND message_id IS NULL ORDER BY id"
        );
        on_pool!(self, pool => sqlx::query_as(&sql).bind(user_id).fetch_all(pool).await)
    }
}
