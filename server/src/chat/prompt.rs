//! What the model is asked: a system prompt from the user's settings, then the
//! conversation's last messages.

use chat_contract::states::{FileKind, MessageRole};
use std::collections::HashMap;

use chat_actors::model::{ImagePart, Turn};

use crate::chat::Chat;
use crate::db::conversations::MessageRow;
use crate::db::files::FileRow;
use crate::db::users::UserRow;
use crate::error::ApiError;
use crate::i18n::Lang;

pub fn system_prompt(user: &UserRow) -> String {
    let mut prompt = String::from("You are a helpful assistant. Format answers in Markdown.");
    if user.ai_enabled {
        if !user.ai_user_name.is_empty() {
            prompt.push_str(&format!("\nAddress the user as {}.", user.ai_user_name));
        }
        if !user.ai_user_info.is_empty() {
            prompt.push_str(&format!(
                "\nWhat the user has told you about themself: {}",
                user.ai_user_info
            ));
        }
    }
    if user.language == Lang::HuHu {
        prompt.push_str("\nThe user's interface is in Hungarian; answer in the language the user writes in.");
    }
    prompt
}

/// The most images one prompt carries: the latest ones of its history. Each is sent
/// whole on every turn that keeps it, and models bill each one.
const MAX_PROMPT_IMAGES: usize = 10;

/// The images of `history`'s messages (from `files`, which may hold others), read from the
/// store: at most [`MAX_PROMPT_IMAGES`], the newest kept.
pub async fn images_of(
    chat: &Chat,
    history: &[MessageRow],
    files: &[FileRow],
) -> Result<HashMap<String, Vec<ImagePart>>, ApiError> {
    let mut wanted: Vec<FileRow> = Vec::new();
    // Only questions carry images to the model: an image an answer made is not one the
    // model can be shown as its own turn.
    for m in history.iter().rev().filter(|m| m.role == MessageRole::User) {
        let of_message = files
            .iter()
            .filter(|f| f.kind == FileKind::Image && f.message_id.as_deref() == Some(m.id.as_str()));
        for f in of_message.rev() {
            if wanted.len() < MAX_PROMPT_IMAGES {
                wanted.push(f.clone());
            }
        }
    }
    wanted.reverse();
    let parts = chat.files.image_parts(&wanted).await?;
    let mut by_message: HashMap<String, Vec<ImagePart>> = HashMap::new();
    for (f, part) in wanted.iter().zip(parts) {
        // An image the store lost is left out rather than failing the answer.
        if let Some(part) = part {
            let message = f.message_id.clone().unwrap_or_default();
            by_message.entry(message).or_default().push(part);
        }
    }
    Ok(by_message)
}

/// The system prompt, then `history` (oldest first, the new question last) with the
/// images of each message; `excerpts` of the conversation's documents come as a system
/// turn right before the question, where the model weighs them most.
pub fn turns(
    user: &UserRow,
    history: &[MessageRow],
    mut images: HashMap<String, Vec<ImagePart>>,
    excerpts: Option<String>,
) -> Vec<Turn> {
    let mut turns = Vec::with_capacity(history.len() + 2);
    turns.push(Turn {
        role: "system",
        content: system_prompt(user),
        images: Vec::new(),
    });
    for (i, m) in history.iter().enumerate() {
        if i + 1 == history.len() {
            if let Some(excerpts) = &excerpts {
                turns.push(Turn {
                    role: "system",
                    content: excerpts.clone(),
                    images: Vec::new(),
                });
            }
        }
        turns.push(Turn {
            role: if m.role == MessageRole::User {
                "user"
            } else {
                "assistant"
            },
            content: m.content.clone(),
            images: images.remove(&m.id).unwrap_or_default(),
        });
    }
    turns
}

/// How the system turn that carries a project's instructions starts: the demo model
/// looks for it to say what it was told.
pub use chat_contract::prompt::PROJECT_HEADER;

/// The system turn of a project's instructions; `None` when it has none.
pub fn project_instructions(project: &crate::db::projects::ProjectRow) -> Option<Turn> {
    let instructions = project.instructions.trim();
    (!instructions.is_empty()).then(|| Turn {
        role: "system",
        content: format!("{PROJECT_HEADER} ({}):\n{instructions}", project.name),
        images: Vec::new(),
    })
}
