//! Telling every tab of a user that something of theirs changed: one function per
//! `*.updated` frame, each reading the thing as it now is and building its view in
//! [`crate::views`]. Every instance's tabs hear it (`Realtime::publish`).

use std::collections::HashMap;

use chat_actors::quota::Used;
use chat_contract::frames::{Conversation, ServerFrame};
use chat_contract::states::Service;
use chat_contract::views::Usage;

use crate::db::projects::ProjectRow;
use crate::db::users::UserRow;
use crate::error::{ErrorCode, Result};
use crate::plans::PlanType;
use crate::state::AppState;
use crate::views;

/// `usage.updated`: the user's counters (after a refund or a plan change).
pub async fn usage(state: &AppState, user_id: &str) {
    match state.quotas.usage(user_id).await {
        Ok(usage) => state.realtime.publish(user_id, &usage_frame(usage)),
        Err(e) => {
            tracing::warn!(error = %format!("{:#}", anyhow::Error::from(e)), "reading usage for usage.updated")
        }
    }
}

/// `usage.updated` with the counters a quota check just returned (no second read).
pub fn counted_usage_frame(state: &AppState, plan: PlanType, usage: &HashMap<Service, Used>) -> ServerFrame {
    usage_frame(state.quotas.usage_of(plan, usage))
}

fn usage_frame(usage: Usage) -> ServerFrame {
    ServerFrame::UsageUpdated {
        has_active_limit: usage.has_active_limit,
        limit_info: Box::new(usage.limit_info),
    }
}

/// `subscription.updated`, then the counters of its plan.
pub async fn subscription(state: &AppState, user_id: &str) {
    match state.db.subscription(user_id, state.now()).await {
        Ok(sub) => {
            let subscription = Box::new(state.subscription_view(&sub));
            let frame = ServerFrame::SubscriptionUpdated { subscription };
            state.realtime.publish(user_id, &frame);
            usage(state, user_id).await;
        }
        Err(e) => tracing::warn!(error = ?e, "reading a subscription for subscription.updated"),
    }
}

/// `settings.updated`: the settings and billing info.
pub async fn settings(state: &AppState, user: &UserRow) -> Result<()> {
    let billing = state.db.billing_info(&user.id).await?;
    let frame = ServerFrame::SettingsUpdated {
        settings: Box::new(views::settings(user)),
        billing_info: billing.as_ref().map(|b| Box::new(views::billing_info(b))),
    };
    state.realtime.publish(&user.id, &frame);
    Ok(())
}

/// `profile.updated`: the user as the profile call shows them.
pub fn profile(state: &AppState, user: &UserRow) {
    let frame = ServerFrame::ProfileUpdated {
        user: Box::new(views::user(user)),
    };
    state.realtime.publish(&user.id, &frame);
}

/// `conversation.updated`; `None` when the conversation is gone (or not the user's).
pub async fn conversation(state: &AppState, user_id: &str, id: &str) -> sqlx::Result<Option<Conversation>> {
    let Some(conversation) = state.db.conversation(user_id, id).await? else {
        return Ok(None);
    };
    let view = views::conversation_view(&conversation);
    state.realtime.publish(
        user_id,
        &ServerFrame::ConversationUpdated {
            conversation: view.clone(),
        },
    );
    Ok(Some(view))
}

/// `project.updated`; `not_found` when the project is gone (or not the user's).
pub async fn project(state: &AppState, user_id: &str, id: &str) -> Result<ProjectRow> {
    let project = state.db.project(user_id, id).await?.ok_or(ErrorCode::NotFound)?;
    state.realtime.publish(
        user_id,
        &ServerFrame::ProjectUpdated {
            project: views::project_view(&project),
        },
    );
    Ok(project)
}
