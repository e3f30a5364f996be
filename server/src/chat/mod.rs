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
//!   feedback on answers;
//! - here: the [`Chat`] service, stopping an answer wherever it runs, and a conversation
//!   renamed, pinned, archived or deleted.

pub mod answer;
pub mod cache;
pub mod checked;
pub mod context;
pub mod orphans;
pub mod prompt;
pub mod reservation;
pub mod send;
pub mod tree;

use std::sync::Arc;

use chat_actors::hub::Event;
use chat_contract::frames::Conversation;
use chat_contract::frames::ServerFrame;
use chat_contract::limits::MAX_TITLE_CHARS;
use serde::Deserialize;

use crate::accounts::jwt::Tokens;
use crate::announce::Announcer;
use crate::clock::SharedClock;
use crate::config::Settings;
use crate::db::conversations::ConversationChange;
use crate::db::Db;
use crate::error::{ApiError, ErrorCode, Result};
use crate::files::Files;
use crate::imagegen::ImageGen;
use crate::metering::Meter;
use crate::plans::Catalogue;
use crate::quota::Quotas;
use crate::realtime::Realtime;
use crate::search::WebSearch;

/// The chat service: what sends, answers and conversations need. Shared as an `Arc`: an
/// answer holds it until it is settled.
pub struct Chat {
    pub db: Db,
    pub clock: SharedClock,
    /// The tabs, the generations, the model, and the relay between instances.
    pub realtime: Arc<Realtime>,
    pub quotas: Quotas,
    pub catalogue: Arc<Catalogue>,
    /// The models' context windows (`config/models.toml`).
    pub context_sizes: Arc<context::ContextSizes>,
    /// Records what each model call used and cost.
    pub meter: Meter,
    /// Checks the token a tab sent with, on every send.
    pub tokens: Arc<Tokens>,
    /// `[chat]`, `[model]` and `[search]` are read.
    pub settings: Arc<Settings>,
    pub search: Arc<WebSearch>,
    /// Uploads, the images a prompt carries, and (`files.documents`) documents' excerpts.
    pub files: Arc<Files>,
    pub imagegen: ImageGen,
    pub announce: Arc<Announcer>,
}

impl Chat {
    pub fn now(&self) -> i64 {
        self.clock.now_ms()
    }
}

/// Stops a conversation's answer wherever it runs.
pub fn cancel_everywhere(chat: &Chat, user_id: &str, conversation_id: &str) {
    let stopped_here = chat.realtime.generations.cancel(conversation_id);
    if !stopped_here && chat.realtime.relay.is_some() {
        let event = Event::Cancel {
            conversation_id: conversation_id.to_owned(),
        };
        chat.realtime.hubs.publish(user_id, event);
    }
}

/// A rename, a pin or unpin, an archive or unarchive: each optional, at least one.
#[derive(Deserialize)]
pub struct ConversationEdit {
    title: Option<String>,
    pinned: Option<bool>,
    archived: Option<bool>,
}

/// Applies `edit` to the user's conversation and tells every tab; the conversation as it
/// is now. `not_found` when it is not the user's.
pub async fn edit_conversation(
    chat: &Chat,
    user_id: &str,
    id: &str,
    edit: ConversationEdit,
) -> Result<Conversation> {
    if edit.title.is_none() && edit.pinned.is_none() && edit.archived.is_none() {
        return Err(ApiError::field(ErrorCode::FieldRequired, "title|pinned|archived"));
    }
    let change = ConversationChange {
        title: edit
            .title
            .as_deref()
            .map(|t| crate::domain::one_line(Some(t), "title", MAX_TITLE_CHARS as usize))
            .transpose()?,
        pinned: edit.pinned,
        archived: edit.archived,
    };
    if !chat
        .db
        .update_conversation(user_id, id, &change, chat.now())
        .await?
    {
        return Err(ErrorCode::NotFound.into());
    }
    let view = chat.announce.conversation(user_id, id).await?;
    Ok(view.ok_or(ErrorCode::NotFound)?)
}

/// Deletes the user's conversation: its running answer stops first (wherever it runs, so
/// it does not write into a deleted conversation), its attachments go from the store
/// now rather than at the next sweep, and every tab is told. `false` when it is not the
/// user's.
pub async fn delete_conversation(chat: &Chat, user_id: &str, id: &str) -> anyhow::Result<bool> {
    let Some(conversation) = chat.db.conversation(user_id, id).await? else {
        return Ok(false);
    };
    cancel_everywhere(chat, user_id, id);
    if !chat.db.delete_conversation(user_id, id).await? {
        return Ok(false);
    }
    chat.files.store.sweep_soon();
    chat.realtime.publish(
        user_id,
        &ServerFrame::ConversationDeleted {
            conversation_id: id.to_owned(),
        },
    );
    // Its project holds one conversation fewer (a project deleted meanwhile says nothing).
    if let Some(project) = &conversation.project_id {
        let _ = chat.announce.project(user_id, project).await;
    }
    Ok(true)
}
