//! The websocket wire protocol: JSON text frames with a `type` field (docs/protocol.md).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::states::{FileKind, FileStatus, FinishReason, MessageRole, MessageStatus};
use crate::views::{BillingInfo, LimitInfo, Settings, Subscription, Usage, User};

/// Frames a tab sends.
#[derive(Debug, Clone, Deserialize, TS)]
#[serde(tag = "type")]
pub enum ClientFrame {
    /// Authenticates a socket opened without a token (must be the first frame).
    #[serde(rename = "auth")]
    Auth { token: String },
    #[serde(rename = "chat.send")]
    ChatSend(ChatSend),
    /// A new answer to the question of `messageId` (an answer), beside it.
    #[serde(rename = "chat.regenerate")]
    ChatRegenerate(ChatRegenerate),
    #[serde(rename = "chat.cancel", rename_all = "camelCase")]
    ChatCancel { conversation_id: String },
    /// Shows the branch through `messageId`: the conversation's current message becomes
    /// the newest message below it (every tab learns it from `conversation.updated`).
    #[serde(rename = "conversation.select", rename_all = "camelCase")]
    ConversationSelect {
        conversation_id: String,
        message_id: String,
    },
    /// The tab shows this conversation: if an answer is streaming, send its text so far.
    #[serde(rename = "conversation.open", rename_all = "camelCase")]
    ConversationOpen { conversation_id: String },
    #[serde(rename = "ping")]
    Ping,
}

/// The longest `clientId` a tab may send: it is stored on both messages and echoed to
/// every tab, so it must stay small.
pub const MAX_CLIENT_ID_CHARS: usize = 64;

#[derive(Debug, Clone, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ChatSend {
    /// The tab's own id for this send, echoed so it can match the answers.
    pub client_id: String,
    /// `None` starts a new conversation.
    pub conversation_id: Option<String>,
    pub content: String,
    pub model: Option<String>,
    #[serde(default)]
    pub web_search: bool,
    /// Several rounds of searching and reading, ending in a cited report (implies
    /// `web_search`).
    #[serde(default)]
    pub deep_search: bool,
    /// Answer with an image made from the message (plans with `imageGeneration`).
    #[serde(default)]
    pub image_generation: bool,
    /// The project a new conversation starts in (plans with `projectManagement`);
    /// ignored for an existing conversation, which stays where it is.
    #[serde(default)]
    pub project_id: Option<String>,
    /// Ids of files the user uploaded (`POST /api/files`) and has not sent yet.
    #[serde(default)]
    pub attachments: Vec<String>,
    /// A question of the conversation this one replaces: the new question becomes its
    /// sibling (same parent), a new version.
    #[serde(default)]
    pub edit_of: Option<String>,
}

/// `chat.regenerate`: a new version of an answer, made for the same question with its
/// attachments and options (web search, deep search, image generation).
#[derive(Debug, Clone, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ChatRegenerate {
    pub client_id: String,
    pub conversation_id: String,
    /// The answer to make again.
    pub message_id: String,
    /// Another of the plan's models; the answer's own model when left out.
    pub model: Option<String>,
}

/// What the user thought of an answer.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, TS)]
#[serde(rename_all = "lowercase")]
pub enum Rating {
    Up,
    Down,
}

/// An answer's rating, and what the user wrote about it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, TS)]
#[serde(rename_all = "camelCase")]
pub struct Feedback {
    pub rating: Rating,
    pub comment: Option<String>,
}

/// A file attached to a message, as frames and the REST API show it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, TS)]
#[serde(rename_all = "camelCase")]
pub struct Attachment {
    #[serde(rename = "_id")]
    pub id: String,
    pub kind: FileKind,
    pub name: String,
    pub mime: String,
    /// Bytes stored.
    #[ts(type = "number")]
    pub size: u64,
    pub width: Option<u32>,
    pub height: Option<u32>,
    pub url: String,
    pub thumbnail_url: Option<String>,
    pub created_at: String,
    /// `ready`; a document is `processing` first, then `ready` or `failed`.
    pub status: FileStatus,
    /// Percent of a document's processing done (100 once ready).
    pub progress: u8,
    /// A PDF's page count.
    pub pages: Option<u32>,
}

