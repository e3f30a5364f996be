//! What the model is asked: a system prompt from the user's settings, then the
//! conversation's last messages.

use chat_actors::model::Turn;

use crate::db::conversations::MessageRow;
use crate::db::users::UserRow;
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
    if user.language == Lang::HuHu.as_str() {
        prompt.push_str("\nThe user's interface is in Hungarian; answer in the language the user writes in.");
    }
    prompt
}

/// The system prompt, then `history` (oldest first, the new question last).
pub fn turns(user: &UserRow, history: &[MessageRow]) -> Vec<Turn> {
    let mut turns = Vec::with_capacity(history.len() + 1);
    turns.push(Turn {
        role: "system",
        content: system_prompt(user),
    });
    for m in history {
        turns.push(Turn {
            role: if m.role == "user" { "user" } else { "assistant" },
            content: m.content.clone(),
        });
    }
    turns
}
