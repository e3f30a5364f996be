//! Users and their settings (language and AI personalisation live on the user row).

use super::audit::{append_audit, AuditRecord};
use super::subscriptions::{renewal_hold_query, RenewalHold};
use super::{on_pool, Db};
use crate::i18n::Lang;
use chat_contract::states::UserRole;

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct UserRow {
    pub id: String,
    pub name: String,
    pub email: String,
    pub password_hash: String,
    pub profile_image: Option<String>,
    pub token_version: i64,
    pub language: Lang,
    pub ai_enabled: bool,
    pub ai_user_name: String,
    pub ai_user_info: String,
    pub created_at: i64,
    pub role: UserRole,
    /// When an admin suspended the account; `None` while it is not suspended.
    pub suspended_at: Option<i64>,
    pub last_active_at: Option<i64>,
}

const USER_COLUMNS: &str = "id, name, email, password_hash, profile_image, token_version, \
     language, ai_enabled, ai_user_name, ai_user_info, created_at, role, suspended_at, last_active_at";

pub struct NewUser<'a> {
    pub id: &'a str,
    pub name: &'a str,
    pub email: &'a str,
    pub password_hash: &'a str,
    pub language: Lang,
    pub now: i64,
}

/// An admin suspends an account, or lifts its suspension ([`Db::set_suspension`]).
pub struct SuspensionChange<'a> {
    pub user_id: &'a str,
    pub suspend: bool,
    pub now: i64,
    /// What it does to the subscription (decided by billing).
    pub renewal: RenewalHold,
    pub record: &'a AuditRecord,
}

pub struct AiPersonalization<'a> {
    pub enabled: bool,
    pub user_name: &'a str,
    pub user_info: &'a str,
}

impl Db {
    pub async fn user_by_id(&self, id: &str) -> sqlx::Result<Option<UserRow>> {
        let sql = format!("SELECT {USER_COLUMNS} FROM users WHERE id = $1");
        on_pool!(self, pool => sqlx::query_as(&sql).bind(id).fetch_optional(pool).await)
    }

    pub async fn user_by_email(&self, email: &str) -> sqlx::Result<Option<UserRow>> {
        let sql = format!("SELECT {USER_COLUMNS} FROM users WHERE email = $1");
        on_pool!(self, pool => sqlx::query_as(&sql).bind(email).fetch_optional(pool).await)
    }

    pub async fn email_registered(&self, email: &str) -> sqlx::Result<bool> {
        let sql = "SELECT COUNT(*) FROM users WHERE email = $1";
        let count: i64 = on_pool!(self, pool => sqlx::query_scalar(sql).bind(email).fetch_one(pool).await)?;
        Ok(count > 0)
    }

    /// Creates the user and consumes the pending registration in one transaction, so a
    /// registration token can create at most one user. A taken e-mail is a unique violation.
    pub async fn create_user_from_registration(
        &self,
        user: &NewUser<'_>,
        registration_token_hash: &str,
    ) -> sqlx::Result<()> {
        let insert = "INSERT INTO users (id, name, email, password_hash, language, created_at, updated_at) \
                      VALUES ($1, $2, $3, $4, $5, $6, $6)";
        let consume = "DELETE FROM pending_registrations WHERE email = $1 OR token_hash = $2";
        on_pool!(self, pool => {
            let mut tx = pool.begin().await?;
            sqlx::query(insert)
                .bind(user.id)
                .bind(user.name)
                .bind(user.email)
                .bind(user.password_hash)
                .bind(user.language)
                .bind(user.now)
                .execute(&mut *tx)
                .await?;
            sqlx::query(consume)
                .bind(user.email)
                .bind(registration_token_hash)
                .execute(&mut *tx)
                .await?;
            tx.commit().await
        })
    }