/// Where an answer's excerpts came from. Web sources come first, in the order the answer
/// cites them (`[1]` is the first).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, TS)]
#[serde(untagged)]
pub enum Source {
    Web(WebSource),
    Document(DocumentSource),
}

/// A document, and the page for a PDF.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, TS)]
#[serde(rename_all = "camelCase")]
pub struct DocumentSource {
    pub file_id: String,
    pub name: String,
    pub page: Option<u32>,
}

/// A web page a search found (`site`: its host).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, TS)]
#[serde(rename_all = "camelCase")]
pub struct WebSource {
    pub url: String,
    pub title: String,
    pub site: String,
}

/// How far a web search (or deep search) has got, for the tabs to show while it runs.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, TS)]
#[serde(rename_all = "lowercase")]
pub enum SearchStage {
    Searching,
    Reading,
    Reflecting,
    Writing,
}

/// A project as frames and the REST API show it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, TS)]
#[serde(rename_all = "camelCase")]
pub struct Project {
    #[serde(rename = "_id")]
    pub id: String,
    pub name: String,
    pub instructions: String,
    /// How many conversations it holds.
    #[ts(type = "number")]
    pub conversations: u64,
    pub created_at: String,
    pub updated_at: String,
}

/// A conversation as frames and the REST API show it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, TS)]
#[serde(rename_all = "camelCase")]
pub struct Conversation {
    #[serde(rename = "_id")]
    pub id: String,
    pub title: Option<String>,
    pub model: String,
    pub web_search: bool,
    pub created_at: String,
    pub updated_at: String,
    /// The project it is in, if any.
    pub project_id: Option<String>,
    /// The last message of the branch shown (`None` before its first message).
    pub current_message_id: Option<String>,
    /// Listed before the others.
    pub pinned: bool,
    /// Left out of the list unless `?archived=true` asks for the archived ones.
    pub archived: bool,
}

/// A message as frames and the REST API show it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, TS)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    #[serde(rename = "_id")]
    pub id: String,
    pub conversation_id: String,
    pub role: MessageRole,
    pub content: String,
    pub status: MessageStatus,
    pub model: Option<String>,
    pub client_id: Option<String>,
    pub created_at: String,
    /// The files sent with a user message (none on answers).
    #[serde(default)]
    pub attachments: Vec<Attachment>,
    /// The document excerpts an answer was given, best first (none on questions).
    #[serde(default)]
    pub sources: Vec<Source>,
    /// The message it follows: `None` for a conversation's first question. Messages with
    /// the same parent are versions of one another.
    pub parent_id: Option<String>,
    /// The user's rating of an answer, if any.
    pub feedback: Option<Feedback>,
}

