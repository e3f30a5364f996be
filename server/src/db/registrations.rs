//! Registrations waiting for their e-mailed code.

use super::{on_pool, Db};
use crate::i18n::Lang;

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct PendingRegistration {
    pub token_hash: String,
    pub name: String,
    pub email: String,
    pub password_hash: String,
    pub language: Lang,
    pub code_hash: String,
    pub attempts: i64,
    pub expires_at: i64,
}

impl Db {
    /// Stores a registration. An earlier pending registration of the same e-mail is
    /// replaced: only the newest code and token work. Registrations older than
    /// `stale_before` are swept (their codes expired long ago; resend no longer applies).
    pub async fn put_registration(
        &self,
        r: &PendingRegistration,
        now: i64,
        stale_before: i64,
    ) -> sqlx::Result<()> {
        let clear = "DELETE FROM pending_registrations WHERE email = $1 OR created_at < $2";
        let insert = "INSERT INTO pending_registrations \
            (token_hash, name, email, password_hash, language, code_hash, attempts, expires_at, created_at) \
            VALUES ($1, $2, $3, $4, $5, $6, 0, $7, $8)";
        on_pool!(self, pool => {
            let mut tx = pool.begin().await?;
            sqlx::query(clear).bind(&r.email).bind(stale_before).execute(&mut *tx).await?;
            sqlx::query(insert)
                .bind(&r.token_hash)
                .bind(&r.name)
                .bind(&r.email)
                .bind(&r.password_hash)
                .bind(r.language)
                .bind(&r.code_hash)
                .bind(r.expires_at)
                .bind(now)
                .execute(&mut *tx)
                .await?;
            tx.commit().await
        })
    }

    pub async fn registration(&self, token_hash: &str) -> sqlx::Result<Option<PendingRegistration>> {
        let sql = "SELECT token_hash, name, email, password_hash, language, code_hash, attempts, expires_at \
                   FROM pending_registrations WHERE token_hash = $1";
        on_pool!(self, pool => sqlx::query_as(sql).bind(token_hash).fetch_optional(pool).await)
    }

    /// Counts a wrong code; returns the attempts so far.
    pub async fn registration_failed_attempt(&self, token_hash: &str) -> sqlx::Result<i64> {
        let sql = "UPDATE pending_registrations SET attempts = attempts + 1 \
                   WHERE token_hash = $1 RETURNING attempts";
        on_pool!(self, pool => sqlx::query_scalar(sql).bind(token_hash).fetch_one(pool).await)
    }

    /// Gives a registration a new token and code (resend); the old token stops working.
    /// Returns false if the old token was unknown.
    pub async fn rotate_registration(
        &self,
        old_token_hash: &str,
        new_token_hash: &str,
        code_hash: &str,
        expires_at: i64,
    ) -> sqlx::Result<bool> {
        let sql = "UPDATE pending_registrations SET token_hash = $2, code_hash = $3, attempts = 0, \
                   expires_at = $4 WHERE token_hash = $1";
        let done = on_pool!(self, pool => sqlx::query(sql)
            .bind(old_token_hash)
            .bind(new_token_hash)
            .bind(code_hash)
            .bind(expires_at)
            .execute(pool)
            .await
            .map(|r| r.rows_affected()))?;
        Ok(done == 1)
    }
}
