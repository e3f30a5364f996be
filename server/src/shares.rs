//! Share links (issue 31): the rules. A link is a read-only snapshot of the branch a
//! conversation shows when it is made: that branch's last message, read back with its
//! ancestors. Messages never change once complete, and later ones are not its ancestors,
//! so the snapshot stays as it was shared. Anyone with the token reads it (no login); the
//! owner's name shows only when they chose so; a signed-in viewer may continue it as a
//! copy in their own account. `http/shares.rs` translates these to routes; the rate
//! limits are counted there, as for every other call.

use chat_contract::states::{FileKind, MessageStatus};

use crate::accounts::codes::new_token;
use crate::db::conversations::{ConversationRow, MessageRow};
use crate::db::files::FileRow;
use crate::db::shares::ShareRow;
use crate::db::users::UserRow;
use crate::db::Db;
use crate::error::{ErrorCode, Result};

/// A token is 32 random bytes in unpadded base64url: 43 characters.
const TOKEN_CHARS: usize = 43;

/// What a link shows: its messages, first question first, and the files sent in them.
pub struct Snapshot {
    pub share: ShareRow,
    pub messages: Vec<MessageRow>,
    /// The files of the branch's messages (images and documents alike).
    pub files: Vec<FileRow>,
}

/// Makes a link to the branch the user's conversation shows now. Refused with
/// `not_found` for another user's (or a missing) conversation, `message_empty` for one
/// with no message yet, and `generation_in_progress` while its current answer is still
/// being written (its text is not final).
pub async fn create(
    db: &Db,
    user: &UserRow,
    conversation_id: &str,
    show_name: bool,
    now: i64,
) -> Result<ShareRow> {
    let conversation = db
        .conversation(&user.id, conversation_id)
        .await?
        .ok_or(ErrorCode::NotFound)?;
    let leaf = conversation.current_message_id.ok_or(ErrorCode::MessageEmpty)?;
    let current = db.message(&leaf).await?.ok_or(ErrorCode::MessageEmpty)?;
    if current.status == MessageStatus::Streaming {
        return Err(ErrorCode::GenerationInProgress.into());
    }
    let share = ShareRow {
        id: uuid::Uuid::now_v7().to_string(),
        token: new_token(),
        user_id: user.id.clone(),
        conversation_id: conversation.id,
        message_id: leaf,
        title: conversation.title,
        owner_name: show_name.then(|| user.name.clone()),
        created_at: now,
    };
    // The conversation was deleted since it was read.
    if !db.insert_share(&share).await? {
        return Err(ErrorCode::NotFound.into());
    }
    Ok(share)
}

/// Ends the user's share link `id`: its address answers `not_found` from now on.
pub async fn revoke(db: &Db, user_id: &str, id: &str) -> Result<()> {
    if !db.delete_share(user_id, id).await? {
        return Err(ErrorCode::NotFound.into());
    }
    Ok(())
}

/// The snapshot a token opens; `not_found` for an unknown or revoked token, or one whose
/// conversation or account was deleted. The messages are those a prompt would use:
/// answers that failed or have no text are left out, as the model never saw them either.
pub async fn snapshot(db: &Db, token: &str) -> Result<Snapshot> {
    let share = by_token(db, token).await?;
    let (history, files) = futures_util::join!(
        db.recent_messages(&share.conversation_id, &share.message_id, i64::MAX),
        db.files_of_branch(&share.conversation_id, &share.message_id),
    );
    let messages = history?.messages.into_iter().map(|(m, _)| m).collect();
    Ok(Snapshot {
        share,
        messages,
        files: files?,
    })
}

/// An image of the snapshot's branch, served through the link; `not_found` for anything
/// else: a document (only named), another conversation's file, another version's.
pub async fn image(db: &Db, token: &str, file_id: &str) -> Result<FileRow> {
    let share = by_token(db, token).await?;
    let files = db
        .files_of_branch(&share.conversation_id, &share.message_id)
        .await?;
    Ok(files
        .into_iter()
        .find(|f| f.id == file_id && f.kind == FileKind::Image)
        .ok_or(ErrorCode::NotFound)?)
}

/// Copies a snapshot into the viewer's account as a new conversation: its messages in a
/// chain, the last one current, with the shared title and the shared conversation's model.
/// Files are not copied (they stay their owner's): the questions keep their text only.
pub async fn copy(db: &Db, viewer_id: &str, token: &str, now: i64) -> Result<ConversationRow> {
    let snapshot = snapshot(db, token).await?;
    let source = db
        .conversation(&snapshot.share.user_id, &snapshot.share.conversation_id)
        .await?
        .ok_or(ErrorCode::NotFound)?;
    let conversation_id = uuid::Uuid::now_v7().to_string();
    let mut parent: Option<String> = None;
    let messages: Vec<MessageRow> = snapshot
        .messages
        .into_iter()
        .map(|m| {
            let id = uuid::Uuid::now_v7().to_string();
            MessageRow {
                id: id.clone(),
                conversation_id: conversation_id.clone(),
                parent_id: parent.replace(id),
                // The sending tab's id and the owner's rating are the owner's.
                client_id: None,
                feedback_rating: None,
                feedback_comment: None,
                ..m
            }
        })
        .collect();
    if messages.is_empty() {
        return Err(ErrorCode::NotFound.into());
    }
    let conversation = ConversationRow {
        id: conversation_id,
        user_id: viewer_id.to_owned(),
        title: snapshot.share.title,
        model: source.model,
        web_search: false,
        created_at: now,
        updated_at: now,
        project_id: None,
        current_message_id: parent,
        pinned: false,
        archived: false,
    };
    db.insert_conversation_copy(&conversation, &messages).await?;
    Ok(conversation)
}

async fn by_token(db: &Db, token: &str) -> Result<ShareRow> {
    // A string that cannot be a token is not looked up.
    let well_formed = token.len() == TOKEN_CHARS
        && token
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if !well_formed {
        return Err(ErrorCode::NotFound.into());
    }
    Ok(db.share_by_token(token).await?.ok_or(ErrorCode::NotFound)?)
}