/// Frames the server sends. The views are boxed: a frame is as small as its smallest
/// variants, mostly deltas.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(tag = "type")]
pub enum ServerFrame {
    #[serde(rename = "ready")]
    Ready { user: Box<User>, usage: Box<Usage> },
    #[serde(rename = "conversation.created", rename_all = "camelCase")]
    ConversationCreated {
        client_id: String,
        conversation: Conversation,
    },
    #[serde(rename = "message.created", rename_all = "camelCase")]
    MessageCreated {
        conversation_id: String,
        client_id: Option<String>,
        message: Message,
    },
    #[serde(rename = "message.delta", rename_all = "camelCase")]
    MessageDelta {
        conversation_id: String,
        message_id: String,
        #[ts(type = "number")]
        seq: u64,
        delta: String,
        /// Load tests only (`chat.frame_timestamps`): when the model emitted this delta's
        /// first chunk, in microseconds since the Unix epoch.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[ts(type = "number", optional)]
        emitted_at: Option<u64>,
    },
    /// Answers `conversation.open`: whether an answer is streaming (its snapshot, if so,
    /// came just before).
    #[serde(rename = "conversation.opened", rename_all = "camelCase")]
    ConversationOpened {
        conversation_id: String,
        streaming: bool,
    },
    #[serde(rename = "message.snapshot", rename_all = "camelCase")]
    MessageSnapshot {
        conversation_id: String,
        message_id: String,
        #[ts(type = "number")]
        seq: u64,
        content: String,
    },
    #[serde(rename = "message.completed", rename_all = "camelCase")]
    MessageCompleted {
        conversation_id: String,
        message: Message,
        finish_reason: FinishReason,
    },
    #[serde(rename = "conversation.updated")]
    ConversationUpdated { conversation: Conversation },
    /// An answer's feedback changed (`None`: taken back).
    #[serde(rename = "message.feedback", rename_all = "camelCase")]
    MessageFeedback {
        conversation_id: String,
        message_id: String,
        feedback: Option<Feedback>,
    },
    #[serde(rename = "conversation.deleted", rename_all = "camelCase")]
    ConversationDeleted { conversation_id: String },
    #[serde(rename = "usage.updated", rename_all = "camelCase")]
    UsageUpdated {
        has_active_limit: bool,
        limit_info: Box<LimitInfo>,
    },
    #[serde(rename = "profile.updated")]
    ProfileUpdated { user: Box<User> },
    #[serde(rename = "settings.updated", rename_all = "camelCase")]
    SettingsUpdated {
        settings: Box<Settings>,
        billing_info: Option<Box<BillingInfo>>,
    },
    #[serde(rename = "subscription.updated")]
    SubscriptionUpdated { subscription: Box<Subscription> },
    #[serde(rename = "session.revoked")]
    SessionRevoked { reason: String },
    /// A document's processing went on or ended.
    #[serde(rename = "file.updated")]
    FileUpdated { file: Attachment },
    /// A project was created or changed (name, instructions, conversation count).
    #[serde(rename = "project.updated")]
    ProjectUpdated { project: Project },
    /// A project was deleted; its conversations left it or were deleted (each announced).
    #[serde(rename = "project.deleted", rename_all = "camelCase")]
    ProjectDeleted { project_id: String },
    /// A step of a web search that prepares an answer (never stored, not replayed).
    #[serde(rename = "search.progress", rename_all = "camelCase")]
    SearchProgress {
        conversation_id: String,
        message_id: String,
        stage: SearchStage,
        #[serde(skip_serializing_if = "Vec::is_empty", default)]
        #[ts(as = "Option<Vec<String>>", optional)]
        queries: Vec<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        pages: Option<u32>,
        round: u32,
        rounds: u32,
        deep: bool,
    },
    #[serde(rename = "error", rename_all = "camelCase")]
    Error {
        #[serde(skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        client_id: Option<String>,
        code: String,
        message: String,
        /// The field or period an error is about (`day` or `month` for `limit_reached`).
        #[serde(skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        field: Option<String>,
    },
    #[serde(rename = "pong")]
    Pong,
}

impl ServerFrame {
    pub fn to_text(&self) -> String {
        serde_json::to_string(self).expect("frames serialize")
    }
}

/// The text so far of a running answer: what a tab that opens its conversation
/// mid-stream is sent (`message.snapshot`), and what instances tell one another of the
/// answers they run. Not a frame itself: the server and the realtime engine both hold it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    pub conversation_id: String,
    pub message_id: String,
    /// The deltas its text holds.
    pub seq: u64,
    pub content: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_frames_parse_by_type() {
        let f: ClientFrame = serde_json::from_str(
            r#"{"type":"chat.send","clientId":"c1","conversationId":null,"content":"hi","webSearch":true}"#,
        )
        .unwrap();
        match f {
            ClientFrame::ChatSend(s) => {
                assert_eq!(
                    (s.client_id.as_str(), s.conversation_id, s.web_search),
                    ("c1", None, true)
                );
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            serde_json::from_str(r#"{"type":"ping"}"#).unwrap(),
            ClientFrame::Ping
        ));
        assert!(serde_json::from_str::<ClientFrame>(r#"{"type":"nope"}"#).is_err());
    }

    #[test]
    fn server_frames_carry_their_type() {
        let text = ServerFrame::MessageDelta {
            conversation_id: "c".into(),
            message_id: "m".into(),
            seq: 3,
            delta: "hi".into(),
            emitted_at: None,
        }
        .to_text();
        assert_eq!(
            text,
            r#"{"type":"message.delta","conversationId":"c","messageId":"m","seq":3,"delta":"hi"}"#
        );
        assert_eq!(ServerFrame::Pong.to_text(), r#"{"type":"pong"}"#);
    }
}
