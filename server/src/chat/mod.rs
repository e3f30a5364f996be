//! The chat's rules, apart from how they reach a tab (that wiring is `crate::realtime`):
//!
//! - [`send`]: what a `chat.send` must pass, giving a [`checked::Checked`] send, and the
//!   [`reservation::Reservation`] it holds (an answer slot, the conversation's claim, the
//!   units counted) until its answer ends;
//! - [`answer`]: storing the exchange, streaming the answer, and what happens at its end;
//! - [`prompt`]: what the model is asked, and [`context`]: how much of it fits the model;
//! - [`cache`]: the users and plans of the users with tabs here;
//! - [`orphans`]: answers whose instance died, ended by another;
//! - [`tree`]: the branch a conversation shows (edits and regenerates are sends), and
//!   feedback on answers.

pub mod answer;
pub mod cache;
pub mod checked;
pub mod context;
pub mod orphans;
pub mod prompt;
pub mod reservation;
pub mod send;
pub mod tree;

use chat_actors::hub::Event;
use chat_contract::frames::ServerFrame;

use crate::state::AppState;

/// Stops a conversation's answer wherever it runs.
pub fn cancel_everywhere(state: &AppState, user_id: &str, conversation_id: &str) {
    let stopped_here = state.realtime.generations.cancel(conversation_id);
    if !stopped_here && state.realtime.relay.is_some() {
        let event = Event::Cancel {
            conversation_id: conversation_id.to_owned(),
        };
        state.realtime.hubs.publish(user_id, event);
    }
}

/// Deletes the user's conversation: its running answer stops first (wherever it runs, so
/// it does not write into a deleted conversation), its attachments go from the store
/// now rather than at the next sweep, and every tab is told. `false` when it is not the
/// user's.
pub async fn delete_conversation(state: &AppState, user_id: &str, id: &str) -> anyhow::Result<bool> {
    let Some(conversation) = state.db.conversation(user_id, id).await? else {
        return Ok(false);
    };
    cancel_everywhere(state, user_id, id);
    if !state.db.delete_conversation(user_id, id).await? {
        return Ok(false);
    }
    state.files.sweep_soon();
    state.realtime.publish(
        user_id,
        &ServerFrame::ConversationDeleted {
            conversation_id: id.to_owned(),
        },
    );
    // Its project holds one conversation fewer (a project deleted meanwhile says nothing).
    if let Some(project) = &conversation.project_id {
        let _ = crate::announce::project(state, user_id, project).await;
    }
    Ok(true)
}
