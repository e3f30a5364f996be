//! What a send is once it passed its checks: the input of [`super::answer`] and of the
//! reservation, kept apart from [`super::send`] so that the answer does not import the
//! checks that start it.

use std::sync::Arc;

use chat_contract::frames::ChatSend;

use crate::chat::cache::Account;
use crate::db::conversations::{ConversationRow, MessageRow};
use crate::db::files::FileRow;
use crate::db::projects::ProjectRow;
use crate::search::Engine;

/// A send that passed every rule, before anything is counted or stored.
pub struct Checked {
    pub account: Arc<Account>,
    pub content: String,
    pub model: String,
    pub model_used: String,
    pub existing: Option<ConversationRow>,
    /// The files sent with the message, in the order the send named them.
    pub files: Vec<FileRow>,
    /// How the web is searched for this answer, if it is.
    pub engine: Option<Engine>,
    /// The answer is an image made from the message.
    pub image_generation: bool,
    /// The project the conversation is (or starts) in: its instructions are followed.
    pub project: Option<ProjectRow>,
    /// Where the question goes in the conversation's tree.
    pub place: Place,
}

/// Where a send's question goes in the conversation's tree.
pub enum Place {
    /// A new question after this message (`None`: the conversation's first question). A
    /// plain send follows the conversation's current message; an edit, the parent of the
    /// question it replaces.
    After(Option<String>),
    /// The stored question, answered again (`chat.regenerate`).
    Again(Box<MessageRow>),
}

/// A question's send options, stored with it so that a regenerate replays them.
pub fn mode_of(send: &ChatSend) -> Option<&'static str> {
    if send.image_generation {
        Some("image_generation")
    } else if send.deep_search {
        Some("deep_search")
    } else if send.web_search {
        Some("web_search")
    } else {
        None
    }
}

impl Checked {
    /// The web searches this send reserves: one for a web search, the configured number
    /// for a deep search (`deep_searches`, the most it may make).
    pub fn searches(&self, deep_searches: u32, deep: bool) -> u32 {
        match (&self.engine, deep) {
            (None, _) => 0,
            (Some(_), true) => deep_searches.max(1),
            (Some(_), false) => 1,
        }
    }
}
