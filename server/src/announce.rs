//! Telling every tab of a user that something of theirs changed: one method per
//! `*.updated` frame, each reading the thing as it now is and building its view in
//! [`crate::views`]. Every instance's tabs hear it (`Realtime::publish`).

use std::collections::HashMap;
use std::sync::Arc;

use chat_actors::quota::Used;
use chat_contract::frames::{Conversation, ServerFrame};
use chat_contract::states::Service;
use chat_contract::views::Usage;

use crate::clock::SharedClock;
use crate::db::projects::ProjectRow;
use crate::db::users::UserRow;
use crate::db::Db;
use crate::error::{ErrorCode, Result};
use crate::plans::PlanType;
use crate::quota::Quotas;
use crate::realtime::Realtime;
use crate::views::{self, PlanViews};

/// What the announcements read (the stored things, the counters, how plans are shown)
/// and where they go.
pub struct Announcer {
    pub db: Db,
    pub clock: SharedClock,
    pub quotas: Quotas,
    pub realtime: Arc<Realtime>,
    pub plans: Arc<PlanViews>,
}

impl Announcer {
    /// `usage.updated`: the user's counters (after a refund or a plan change).
    pub async fn usage(&self, user_id: &str) {
        match self.quotas.usage(user_id).await {
            Ok(usage) => self.realtime.publish(user_id, &usage_frame(usage)),
            Err(e) => {
                tracing::warn!(error = %format!("{:#}", anyhow::Error::from(e)), "reading usage for usage.updated")
            }
        }
    }

    /// `usage.updated` with the counters a quota check just returned (no second read).
    pub fn counted_usage_frame(&self, plan: PlanType, usage: &HashMap<Service, Used>) -> ServerFrame {
        usage_frame(self.quotas.usage_of(plan, usage))
    }

    /// `subscription.updated`, then the counters of its plan.
    pub async fn subscription(&self, user_id: &str) {
        match self.db.subscription(user_id, self.clock.now_ms()).await {
            Ok(sub) => {
                let subscription = Box::new(self.plans.subscription(&sub));
                let frame = ServerFrame::SubscriptionUpdated { subscription };
                self.realtime.publish(user_id, &frame);
                self.usage(user_id).await;
            }
            Err(e) => tracing::warn!(error = ?e, "reading a subscription for subscription.updated"),
        }
    }

    /// `settings.updated`: the settings and billing info.
    pub async fn settings(&self, user: &UserRow) -> Result<()> {
        let billing = self.db.billing_info(&user.id).await?;
        let frame = ServerFrame::SettingsUpdated {
            settings: Box::new(views::settings(user)),
            billing_info: billing.as_ref().map(|b| Box::new(views::billing_info(b))),
        };
        self.realtime.publish(&user.id, &frame);
        Ok(())
    }

    /// `settings.updated` after billing changed the billing info on its own (a new VIES
    /// check): nobody waits for it, so what fails is only logged.
    pub async fn billing_info(&self, user_id: &str) {
        match self.db.user_by_id(user_id).await {
            Ok(Some(user)) => {
                if let Err(e) = self.settings(&user).await {
                    tracing::warn!(error = ?e, "announcing a new VIES check");
                }
            }
            Ok(None) => {}
            Err(e) => tracing::warn!(error = ?e, "reading a user to announce a new VIES check"),
        }
    }

    /// `profile.updated`: the user as the profile call shows them.
    pub fn profile(&self, user: &UserRow) {
        let frame = ServerFrame::ProfileUpdated {
            user: Box::new(views::user(user)),
        };
        self.realtime.publish(&user.id, &frame);
    }

    /// `conversation.updated`; `None` when the conversation is gone (or not the user's).
    pub async fn conversation(&self, user_id: &str, id: &str) -> sqlx::Result<Option<Conversation>> {
        let Some(conversation) = self.db.conversation(user_id, id).await? else {
            return Ok(None);
        };
        let view = views::conversation_view(&conversation);
        self.realtime.publish(
            user_id,
            &ServerFrame::ConversationUpdated {
                conversation: view.clone(),
            },
        );
        Ok(Some(view))
    }

    /// `project.updated`; `not_found` when the project is gone (or not the user's).
    pub async fn project(&self, user_id: &str, id: &str) -> Result<ProjectRow> {
        let project = self.db.project(user_id, id).await?.ok_or(ErrorCode::NotFound)?;
        self.realtime.publish(
            user_id,
            &ServerFrame::ProjectUpdated {
                project: views::project_view(&project),
            },
        );
        Ok(project)
    }
}

fn usage_frame(usage: Usage) -> ServerFrame {
    ServerFrame::UsageUpdated {
        has_active_limit: usage.has_active_limit,
        limit_info: Box::new(usage.limit_info),
    }
}
