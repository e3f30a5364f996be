//! How many guesses an e-mailed code gets: `max_code_attempts` per token, and
//! `max_code_attempts_per_hour` per account (or registering e-mail) and flow, so new tokens
//! from resends or new requests share one budget.

use crate::clock::MINUTE_MS;
use crate::domain::Code;
use crate::error::{ApiError, ErrorCode, Result};

use super::codes::same_digest;
use super::Accounts;

// Registration and reset tokens are hashed under these purposes; codes under CODE.
pub(crate) const REGISTRATION: &str = "registration";
pub(crate) const RESET: &str = "reset";
pub(crate) const CODE: &str = "code";

/// Code checks per account and flow are counted in windows of an hour.
const CODE_WINDOW_MS: i64 = 60 * MINUTE_MS;

/// A token that saw too many wrong codes: the client must start over (send-code or
/// forgot-password), which the per-e-mail rate limit lets it do after about a minute.
pub(crate) fn dead_token() -> ApiError {
    ApiError::retry_after(ErrorCode::TooManyAttempts, 60)
}

impl Accounts {
    pub(crate) fn code_ttl_ms(&self) -> i64 {
        self.settings.auth.code_ttl_minutes * MINUTE_MS
    }

    /// Claims one code check for `subject` (the account, or the e-mail of a registration)
    /// in `flow`; a guesser gets `max_code_attempts_per_hour` tries an hour, not 5 per token.
    pub(crate) async fn claim_code_check(&self, subject: &str, flow: &str) -> Result<()> {
        let max = self.settings.auth.max_code_attempts_per_hour;
        let claimed = self
            .db
            .claim_code_attempt(subject, flow, self.now(), CODE_WINDOW_MS, max)
            .await?;
        if claimed.is_some() {
            return Ok(());
        }
        Err(self
            .code_checks_locked(subject, flow)
            .await?
            .unwrap_or_else(dead_token))
    }

    /// The 429 for a flow whose code checks are used up for this window, if they are.
    pub(crate) async fn code_checks_locked(&self, subject: &str, flow: &str) -> Result<Option<ApiError>> {
        let now = self.now();
        let max = self.settings.auth.max_code_attempts_per_hour;
        let until = self
            .db
            .code_attempts_locked_until(subject, flow, now, CODE_WINDOW_MS, max)
            .await?;
        Ok(until.map(|until| {
            ApiError::retry_after(
                ErrorCode::TooManyAttempts,
                ((until - now + 999) / 1000).max(1) as u64,
            )
        }))
    }

    /// Checks `code` against a stored code hash, counting a failure; the token is dead once
    /// `max_code_attempts` wrong codes were tried.
    pub(crate) async fn check_code<F, Fut>(
        &self,
        stored: &str,
        attempts: i64,
        expires_at: i64,
        code: &Code,
        count_failure: F,
    ) -> Result<()>
    where
        F: FnOnce() -> Fut,
        Fut: std::future::Future<Output = sqlx::Result<i64>>,
    {
        let max = self.settings.auth.max_code_attempts;
        if attempts >= max {
            return Err(dead_token());
        }
        if expires_at <= self.now() {
            return Err(ErrorCode::CodeExpired.into());
        }
        if same_digest(stored, &self.codes.hash(CODE, code.as_str())) {
            return Ok(());
        }
        if count_failure().await? >= max {
            Err(dead_token())
        } else {
            Err(ErrorCode::InvalidCode.into())
        }
    }
}
