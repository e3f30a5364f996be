//! `conversations.json` of an export (docs/export-format.md): written by the export,
//! read back by the import. Its own types, not the API's views, so the file format stays
//! put when the API changes. Reading is lenient where a hand-made file may leave a field
//! out; what is there must have the right type.

use chat_contract::frames::{Feedback, Source};
use serde::{Deserialize, Serialize};

use crate::db::conversations::{ConversationRow, MessageRow};
use crate::db::files::FileRow;
use crate::quota::iso;
use crate::views;

/// The `format` of our `conversations.json`, which tells it from ChatGPT's.
pub const FORMAT: &str = "chat-export";
/// Changes when the format does in a way an older reader would misread.
pub const VERSION: u32 = 1;

/// The file's fields before its conversations (which are streamed after them).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Header<'a> {
    pub format: &'a str,
    pub version: u32,
    pub exported_at: String,
}

/// The whole file, as the import reads it.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExportFile {
    pub format: String,
    pub version: u32,
    pub conversations: Vec<Conversation>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Conversation {
    #[serde(rename = "_id")]
    pub id: String,
    pub title: Option<String>,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub web_search: bool,
    #[serde(default)]
    pub project_id: Option<String>,
    #[serde(default)]
    pub pinned: bool,
    #[serde(default)]
    pub archived: bool,
    #[serde(default)]
    pub created_at: Option<String>,
    #[serde(default)]
    pub updated_at: Option<String>,
    /// The last message of the branch shown.
    #[serde(default)]
    pub current_message_id: Option<String>,
    /// Every message of every branch, oldest first. The export streams them after the
    /// other fields (see `export`), so they are left out when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<Message>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    #[serde(rename = "_id")]
    pub id: String,
    /// The message it follows; `null` for a first question. Messages with one parent are
    /// versions of each other (an edit, a regenerated answer).
    #[serde(default)]
    pub parent_id: Option<String>,
    /// `user` or `assistant`.
    pub role: String,
    pub content: String,
    /// `complete`, `cancelled` or `error` (`streaming` while an answer is written).
    #[serde(default)]
    pub status: Option<String>,
    #[serde(default)]
    pub finish_reason: Option<String>,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub created_at: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<Source>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback: Option<Feedback>,
    /// The files sent with a question; their bytes are under `files/` in the export.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<Attachment>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Attachment {
    #[serde(rename = "_id")]
    pub id: String,
    pub name: String,
    pub mime: String,
    /// Where its bytes are in the export.
    pub path: String,
}

/// A conversation's fields, without its messages.
pub fn conversation(c: &ConversationRow) -> Conversation {
    Conversation {
        id: c.id.clone(),
        title: c.title.clone(),
        model: Some(c.model.clone()),
        web_search: c.web_search,
        project_id: c.project_id.clone(),
        pinned: c.pinned,
        archived: c.archived,
        created_at: Some(iso(c.created_at)),
        updated_at: Some(iso(c.updated_at)),
        current_message_id: c.current_message_id.clone(),
        messages: Vec::new(),
    }
}

/// A message with the files sent in it (`files` may hold other messages' too).
pub fn message(m: &MessageRow, files: &[FileRow]) -> Message {
    let view = views::message_view(m);
    Message {
        id: m.id.clone(),
        parent_id: m.parent_id.clone(),
        role: m.role.as_str().to_owned(),
        content: m.content.clone(),
        status: Some(m.status.as_str().to_owned()),
        finish_reason: m.finish_reason.map(|f| f.as_str().to_owned()),
        model: m.model.clone(),
        created_at: Some(iso(m.created_at)),
        sources: view.sources,
        feedback: view.feedback,
        attachments: files
            .iter()
            .filter(|f| f.message_id.as_deref() == Some(m.id.as_str()))
            .map(|f| Attachment {
                id: f.id.clone(),
                name: f.name.clone(),
                mime: f.mime.clone(),
                path: super::file_path(f),
            })
            .collect(),
    }
}
