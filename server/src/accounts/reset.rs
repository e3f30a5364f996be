//! The forgotten password: a code mailed to a known e-mail, checked, then a new password.
//! Every answer reads the same for a known and an unknown e-mail.

use serde::Deserialize;

use crate::domain::{Code, Email, Password};
use crate::error::{ErrorCode, Result};
use crate::i18n::{self, Lang};
use crate::mail;

use super::code_checks::{CODE, RESET};
use super::codes::{new_code, new_token};
use super::Accounts;

#[derive(Deserialize)]
pub struct Forgot {
    email: Option<String>,
    lang: Option<String>,
}

#[derive(Deserialize)]
pub struct VerifyReset {
    email: Option<String>,
    code: Option<String>,
    token: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NewPassword {
    token: Option<String>,
    new_password: Option<String>,
    confirm_password: Option<String>,
    lang: Option<String>,
}

impl Accounts {
    /// Always a token, known e-mail or not, so nobody can probe which e-mails are
    /// registered; only a known one gets a stored reset and a mail. Both happen after the
    /// answer, so its timing does not tell either.
    pub async fn forgot_password(&self, form: &Forgot, client: Option<&str>) -> Result<String> {
        if let Some(lang) = form.lang.as_deref().and_then(i18n::from_hint) {
            i18n::set_current(lang);
        }
        let lang = i18n::current();
        self.limits.call_from(client).await?;
        let email = Email::parse(form.email.as_deref())?;
        self.limits.mail(email.as_str()).await?;
        let token = new_token();
        let token_hash = self.codes.hash(RESET, &token);
        let worker = self.clone();
        let email = email.as_str().to_owned();
        actix_web::rt::spawn(async move {
            if let Err(e) = worker.start_reset(&email, &token_hash, lang).await {
                tracing::error!(error = ?e, "could not start a password reset");
            }
        });
        Ok(token)
    }

    /// Stores a reset for `email` and mails its code, if the e-mail belongs to a user.
    async fn start_reset(&self, email: &str, token_hash: &str, lang: Lang) -> anyhow::Result<()> {
        let Some(user) = self.db.user_by_email(email).await? else {
            return Ok(());
        };
        let code = new_code();
        let now = self.now();
        let code_hash = self.codes.hash(CODE, &code);
        self.db
            .put_reset(token_hash, &user.id, &code_hash, now + self.code_ttl_ms(), now)
            .await?;
        let ttl = self.settings.auth.code_ttl_minutes;
        self.mailer
            .send(mail::reset_code(lang, &user.email, &user.name, &code, ttl))
            .await
    }

    /// Checks the mailed code; the token that may set the new password.
    pub async fn verify_reset_code(&self, form: &VerifyReset, client: Option<&str>) -> Result<String> {
        self.limits.call_from(client).await?;
        let email = Email::parse(form.email.as_deref())?;
        let code = Code::parse(form.code.as_deref())?;
        let attempt = self.limits.attempt_from(client, email.as_str()).await?;
        let token_hash = self.codes.hash(RESET, form.token.as_deref().unwrap_or(""));
        // An unknown token (e.g. from a forgot-password call for an unregistered e-mail)
        // answers like a wrong code.
        let reset = self
            .db
            .reset(&token_hash)
            .await?
            .filter(|r| !r.verified)
            .ok_or(ErrorCode::InvalidCode)?;
        let stored = if reset.email == email.as_str() {
            reset.code_hash.as_str()
        } else {
            ""
        };
        self.claim_code_check(&reset.user_id, RESET).await?;
        self.check_code(stored, reset.attempts, reset.expires_at, &code, || {
            self.db.reset_failed_attempt(&token_hash)
        })
        .await?;
        self.limits.succeeded(attempt).await;
        let token = new_token();
        let expires_at = self.now() + self.code_ttl_ms();
        let verified = self
            .db
            .verify_reset(&token_hash, &self.codes.hash(RESET, &token), expires_at)
            .await?;
        if !verified {
            return Err(ErrorCode::VerificationFailed.into());
        }
        Ok(token)
    }

    /// Sets the new password; every session of the account ends.
    pub async fn reset_password(&self, form: &NewPassword, client: Option<&str>) -> Result<()> {
        if let Some(lang) = form.lang.as_deref().and_then(i18n::from_hint) {
            i18n::set_current(lang);
        }
        self.limits.call_from(client).await?;
        let password = Password::parse(form.new_password.as_deref(), ErrorCode::NewPasswordRequired)?;
        if form
            .confirm_password
            .as_deref()
            .is_some_and(|c| c != password.expose())
        {
            return Err(ErrorCode::PasswordsMismatch.into());
        }
        let token_hash = self.codes.hash(RESET, form.token.as_deref().unwrap_or(""));
        let reset = self
            .db
            .reset(&token_hash)
            .await?
            .filter(|r| r.verified)
            .ok_or(ErrorCode::VerificationFailed)?;
        if reset.expires_at <= self.now() {
            return Err(ErrorCode::CodeExpired.into());
        }
        let hash = self.hasher.hash(password.expose()).await?;
        // Bumps the token version (every session ends) and deletes the reset (single use).
        self.db.set_password(&reset.user_id, &hash, self.now()).await?;
        self.revoke_sessions(&reset.user_id, "password_reset");
        Ok(())
    }
}
