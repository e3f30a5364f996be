//! Conversations as trees: which branch a conversation shows, and what the user thinks
//! of an answer. Edits and regenerates are sends (see [`crate::chat::send`]).

use chat_contract::frames::{Feedback, Rating, ServerFrame};
use chat_contract::limits::MAX_FEEDBACK_CHARS;
use chat_contract::states::MessageRole;

use crate::chat::Chat;
use crate::error::{ApiError, ErrorCode};

/// `conversation.select`: the user's conversation shows the branch through `message_id`
/// (its newest message below it becomes current), and every tab of the user, on every
/// instance, gets `conversation.updated`. Allowed while an answer streams: the answer
/// goes on in its own branch.
pub async fn select(
    chat: &Chat,
    user_id: &str,
    conversation_id: &str,
    message_id: &str,
) -> Result<(), ApiError> {
    chat.db
        .conversation(user_id, conversation_id)
        .await?
        .ok_or(ErrorCode::NotFound)?;
    if !chat
        .db
        .select_branch(user_id, conversation_id, message_id)
        .await?
    {
        return Err(ApiError::field(ErrorCode::NotFound, "messageId"));
    }
    chat.announce.conversation(user_id, conversation_id).await?;
    Ok(())
}

/// Sets (or with `rating: None`, takes back) the user's feedback on their answer, and
/// tells every tab. Another user's message is not found; a question cannot be rated.
pub async fn set_feedback(
    chat: &Chat,
    user_id: &str,
    message_id: &str,
    rating: Option<Rating>,
    comment: Option<&str>,
) -> Result<Option<Feedback>, ApiError> {
    let comment = comment.map(str::trim).filter(|c| !c.is_empty());
    if let Some(comment) = comment {
        if comment.chars().count() as u64 > MAX_FEEDBACK_CHARS {
            return Err(ApiError::with_max(
                ErrorCode::FieldTooLong,
                Some("comment"),
                MAX_FEEDBACK_CHARS,
            ));
        }
    }
    let message = chat
        .db
        .message_of_user(user_id, message_id)
        .await?
        .ok_or(ErrorCode::NotFound)?;
    if message.role != MessageRole::Assistant {
        return Err(ApiError::field(ErrorCode::AnswerRequired, "messageId"));
    }
    // A comment belongs to a rating: taking the rating back takes the comment too.
    let feedback = rating.map(|rating| Feedback {
        rating,
        comment: comment.map(str::to_owned),
    });
    let stored = feedback.as_ref().map(|f| match f.rating {
        Rating::Up => "up",
        Rating::Down => "down",
    });
    let comment = feedback.as_ref().and_then(|f| f.comment.as_deref());
    chat.db.set_feedback(&message.id, stored, comment).await?;
    chat.realtime.publish(
        user_id,
        &ServerFrame::MessageFeedback {
            conversation_id: message.conversation_id,
            message_id: message.id,
            feedback: feedback.clone(),
        },
    );
    Ok(feedback)
}
