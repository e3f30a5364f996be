//! Signing in with e-mail and password, and what a token proves.

use serde::Deserialize;

use crate::db::users::UserRow;
use crate::domain::Email;
use crate::error::{ErrorCode, Result};
use crate::i18n;

use super::{Accounts, Session};

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Login {
    email: Option<String>,
    password: Option<String>,
    remember_me: Option<bool>,
}

impl Accounts {
    /// The user and a new token, living `remember_days` when asked to remember, else
    /// `session_days`. A wrong password and an unknown e-mail answer alike, in the same time.
    pub async fn login(&self, form: &Login, client: Option<&str>) -> Result<(UserRow, Session)> {
        self.limits.call_from(client).await?;
        let email = Email::parse(form.email.as_deref())?;
        let password = form.password.as_deref().unwrap_or("");
        if password.is_empty() {
            return Err(ErrorCode::PasswordRequired.into());
        }
        let attempt = self.limits.attempt_from(client, email.as_str()).await?;
        let user = self.db.user_by_email(email.as_str()).await?;
        let hash = user.as_ref().map(|u| u.password_hash.as_str());
        if !self.hasher.verify(password, hash).await? {
            return Err(ErrorCode::InvalidCredentials.into());
        }
        let user = user.ok_or(ErrorCode::InvalidCredentials)?;
        self.limits.succeeded(attempt).await;
        // Only after the password: who lacks it learns nothing of the suspension.
        if user.suspended_at.is_some() {
            return Err(ErrorCode::AccountSuspended.into());
        }
        i18n::set_current(user.language);
        let auth = &self.settings.auth;
        let days = if form.remember_me == Some(true) {
            auth.remember_days
        } else {
            auth.session_days
        };
        let session = self.session(&user.id, user.token_version, days)?;
        self.seen(&user).await;
        Ok((user, session))
    }

    /// Notes that the user is active (a login, a socket connected): the operator's users
    /// table shows it. At most one write an hour per user: skipped when the row read
    /// already says so, and the statement itself compares too (another instance may have
    /// written since). A failure only costs the note.
    pub async fn seen(&self, user: &UserRow) {
        let now = self.now();
        if user
            .last_active_at
            .is_some_and(|at| at >= now - crate::db::admin::ACTIVE_EVERY_MS)
        {
            return;
        }
        if let Err(e) = self.db.touch_last_active(&user.id, now).await {
            tracing::warn!(error = ?e, "noting when a user was last active");
        }
    }

    /// Resolves a token to its user; `None` for a bad, expired or revoked token, or a
    /// deleted user; `account_suspended` (in the user's language) for any genuine token of
    /// a suspended user, revoked or not, so their tabs can say why. Every route and the
    /// websocket go through here: this is where a suspension holds.
    pub async fn authenticate(&self, token: &str) -> Result<Option<UserRow>> {
        let Some(claims) = self.tokens.verify(token, self.now()) else {
            return Ok(None);
        };
        let user = self.db.user_by_id(&claims.sub).await?;
        if let Some(user) = user.as_ref().filter(|u| u.suspended_at.is_some()) {
            i18n::set_current(user.language);
            return Err(ErrorCode::AccountSuspended.into());
        }
        Ok(user.filter(|u| u.token_version == claims.ver))
    }
}
