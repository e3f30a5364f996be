//! What the operator console reads and changes of users: the users table (accounts,
//! pending registrations and deleted accounts alike), a plan granted with its audit row,
//! and when a user was last active.

use chat_contract::states::{AccountStatus, PlanType, UserRole};

use super::audit::{append_audit, AuditRecord};
use super::subscriptions::{activation_query, Activation, SET_FREE};
use super::{on_pool, Db};

/// How often `users.last_active_at` is written at most: once an hour.
pub const ACTIVE_EVERY_MS: i64 = 3_600_000;

/// One row of the users table, from whichever table holds its status.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct AdminUserDbRow {
    /// `None` for a pending registration (it has no account yet).
    pub id: Option<String>,
    pub email: String,
    pub name: String,
    pub role: UserRole,
    pub created_at: i64,
    pub last_active_at: Option<i64>,
    pub suspended_at: Option<i64>,
    pub plan_type: PlanType,
    pub end_date: Option<i64>,
    /// The row's key after `created_at` in the page order (the id, or the e-mail of a
    /// pending registration): with it, the cursor.
    pub sort_key: String,
}

/// What a page of the users table asks for.
#[derive(Debug, Clone)]
pub struct UserFilter {
    /// Lower-cased in SQL, `%` and `_` escaped: the start of an e-mail or name.
    pub prefix: Option<String>,
    pub plan: Option<PlanType>,
    /// `None`: active and suspended accounts.
    pub status: Option<AccountStatus>,
    /// The `(created_at, key)` of the last row of the previous page.
    pub after: Option<(i64, String)>,
}

/// `text` as the start of a `LIKE … ESCAPE '\'` pattern: its own `%`, `_` and `\` match
/// themselves.
pub fn like_prefix(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 1);
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('%');
    out
}

impl Db {
    /// Up to `limit` rows, newest first (by created, then key). The prefix is compared
    /// with `lower()` on both sides, so both backends fold case alike.
    pub async fn admin_users(&self, filter: &UserFilter, limit: i64) -> sqlx::Result<Vec<AdminUserDbRow>> {
        // The three tables answer the same columns; `$1` prefix, `$2` plan, `$3`/`$4`
        // the cursor.
        let (from, suspended) = match filter.status {
            Some(AccountStatus::Unverified) => (
                "SELECT CAST(NULL AS TEXT) AS id, email, name, 'user' AS role, created_at, \
                 CAST(NULL AS BIGINT) AS last_active_at, CAST(NULL AS BIGINT) AS suspended_at, \
                 'free' AS plan_type, CAST(NULL AS BIGINT) AS end_date, email AS sort_key \
                 FROM pending_registrations",
                "",
            ),
            Some(AccountStatus::Deleted) => (
                "SELECT id, email, name, 'user' AS role, created_at, \
                 CAST(NULL AS BIGINT) AS last_active_at, CAST(NULL AS BIGINT) AS suspended_at, \
                 'free' AS plan_type, CAST(NULL AS BIGINT) AS end_date, id AS sort_key \
                 FROM deleted_accounts",
                "",
            ),
            status => (
                "SELECT u.id, u.email, u.name, u.role, u.created_at, u.last_active_at, u.suspended_at, \
                 COALESCE(s.plan_type, 'free') AS plan_type, s.end_date, u.id AS sort_key \
                 FROM users u LEFT JOIN subscriptions s ON s.user_id = u.id",
                match status {
                    Some(AccountStatus::Active) => " AND suspended_at IS NULL",
                    Some(AccountStatus::Suspended) => " AND suspended_at IS NOT NULL",
                    _ => "",
                },
            ),
        };
        let sql = format!(
            "SELECT * FROM ({from}) AS t \
             WHERE ($1 IS NULL OR lower(email) LIKE lower($1) ESCAPE '\\' OR lower(name) LIKE lower($1) ESCAPE '\\') \
               AND ($2 IS NULL OR plan_type = $2) \
               AND ($3 IS NULL OR created_at < $3 OR (created_at = $3 AND sort_key < $4)){suspended} \
             ORDER BY created_at DESC, sort_key DESC LIMIT $5"
        );
        let (after_at, after_key) = filter.after.clone().unzip();
        on_pool!(self, pool => sqlx::query_as(&sql)
            .bind(filter.prefix.as_deref())
            .bind(filter.plan)
            .bind(after_at)
            .bind(after_key.as_deref())
            .bind(limit)
            .fetch_all(pool)
            .await)
    }

    /// Grants `plan` (`Some` activation: a paid period; `None`: free at once) with its
    /// audit row, in one transaction.
    pub async fn grant_plan(
        &self,
        user_id: &str,
        activation: Option<&Activation<'_>>,
        record: &AuditRecord,
        now: i64,
    ) -> sqlx::Result<()> {
        self.subscription(user_id, now).await?;
        on_pool!(self, pool => {
            let mut tx = pool.begin().await?;
            match activation {
                Some(a) => activation_query!(user_id, a, now).execute(&mut *tx).await?,
                None => sqlx::query(SET_FREE).bind(user_id).bind(now).execute(&mut *tx).await?,
            };
            append_audit!(&mut *tx, record)?;
            tx.commit().await
        })
    }

    /// Appends an audit row on its own: for a change kept elsewhere (the quota counters),
    /// which is undone if this fails.
    pub async fn append_audit(&self, record: &AuditRecord) -> sqlx::Result<()> {
        on_pool!(self, pool => append_audit!(pool, record))
    }

    /// Notes that the user is active now, at most once an hour (the compare is in SQL, so
    /// a busy user costs a read-only statement, not a write).
    pub async fn touch_last_active(&self, user_id: &str, now: i64) -> sqlx::Result<()> {
        let sql = "UPDATE users SET last_active_at = $2 WHERE id = $1 \
                   AND (last_active_at IS NULL OR last_active_at < $3)";
        on_pool!(self, pool => sqlx::query(sql)
            .bind(user_id)
            .bind(now)
            .bind(now - ACTIVE_EVERY_MS)
            .execute(pool)
            .await
            .map(drop))
    }
}
