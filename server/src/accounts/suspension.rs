//! An admin suspends an account, or lifts the suspension (issue 34). While suspended:
//!
//! - no call works: every token of the user answers 403 `account_suspended`
//!   ([`Accounts::authenticate`], which every route and the websocket go through), and
//!   the open tabs on every instance are told `session.revoked` and close;
//! - login with the right password answers `account_suspended` (a wrong one still
//!   `invalid_credentials`: the suspension is not told to whoever lacks the password);
//!   a password reset may go through, but does not let the user in;
//! - the plan stops renewing (`billing::suspension`).
//!
//! A suspension also ends the user's tokens for good (their version is bumped): once it
//! is lifted the user signs in again, and a token copied off a device while the account
//! was suspended (often for a compromise) does not come back to life. docs/security.md.

use std::collections::BTreeMap;

use chat_contract::states::AuditAction;
use serde::Deserialize;

use super::Accounts;
use crate::billing::Billing;
use crate::db::audit::{Actor, AuditRecord};
use crate::db::users::{SuspensionChange, UserRow};
use crate::domain::admin_reason;
use crate::error::{ErrorCode, Result};

/// The body of `PUT /api/admin/users/{id}/suspension`.
#[derive(Deserialize)]
pub struct SuspensionForm {
    /// Not a boolean: the JSON body is refused (`validation_error`) before this.
    suspended: Option<bool>,
    reason: Option<String>,
}

impl Accounts {
    /// Suspends `user_id` (or lifts it) as `admin` asks, and answers the user as they are
    /// now. Asking for the state the user is already in changes nothing and logs nothing.
    pub async fn set_suspension(
        &self,
        billing: &Billing,
        admin: &Actor,
        user_id: &str,
        form: &SuspensionForm,
    ) -> Result<UserRow> {
        let suspend = form.suspended.ok_or(ErrorCode::ValidationError)?;
        let reason = admin_reason(form.reason.as_deref())?;
        let user = self.db.user_by_id(user_id).await?.ok_or(ErrorCode::NotFound)?;
        // An admin who suspended themselves could not lift it: no call would work.
        if suspend && admin.id() == Some(user.id.as_str()) {
            return Err(ErrorCode::CannotSuspendSelf.into());
        }
        if user.suspended_at.is_some() == suspend {
            return Ok(user);
        }
        // The provider first: if it cannot be reached, nothing changes.
        let renewal = if suspend {
            billing.stop_renewal_for_suspension(&user.id).await?
        } else {
            billing.resume_renewal_after_suspension(&user.id).await?
        };
        let flag = |on: bool| BTreeMap::from([("suspended".to_owned(), on.to_string())]);
        let record = AuditRecord {
            at: self.now(),
            actor: admin.clone(),
            action: if suspend {
                AuditAction::UserSuspended
            } else {
                AuditAction::UserUnsuspended
            },
            target_user_id: Some(user.id.clone()),
            target: user.email.clone(),
            reason,
            before: flag(!suspend),
            after: flag(suspend),
        };
        let change = SuspensionChange {
            user_id: &user.id,
            suspend,
            now: record.at,
            renewal,
            record: &record,
        };
        // `false`: another admin's same change came first; theirs is the one logged.
        if self.db.set_suspension(&change).await? {
            billing.announce_renewal_hold(&user.id, renewal).await;
            if suspend {
                self.revoke_sessions(&user.id, "account_suspended");
            }
        }
        Ok(self.db.user_by_id(&user.id).await?.ok_or(ErrorCode::NotFound)?)
    }
}
