//! The users and plans the chat checks every send against, kept in memory so a send
//! does not read them each time. An entry is dropped by the events that change it
//! (`profile.updated`, `settings.updated`, `subscription.updated`, `session.revoked`),
//! whichever instance they come from, and read again at most `ttl` after it was loaded
//! (so a change whose event was lost, or one made by the operator CLI, still lands).
//! The token itself is not cached: each send checks its version in the database.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chat_contract::frames::ServerFrame;

use crate::clock::Clock;
use crate::db::users::UserRow;
use crate::db::Db;
use crate::error::Result;
use crate::plans::PlanType;

/// A user as the chat needs them.
#[derive(Debug)]
pub struct Account {
    pub user: UserRow,
    pub plan: PlanType,
}

pub struct Accounts {
    ttl: Duration,
    entries: Mutex<HashMap<String, (Arc<Account>, Instant)>>,
    /// Counts every `forget`: a load that a change overtook is not kept.
    changes: AtomicU64,
}

/// The frame types that change what an [`Account`] holds.
const CHANGING: [&str; 4] = [
    "profile.updated",
    "settings.updated",
    "subscription.updated",
    "session.revoked",
];

impl Accounts {
    pub fn new(ttl: Duration) -> Self {
        Accounts {
            ttl,
            entries: Mutex::new(HashMap::new()),
            changes: AtomicU64::new(0),
        }
    }

    pub fn changes_account(frame: &ServerFrame) -> bool {
        matches!(
            frame,
            ServerFrame::ProfileUpdated { .. }
                | ServerFrame::SettingsUpdated { .. }
                | ServerFrame::SubscriptionUpdated { .. }
                | ServerFrame::SessionRevoked { .. }
        )
    }

    /// The same for a frame already serialized (from another instance): frames begin
    /// with their type.
    pub fn changes_account_text(text: &str) -> bool {
        CHANGING.iter().any(|t| {
            text.strip_prefix(r#"{"type":""#)
                .is_some_and(|rest| rest.starts_with(t))
        })
    }

    pub fn forget(&self, user_id: &str) {
        self.changes.fetch_add(1, Ordering::SeqCst);
        self.entries.lock().expect("accounts lock").remove(user_id);
    }

    /// The user and plan, from memory or `db` (the plan as of `clock`'s time once the user
    /// is read); `None` for a deleted user.
    pub async fn get(&self, db: &Db, clock: &dyn Clock, user_id: &str) -> Result<Option<Arc<Account>>> {
        if let Some((account, loaded)) = self.entries.lock().expect("accounts lock").get(user_id) {
            if loaded.elapsed() < self.ttl {
                return Ok(Some(account.clone()));
            }
        }
        let before = self.changes.load(Ordering::SeqCst);
        let Some(user) = db.user_by_id(user_id).await? else {
            return Ok(None);
        };
        let subscription = db.subscription(user_id, clock.now_ms()).await?;
        let account = Arc::new(Account {
            user,
            plan: subscription.plan_type,
        });
        if self.changes.load(Ordering::SeqCst) == before {
            let mut entries = self.entries.lock().expect("accounts lock");
            // Drop what expired now and then (amortised over the loads).
            if entries.len() >= 1024 && entries.len().is_power_of_two() {
                let ttl = self.ttl;
                entries.retain(|_, (_, loaded)| loaded.elapsed() < ttl);
            }
            entries.insert(user_id.to_owned(), (account.clone(), Instant::now()));
        }
        Ok(Some(account))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_that_change_a_user_are_told_apart_from_the_rest() {
        let revoked = ServerFrame::SessionRevoked { reason: "x".into() };
        assert!(Accounts::changes_account(&revoked));
        assert!(Accounts::changes_account_text(&revoked.to_text()));
        assert!(!Accounts::changes_account(&ServerFrame::Pong));
        assert!(!Accounts::changes_account_text(&ServerFrame::Pong.to_text()));
        let delta = r#"{"type":"message.delta","conversationId":"c","delta":"\"type\":\"profile.updated\""}"#;
        assert!(!Accounts::changes_account_text(delta));
    }
}
