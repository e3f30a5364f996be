//! Password resets: an e-mailed code, then a verified single-use token.

use super::{on_pool, Db};

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct PasswordReset {
    pub token_hash: String,
    pub user_id: String,
    pub email: String,
    pub code_hash: String,
    pub attempts: i64,
    pub verified: bool,
    pub expires_at: i64,
}

impl Db {
    /// Starts a reset; earlier unfinished resets of the user are dropped.
    pub async fn put_reset(
        &self,
        token_hash: &str,
        user_id: &str,
        code_hash: &str,
        expires_at: i64,
        now: i64,
    ) -> sqlx::Result<()> {
        let clear = "DELETE FROM password_resets WHERE user_id = $1 OR expires_at < $2";
        let insert = "INSERT INTO password_resets (token_hash, user_id, code_hash, attempts, verified, expires_at, created_at) \
                      VALUES ($1, $2, $3, 0, FALSE, $4, $5)";
        on_pool!(self, pool => {
            let mut tx = pool.begin().await?;
            sqlx::query(clear).bind(user_id).bind(now).execute(&mut *tx).await?;
            sqlx::query(insert)
                .bind(token_hash)
                .bind(user_id)
                .bind(code_hash)
                .bind(expires_at)
                .bind(now)
                .execute(&mut *tx)
                .await?;
            tx.commit().await
        })
    }

    pub async fn reset(&self, token_hash: &str) -> sqlx::Result<Option<PasswordReset>> {
        let sql =
            "SELECT r.token_hash, r.user_id, u.email, r.code_hash, r.attempts, r.verified, r.expires_at \
                   FROM password_resets r JOIN users u ON u.id = r.user_id WHERE r.token_hash = $1";
        on_pool!(self, pool => sqlx::query_as(sql).bind(token_hash).fetch_optional(pool).await)
    }

    pub async fn reset_failed_attempt(&self, token_hash: &str) -> sqlx::Result<i64> {
        let sql =
            "UPDATE password_resets SET attempts = attempts + 1 WHERE token_hash = $1 RETURNING attempts";
        on_pool!(self, pool => sqlx::query_scalar(sql).bind(token_hash).fetch_one(pool).await)
    }

    /// Marks the reset verified under a fresh token: the token that carried the code
    /// stops working, and only the new one may set the password.
    pub async fn verify_reset(
        &self,
        token_hash: &str,
        new_token_hash: &str,
        expires_at: i64,
    ) -> sqlx::Result<bool> {
        let sql = "UPDATE password_resets SET token_hash = $2, verified = TRUE, expires_at = $3 \
                   WHERE token_hash = $1 AND verified = FALSE";
        let done = on_pool!(self, pool => sqlx::query(sql)
            .bind(token_hash)
            .bind(new_token_hash)
            .bind(expires_at)
            .execute(pool)
            .await
            .map(|r| r.rows_affected()))?;
        Ok(done == 1)
    }
}
