//! The audit log: what operators did. Rows are only ever appended, each by
//! [`append_audit!`] inside the transaction of the change it records, so a change is never
//! kept without its row nor a row without its change.

use std::collections::BTreeMap;

use chat_contract::states::AuditAction;

use super::{on_pool, Db};

/// Who acted.
#[derive(Debug, Clone)]
pub enum Actor {
    /// An admin, over the API: their id and e-mail.
    Admin { id: String, email: String },
    /// `chat-server users …` on the server's shell.
    CommandLine,
    /// The payment provider, reporting what was done in its own dashboard (a refund made
    /// in Stripe's): named by the provider (`stripe`), with no admin id.
    Provider(&'static str),
}

impl Actor {
    pub fn id(&self) -> Option<&str> {
        match self {
            Actor::Admin { id, .. } => Some(id),
            Actor::CommandLine | Actor::Provider(_) => None,
        }
    }

    /// How the log names the actor (the admin's e-mail then).
    pub fn name(&self) -> &str {
        match self {
            Actor::Admin { email, .. } => email,
            Actor::CommandLine => "command line",
            Actor::Provider(name) => name,
        }
    }
}

/// One action on one user, to append.
#[derive(Debug, Clone)]
pub struct AuditRecord {
    pub at: i64,
    pub actor: Actor,
    pub action: AuditAction,
    /// `None` for an account already deleted (a refund of its detached payment).
    pub target_user_id: Option<String>,
    /// The target's e-mail now: it stays readable after the account is deleted.
    pub target: String,
    pub reason: String,
    pub before: BTreeMap<String, String>,
    pub after: BTreeMap<String, String>,
}

/// One stored row, as the log shows it.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct AuditRow {
    pub id: String,
    pub at: i64,
    pub actor_id: Option<String>,
    pub actor: String,
    pub action: AuditAction,
    pub target_user_id: Option<String>,
    pub target: String,
    pub reason: String,
    pub before: String,
    pub after: String,
}

pub const INSERT_AUDIT: &str = "INSERT INTO audit_log \
     (id, at, actor_id, actor, action, target_user_id, target, reason, before, after) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)";

/// Appends an [`AuditRecord`] with `$conn` (the change's transaction) and evaluates to
/// `sqlx::Result<()>`. A macro, as the same statement runs on both backends' connections.
macro_rules! append_audit {
    ($conn:expr, $record:expr) => {{
        let record: &$crate::db::audit::AuditRecord = $record;
        sqlx::query($crate::db::audit::INSERT_AUDIT)
            .bind(uuid::Uuid::now_v7().to_string())
            .bind(record.at)
            .bind(record.actor.id())
            .bind(record.actor.name())
            .bind(record.action)
            .bind(record.target_user_id.as_deref())
            .bind(record.target.as_str())
            .bind(record.reason.as_str())
            .bind($crate::db::audit::json(&record.before))
            .bind($crate::db::audit::json(&record.after))
            .execute($conn)
            .await
            .map(drop)
    }};
}
pub(crate) use append_audit;

pub fn json(fields: &BTreeMap<String, String>) -> String {
    serde_json::to_string(fields).unwrap_or_else(|_| "{}".into())
}

/// The filters of a page of the log.
#[derive(Debug, Default)]
pub struct AuditFilter {
    pub target_user_id: Option<String>,
    pub actor_id: Option<String>,
    /// The last id of the previous page: rows before it (older) come next.
    pub before_id: Option<String>,
}

impl Db {
    /// Up to `limit` rows, newest first.
    pub async fn audit_page(&self, filter: &AuditFilter, limit: i64) -> sqlx::Result<Vec<AuditRow>> {
        // `$n IS NULL OR …`: one statement for every combination of filters.
        let sql = "SELECT id, at, actor_id, actor, action, target_user_id, target, reason, before, after \
                   FROM audit_log \
                   WHERE ($1 IS NULL OR target_user_id = $1) \
                     AND ($2 IS NULL OR actor_id = $2) \
                     AND ($3 IS NULL OR id < $3) \
                   ORDER BY id DESC LIMIT $4";
        on_pool!(self, pool => sqlx::query_as(sql)
            .bind(filter.target_user_id.as_deref())
            .bind(filter.actor_id.as_deref())
            .bind(filter.before_id.as_deref())
            .bind(limit)
            .fetch_all(pool)
            .await)
    }
}