    /// Inserts load-test users in one transaction; e-mails already taken are skipped.
    /// Returns how many were new.
    pub async fn insert_seed_users(&self, users: &[NewUser<'_>]) -> sqlx::Result<u64> {
        let insert = "INSERT INTO users (id, name, email, password_hash, language, created_at, updated_at) \
                      VALUES ($1, $2, $3, $4, $5, $6, $6) ON CONFLICT (email) DO NOTHING";
        on_pool!(self, pool => {
            let mut tx = pool.begin().await?;
            let mut added = 0;
            for user in users {
                added += sqlx::query(insert)
                    .bind(user.id)
                    .bind(user.name)
                    .bind(user.email)
                    .bind(user.password_hash)
                    .bind(user.language)
                    .bind(user.now)
                    .execute(&mut *tx)
                    .await?
                    .rows_affected();
            }
            tx.commit().await?;
            Ok(added)
        })
    }

    pub async fn update_user_name(&self, id: &str, name: &str, now: i64) -> sqlx::Result<()> {
        let sql = "UPDATE users SET name = $2, updated_at = $3 WHERE id = $1";
        on_pool!(self, pool => sqlx::query(sql).bind(id).bind(name).bind(now).execute(pool).await.map(drop))
    }

    /// Sets a new password hash and bumps the token version, which revokes every token
    /// issued before. Returns the new version. Also drops any pending password reset.
    pub async fn set_password(&self, id: &str, password_hash: &str, now: i64) -> sqlx::Result<i64> {
        let update = "UPDATE users SET password_hash = $2, token_version = token_version + 1, \
                      updated_at = $3 WHERE id = $1 RETURNING token_version";
        let clear = "DELETE FROM password_resets WHERE user_id = $1";
        on_pool!(self, pool => {
            let mut tx = pool.begin().await?;
            let version: i64 = sqlx::query_scalar(update)
                .bind(id)
                .bind(password_hash)
                .bind(now)
                .fetch_one(&mut *tx)
                .await?;
            sqlx::query(clear).bind(id).execute(&mut *tx).await?;
            tx.commit().await?;
            Ok(version)
        })
    }

    pub async fn set_profile_image(&self, id: &str, image: Option<&str>, now: i64) -> sqlx::Result<()> {
        let sql = "UPDATE users SET profile_image = $2, updated_at = $3 WHERE id = $1";
        on_pool!(self, pool => sqlx::query(sql).bind(id).bind(image).bind(now).execute(pool).await.map(drop))
    }

    pub async fn set_language(&self, id: &str, language: Lang, now: i64) -> sqlx::Result<()> {
        let sql = "UPDATE users SET language = $2, updated_at = $3 WHERE id = $1";
        on_pool!(self, pool => sqlx::query(sql).bind(id).bind(language).bind(now).execute(pool).await.map(drop))
    }

    pub async fn set_ai_personalization(
        &self,
        id: &str,
        ai: &AiPersonalization<'_>,
        now: i64,
    ) -> sqlx::Result<()> {
        let sql = "UPDATE users SET ai_enabled = $2, ai_user_name = $3, ai_user_info = $4, \
                   updated_at = $5 WHERE id = $1";
        on_pool!(self, pool => sqlx::query(sql)
            .bind(id)
            .bind(ai.enabled)
            .bind(ai.user_name)
            .bind(ai.user_info)
            .bind(now)
            .execute(pool)
            .await
            .map(drop))
    }

    /// Gives the user `role`, with its audit row, in one transaction; `false` when the user
    /// already has it (nothing is written).
    pub async fn set_role(&self, id: &str, role: UserRole, record: &AuditRecord) -> sqlx::Result<bool> {
        let sql = "UPDATE users SET role = $2 WHERE id = $1 AND role <> $2";
        on_pool!(self, pool => {
            let mut tx = pool.begin().await?;
            let changed = sqlx::query(sql).bind(id).bind(role).execute(&mut *tx).await?.rows_affected() > 0;
            if changed {
                append_audit!(&mut *tx, record)?;
                tx.commit().await?;
            }
            Ok(changed)
        })
    }

    /// Suspends the user (or lifts it), with the subscription's renewal hold and the audit
    /// row, in one transaction; `false` when the user already was in that state (nothing
    /// is written). A suspension also bumps the token version: the user's tokens stay
    /// refused after it is lifted (docs/security.md).
    pub async fn set_suspension(&self, change: &SuspensionChange<'_>) -> sqlx::Result<bool> {
        let sql = if change.suspend {
            "UPDATE users SET suspended_at = $2, token_version = token_version + 1, updated_at = $2 \
             WHERE id = $1 AND suspended_at IS NULL"
        } else {
            "UPDATE users SET suspended_at = NULL, updated_at = $2 WHERE id = $1 AND suspended_at IS NOT NULL"
        };
        on_pool!(self, pool => {
            let mut tx = pool.begin().await?;
            let changed = sqlx::query(sql)
                .bind(change.user_id)
                .bind(change.now)
                .execute(&mut *tx)
                .await?
                .rows_affected()
                > 0;
            if changed {
                renewal_hold_query!(change.user_id, change.renewal, change.now)
                    .execute(&mut *tx)
                    .await?;
                append_audit!(&mut *tx, change.record)?;
                tx.commit().await?;
            }
            Ok(changed)
        })
    }

    /// Deletes the user; every table that holds user data cascades from `users`, except
    /// `files`, whose rows are marked gone for the sweep (see `db::files`). What the
    /// operator's users table keeps of the account (`deleted_accounts`: id, e-mail, name,
    /// dates) is written in the same transaction, so it is kept exactly when the account goes.
    pub async fn delete_user(&self, id: &str, now: i64) -> sqlx::Result<()> {
        let keep = "INSERT INTO deleted_accounts (id, email, name, created_at, deleted_at)                     SELECT id, email, name, created_at, $2 FROM users WHERE id = $1";
        let sql = "DELETE FROM users WHERE id = $1";
        on_pool!(self, pool => {
            let mut tx = pool.begin().await?;
            sqlx::query(keep).bind(id).bind(now).execute(&mut *tx).await?;
            sqlx::query(sql).bind(id).execute(&mut *tx).await?;
            tx.commit().await
        })?;
        self.mark_files_gone(id, None).await
    }
}
