//! Server-generated secrets and the per-account code-attempt counters.

use super::{on_pool, Db};

impl Db {
    /// The secret stored under `name`, storing `candidate` first if there is none. Of
    /// several instances starting at once, the first insert wins and all read it back.
    pub async fn shared_secret(&self, name: &str, candidate: &str, now: i64) -> sqlx::Result<String> {
        let insert = "INSERT INTO server_secrets (name, value, created_at) VALUES ($1, $2, $3) \
                      ON CONFLICT (name) DO NOTHING";
        let select = "SELECT value FROM server_secrets WHERE name = $1";
        on_pool!(self, pool => {
            sqlx::query(insert).bind(name).bind(candidate).bind(now).execute(pool).await?;
            sqlx::query_scalar(select).bind(name).fetch_one(pool).await
        })
    }

    /// Claims one code check for `subject` in `purpose`: counts it and answers the count,
    /// or `None` when `max` checks were already made in the window that started after
    /// `window_start_after`. Claim and count are one statement, so parallel tries cannot
    /// slip past the cap.
    pub async fn claim_code_attempt(
        &self,
        subject: &str,
        purpose: &str,
        now: i64,
        window_ms: i64,
        max: i64,
    ) -> sqlx::Result<Option<i64>> {
        let sql = "INSERT INTO code_attempts (subject, purpose, window_start, attempts) \
                   VALUES ($1, $2, $3, 1) \
                   ON CONFLICT (subject, purpose) DO UPDATE SET \
                     attempts = CASE WHEN code_attempts.window_start <= $4 THEN 1 \
                                     ELSE code_attempts.attempts + 1 END, \
                     window_start = CASE WHEN code_attempts.window_start <= $4 THEN $3 \
                                         ELSE code_attempts.window_start END \
                   WHERE code_attempts.window_start <= $4 OR code_attempts.attempts < $5 \
                   RETURNING attempts";
        on_pool!(self, pool => sqlx::query_scalar(sql)
            .bind(subject)
            .bind(purpose)
            .bind(now)
            .bind(now - window_ms)
            .bind(max)
            .fetch_optional(pool)
            .await)
    }

    /// When the window of `subject` in `purpose` ends, if `max` checks were made in it.
    pub async fn code_attempts_locked_until(
        &self,
        subject: &str,
        purpose: &str,
        now: i64,
        window_ms: i64,
        max: i64,
    ) -> sqlx::Result<Option<i64>> {
        let sql = "SELECT window_start FROM code_attempts \
                   WHERE subject = $1 AND purpose = $2 AND window_start > $3 AND attempts >= $4";
        let start: Option<i64> = on_pool!(self, pool => sqlx::query_scalar(sql)
            .bind(subject)
            .bind(purpose)
            .bind(now - window_ms)
            .bind(max)
            .fetch_optional(pool)
            .await)?;
        Ok(start.map(|s| s + window_ms))
    }
}
