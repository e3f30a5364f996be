//! Conversations and messages as frames and the REST API show them.

use chat_actors::protocol;

use crate::db::conversations::{ConversationRow, MessageRow};
use crate::db::files::FileRow;
use crate::db::projects::ProjectRow;
use crate::files::attachment_view;
use crate::quota::iso;

pub fn conversation_view(c: &ConversationRow) -> protocol::Conversation {
    protocol::Conversation {
        id: c.id.clone(),
        title: c.title.clone(),
        model: c.model.clone(),
        web_search: c.web_search,
        created_at: iso(c.created_at).unwrap_or_default(),
        updated_at: iso(c.updated_at).unwrap_or_default(),
        project_id: c.project_id.clone(),
    }
}

pub fn project_view(p: &ProjectRow) -> protocol::Project {
    protocol::Project {
        id: p.id.clone(),
        name: p.name.clone(),
        instructions: p.instructions.clone(),
        conversations: p.conversations.max(0) as u64,
        created_at: iso(p.created_at).unwrap_or_default(),
        updated_at: iso(p.updated_at).unwrap_or_default(),
    }
}

/// A message without attachments (answers, and questions where they are not needed).
pub fn message_view(m: &MessageRow) -> protocol::Message {
    message_with_files(m, &[])
}

/// A message with the files sent in it (`files` may hold other messages' too).
pub fn message_with_files(m: &MessageRow, files: &[FileRow]) -> protocol::Message {
    protocol::Message {
        id: m.id.clone(),
        conversation_id: m.conversation_id.clone(),
        role: m.role.clone(),
        content: m.content.clone(),
        status: m.status.clone(),
        model: m.model.clone(),
        client_id: m.client_id.clone(),
        created_at: iso(m.created_at).unwrap_or_default(),
        attachments: files
            .iter()
            .filter(|f| f.message_id.as_deref() == Some(m.id.as_str()))
            .map(attachment_view)
            .collect(),
        // Written by this server only: unreadable JSON is no sources rather than an error.
        sources: m
            .sources
            .as_deref()
            .and_then(|json| serde_json::from_str(json).ok())
            .unwrap_or_default(),
    }
}
