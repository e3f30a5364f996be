//! The small types the actors of this crate hand one another, at the bottom of it: the
//! hub, the tabs, the sessions and the generations all import these, and this file
//! imports none of them, so no two of them need to import each other.
//!
//! - [`Deliver`]: a frame on its way to a user's tabs;
//! - [`SessionConfig`]: a session's limits and periods, which its tab keeps too.

use std::sync::Arc;
use std::time::Duration;

use actix::Message;
use bytestring::ByteString;
use chat_contract::frames::ServerFrame;

/// A frame on its way to a user's tabs, serialized once for all of them.
#[derive(Message, Clone, Debug)]
#[rtype(result = "()")]
pub struct Deliver {
    pub text: ByteString,
    /// Set on `message.delta`, so a tab catching up from a snapshot can drop what the
    /// snapshot already holds.
    pub delta: Option<DeltaMeta>,
    /// Close the session after this frame (`session.revoked`).
    pub close: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeltaMeta {
    pub conversation_id: Arc<str>,
    pub message_id: Arc<str>,
    pub seq: u64,
    /// The delta's text, which another instance appends to its copy of the answer.
    pub text: Arc<str>,
}

impl Deliver {
    pub fn frame(frame: &ServerFrame) -> Deliver {
        let delta = match frame {
            ServerFrame::MessageDelta {
                conversation_id,
                message_id,
                seq,
                delta,
                ..
            } => Some(DeltaMeta {
                conversation_id: conversation_id.as_str().into(),
                message_id: message_id.as_str().into(),
                seq: *seq,
                text: delta.as_str().into(),
            }),
            _ => None,
        };
        let close = matches!(frame, ServerFrame::SessionRevoked { .. });
        Deliver {
            text: frame.to_text().into(),
            delta,
            close,
        }
    }
}

/// A session's limits and periods: the session reads the auth timeout, the frame rate
/// and the requests in flight; its tab the rest (the hub's sweep of it, its queue).
#[derive(Debug, Clone)]
pub struct SessionConfig {
    pub heartbeat: Duration,
    pub idle_timeout: Duration,
    pub auth_timeout: Duration,
    /// Frames that may wait for a slow tab before it is closed.
    pub queue: usize,
    /// How long one write may wait for a tab that does not read before it is closed.
    pub write_timeout: Duration,
    /// Frames a tab may send in one second.
    pub max_frames_per_sec: u32,
    /// `chat.send`, `chat.cancel` and `conversation.open` being handled at once.
    pub max_in_flight: usize,
    /// How often the token of an open socket is checked again.
    pub token_recheck: Duration,
}
