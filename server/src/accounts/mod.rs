//! Accounts: registration with an e-mailed code, login, password reset, the profile and
//! its image, password changes (SPEC §4, §5, §7), and what a token proves. `http/auth.rs`
//! reads the requests and writes the answers; every rule is here.
//!
//! - [`registration`]: send, resend and verify the registration code;
//! - [`login`]: e-mail and password for a token, and a token for its user;
//! - [`reset`]: the forgotten-password flow;
//! - [`profile`]: name, image, password change;
//! - [`settings`]: the language and AI personalisation;
//! - [`suspension`]: an admin suspends an account, or lifts it;
//! - [`code_checks`]: how many code guesses an account and a token get;
//! - [`codes`], [`jwt`], [`password`]: the secrets (code digests, tokens, password hashes).

pub mod code_checks;
pub mod codes;
pub mod jwt;
pub mod login;
pub mod password;
pub mod profile;
pub mod registration;
pub mod reset;
pub mod settings;
pub mod suspension;

use std::sync::Arc;

use chat_contract::frames::ServerFrame;

use crate::clock::SharedClock;
use crate::config::Settings;
use crate::db::Db;
use crate::images::ImageDecoder;
use crate::mail::Mailer;
use crate::rate_limit::RateLimits;
use crate::realtime::Realtime;
use codes::CodeKey;
use jwt::Tokens;
use password::PasswordHasher;

/// The accounts service: what the account rules need, and nothing else.
#[derive(Clone)]
pub struct Accounts {
    pub db: Db,
    pub clock: SharedClock,
    pub tokens: Arc<Tokens>,
    pub codes: CodeKey,
    pub hasher: PasswordHasher,
    pub mailer: Mailer,
    pub limits: Arc<RateLimits>,
    pub images: ImageDecoder,
    /// To end a user's open tabs when their tokens stop working.
    pub realtime: Arc<Realtime>,
    pub settings: Arc<Settings>,
}

/// A token and how long it lives, for the answer and the `token` cookie.
pub struct Session {
    pub token: String,
    pub days: i64,
    pub now: i64,
}

impl Accounts {
    fn now(&self) -> i64 {
        self.clock.now_ms()
    }

    /// A new token for the user, living `days`.
    fn session(&self, user_id: &str, token_version: i64, days: i64) -> crate::error::Result<Session> {
        let now = self.now();
        let token = self.tokens.issue(user_id, token_version, now, days)?;
        Ok(Session { token, days, now })
    }

    /// Ends every open tab of the user (their tokens no longer work).
    pub fn revoke_sessions(&self, user_id: &str, reason: &str) {
        self.realtime.publish(
            user_id,
            &ServerFrame::SessionRevoked {
                reason: reason.to_owned(),
            },
        );
    }
}
