//! Registration: the form's fields are checked, a code is mailed, and the account is made
//! when the code comes back. A taken e-mail answers exactly as a new one (its owner gets a
//! notice instead of a code), so nobody can probe which addresses have accounts.

use serde::Deserialize;

use crate::clock::DAY_MS;
use crate::db::registrations::PendingRegistration;
use crate::db::users::{NewUser, UserRow};
use crate::domain::{Code, Email, Name, Password};
use crate::error::{ErrorCode, OnUniqueViolation, Result};
use crate::i18n::{self, Lang};
use crate::mail;

use super::code_checks::{dead_token, CODE, REGISTRATION};
use super::codes::{new_code, new_token};
use super::{Accounts, Session};

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SendCode {
    name: Option<String>,
    email: Option<String>,
    password: Option<String>,
    confirm_password: Option<String>,
    privacy_accepted: Option<bool>,
    language: Option<String>,
}

#[derive(Deserialize)]
pub struct Verify {
    token: Option<String>,
    code: Option<String>,
}

impl Accounts {
    /// Checks the form and mails a code; the token to verify it with.
    pub async fn send_registration_code(&self, form: &SendCode, client: Option<&str>) -> Result<String> {
        let lang = form.language.as_deref().and_then(i18n::from_hint);
        if let Some(lang) = lang {
            i18n::set_current(lang);
        }
        let lang = lang.unwrap_or_else(i18n::current);
        self.limits.call_from(client).await?;
        let name = Name::parse(form.name.as_deref())?;
        let email = Email::parse(form.email.as_deref())?;
        let password = Password::parse(form.password.as_deref(), ErrorCode::PasswordRequired)?;
        if form
            .confirm_password
            .as_deref()
            .is_some_and(|c| c != password.expose())
        {
            return Err(ErrorCode::PasswordsMismatch.into());
        }
        if form.privacy_accepted != Some(true) {
            return Err(ErrorCode::PrivacyNotAccepted.into());
        }
        self.limits.mail(email.as_str()).await?;
        // Hashed for a taken e-mail too, so the answer takes as long either way.
        let password_hash = self.hasher.hash(password.expose()).await?;
        let (token, code) = (new_token(), new_code());
        let now = self.now();
        let owner = self.db.user_by_email(email.as_str()).await?;
        let registration = PendingRegistration {
            token_hash: self.codes.hash(REGISTRATION, &token),
            name: name.as_str().to_owned(),
            email: email.as_str().to_owned(),
            password_hash,
            language: lang,
            // A taken e-mail gets a registration whose code never matches (an empty digest
            // equals no hash), so verify and resend answer as they would for a new e-mail.
            code_hash: if owner.is_some() {
                String::new()
            } else {
                self.codes.hash(CODE, &code)
            },
            attempts: 0,
            expires_at: now + self.code_ttl_ms(),
        };
        self.db.put_registration(&registration, now, now - DAY_MS).await?;
        let mail = match &owner {
            Some(owner) => self.registration_notice(owner),
            None => self.registration_code(lang, &registration, &code),
        };
        self.mailer.send(mail).await?;
        Ok(token)
    }

    fn registration_code(&self, lang: Lang, registration: &PendingRegistration, code: &str) -> mail::Mail {
        let ttl = self.settings.auth.code_ttl_minutes;
        mail::registration_code(lang, &registration.email, &registration.name, code, ttl)
    }

    /// The mail to an account's owner when someone tries to register with their address,
    /// in the owner's language.
    fn registration_notice(&self, owner: &UserRow) -> mail::Mail {
        let site = &self.settings.server.public_url;
        mail::registration_attempt(owner.language, &owner.email, &owner.name, site)
    }

    /// Mails a new code for a pending registration; the new token (the old one stops working).
    pub async fn resend_registration_code(
        &self,
        token: Option<&str>,
        client: Option<&str>,
    ) -> Result<String> {
        self.limits.call_from(client).await?;
        let old_hash = self.codes.hash(REGISTRATION, token.unwrap_or(""));
        let registration = self
            .db
            .registration(&old_hash)
            .await?
            .ok_or(ErrorCode::VerificationFailed)?;
        i18n::set_current(registration.language);
        if let Some(locked) = self.code_checks_locked(&registration.email, REGISTRATION).await? {
            return Err(locked);
        }
        if registration.attempts >= self.settings.auth.max_code_attempts {
            return Err(dead_token());
        }
        self.limits.mail(&registration.email).await?;
        // Mail first: if sending fails, the client still holds a working token and may retry.
        let (token, code) = (new_token(), new_code());
        let owner = self.db.user_by_email(&registration.email).await?;
        let (mail, code_hash) = match &owner {
            Some(owner) => (self.registration_notice(owner), String::new()),
            None => (
                self.registration_code(registration.language, &registration, &code),
                self.codes.hash(CODE, &code),
            ),
        };
        self.mailer.send(mail).await?;
        let new_hash = self.codes.hash(REGISTRATION, &token);
        let expires_at = self.now() + self.code_ttl_ms();
        let rotated = self
            .db
            .rotate_registration(&old_hash, &new_hash, &code_hash, expires_at)
            .await?;
        if !rotated {
            // A concurrent resend or verify got there first.
            return Err(ErrorCode::VerificationFailed.into());
        }
        Ok(token)
    }

    /// Makes the account once the right code comes back; the new user, signed in.
    /// `client` is the caller's rate-limit key.
    pub async fn verify_registration(
        &self,
        form: &Verify,
        client: Option<&str>,
    ) -> Result<(UserRow, Session)> {
        self.limits.call_from(client).await?;
        let code = Code::parse(form.code.as_deref())?;
        let token_hash = self.codes.hash(REGISTRATION, form.token.as_deref().unwrap_or(""));
        let registration = self
            .db
            .registration(&token_hash)
            .await?
            .ok_or(ErrorCode::VerificationFailed)?;
        i18n::set_current(registration.language);
        let attempt = self.limits.attempt_from(client, &registration.email).await?;
        self.claim_code_check(&registration.email, REGISTRATION).await?;
        self.check_code(
            &registration.code_hash,
            registration.attempts,
            registration.expires_at,
            &code,
            || self.db.registration_failed_attempt(&token_hash),
        )
        .await?;
        self.limits.succeeded(attempt).await;
        let id = uuid::Uuid::now_v7().to_string();
        let new_user = NewUser {
            id: &id,
            name: &registration.name,
            email: &registration.email,
            password_hash: &registration.password_hash,
            language: registration.language,
            now: self.now(),
        };
        self.db
            .create_user_from_registration(&new_user, &token_hash)
            .await
            .on_unique_violation(ErrorCode::EmailTaken)?;
        let user = self
            .db
            .user_by_id(&id)
            .await?
            .ok_or_else(|| anyhow::anyhow!("new user vanished"))?;
        let session = self.session(&id, user.token_version, self.settings.auth.remember_days)?;
        Ok((user, session))
    }
}
