//! `chat.send`: what it must pass, in the order that costs least (the message itself,
//! then the token and the conversation in one statement, then the plan), and the
//! [`Reservation`] it then takes: everything that must be given back if no answer comes.

use chat_contract::states::{FileKind, MessageRole};

use chat_actors::model::Turn;
use chat_contract::frames::{ChatRegenerate, ChatSend};

use std::sync::Arc;

use crate::chat::cache::Account;
use crate::chat::checked::{Checked, Place};
use crate::chat::reservation::{Reservation, Units};
use crate::chat::Chat;
use crate::chat::{answer, context, prompt};
use crate::db::conversations::{ConversationRow, MessageRow};
use crate::db::files::FileRow;
use crate::db::projects::ProjectRow;
use crate::entitlements::{self, MAX_ATTACHMENTS};
use crate::error::{ApiError, ErrorCode};
use crate::plans::Plan;
use crate::search::Engine;

/// How a send ended, when it was not refused.
#[derive(Debug, PartialEq, Eq)]
pub enum Sent {
    /// The answer is streaming.
    Accepted,
    /// The token no longer works (revoked, expired, or the user is gone): nothing sent.
    TokenRevoked,
}

/// The message alone: text (none only with attachments), not too long, and the ids of
/// its attachments without repeats.
fn content_of(chat: &Chat, send: &ChatSend) -> Result<(String, Vec<String>), ApiError> {
    let content = send.content.trim().to_owned();
    let mut attachments: Vec<String> = Vec::with_capacity(send.attachments.len());
    for id in &send.attachments {
        // Past what any plan takes the send is refused anyway: stop collecting.
        if attachments.len() > MAX_ATTACHMENTS {
            break;
        }
        if !attachments.contains(id) {
            attachments.push(id.clone());
        }
    }
    if content.is_empty() && attachments.is_empty() {
        return Err(ErrorCode::MessageEmpty.into());
    }
    let max = chat.settings.chat.max_message_chars;
    if content.chars().count() > max {
        return Err(ApiError::with_max(ErrorCode::MessageTooLong, None, max as u64));
    }
    Ok((content, attachments))
}

/// The files a send names, in its order: each must be the user's and not sent before,
/// and together they must fit the plan ([`fits_plan`]).
fn attachments_of(ids: &[String], mut found: Vec<FileRow>, plan: &Plan) -> Result<Vec<FileRow>, ApiError> {
    if ids.len() > MAX_ATTACHMENTS {
        return Err(entitlements::too_many_attachments(plan));
    }
    let mut files = Vec::with_capacity(ids.len());
    for id in ids {
        let at = found
            .iter()
            .position(|f| &f.id == id)
            .ok_or(ErrorCode::NotFound)?;
        let file = found.swap_remove(at);
        // Sent already, or a project's (which its conversations read, and none sends).
        if file.message_id.is_some() || file.project_id.is_some() {
            return Err(ErrorCode::FileInUse.into());
        }
        files.push(file);
    }
    fits_plan(files, plan)
}

/// Files a question carries: what the plan takes ([`entitlements::attachments`]), and
/// each document processed.
fn fits_plan(files: Vec<FileRow>, plan: &Plan) -> Result<Vec<FileRow>, ApiError> {
    entitlements::attachments(&files, plan)?;
    for d in files.iter().filter(|f| f.kind == FileKind::Document) {
        match d.status.as_str() {
            "ready" => {}
            "processing" => return Err(ErrorCode::FileProcessing.into()),
            _ => return Err(ErrorCode::FileUnreadable.into()),
        }
    }
    Ok(files)
}

/// What a send reads before its rules can be checked, read at once: the user's account,
/// the conversation, the files named and the question an edit replaces. The lookups of
/// files and edit are kept as they came: their failure matters only where they are used.
struct Loaded {
    account: Arc<Account>,
    existing: Option<ConversationRow>,
    found: Result<Vec<FileRow>, ApiError>,
    edited: Result<Option<MessageRow>, ApiError>,
}

/// Reads what [`check`] needs; `None` when the token no longer works (a bad signature,
/// expired, of another user, or older than a password change) or the user is gone.
async fn load(
    chat: &Chat,
    user_id: &str,
    token: &str,
    send: &ChatSend,
    attachment_ids: &[String],
) -> Result<Option<Loaded>, ApiError> {
    // More than any plan takes is refused later, once the plan is known: not looked up.
    let lookup = if attachment_ids.len() > MAX_ATTACHMENTS {
        &[][..]
    } else {
        attachment_ids
    };
    // The token's signature and expiry here; its version (a password change since) below.
    let Some(claims) = chat.tokens.verify(token, chat.now()).filter(|c| c.sub == user_id) else {
        return Ok(None);
    };
    let edited = async {
        match &send.edit_of {
            Some(id) => chat.db.message_of_user(user_id, id).await,
            None => Ok(None),
        }
    };
    let (account, context, found, edited) = futures_util::join!(
        chat.realtime.accounts.get(&chat.db, &*chat.clock, user_id),
        chat.db.send_context(user_id, send.conversation_id.as_deref()),
        chat.db.files_of_user(user_id, lookup),
        edited,
    );
    let Some(context) = context? else {
        return Ok(None);
    };
    if context.token_version != claims.ver {
        return Ok(None);
    }
    let Some(mut account) = account? else {
        return Ok(None);
    };
    // The plan as stored decides, not the cached one: a plan set by the operator's command
    // line or another instance (whose event may not reach this one) counts from the next
    // send. The cache is read again only when the two differ.
    if context.plan.is_some_and(|stored| stored != account.plan) {
        chat.realtime.accounts.forget(user_id);
        match chat
            .realtime
            .accounts
            .get(&chat.db, &*chat.clock, user_id)
            .await?
        {
            Some(fresh) => account = fresh,
            None => return Ok(None),
        }
    }
    Ok(Some(Loaded {
        account,
        existing: context.conversation,
        found: found.map_err(ApiError::from),
        edited: edited.map_err(ApiError::from),
    }))
}

/// Where the question goes: a regenerate's stored question again, an edit's after the
/// question it replaces (one of this conversation's, so the user's), any other after the
/// conversation's current message.
fn place_of(
    again: Option<MessageRow>,
    send: &ChatSend,
    edited: Result<Option<MessageRow>, ApiError>,
    existing: Option<&ConversationRow>,
) -> Result<Place, ApiError> {
    Ok(match (again, &send.edit_of) {
        (Some(question), _) => Place::Again(Box::new(question)),
        (None, Some(_)) => {
            let edited = edited?
                .filter(|m| existing.is_some_and(|c| c.id == m.conversation_id))
                .ok_or_else(|| ApiError::field(ErrorCode::NotFound, "editOf"))?;
            if edited.role != MessageRole::User {
                return Err(ApiError::field(ErrorCode::QuestionRequired, "editOf"));
            }
            Place::After(edited.parent_id)
        }
        (None, None) => Place::After(existing.and_then(|c| c.current_message_id.clone())),
    })
}

/// The project the answer follows: a new conversation may start in one (if the plan
/// has projects); an existing one stays where it is.
async fn project_of(
    chat: &Chat,
    user_id: &str,
    plan: &Plan,
    existing: Option<&ConversationRow>,
    send: &ChatSend,
) -> Result<Option<ProjectRow>, ApiError> {
    match (existing, send.project_id.as_deref().filter(|p| !p.is_empty())) {
        (None, Some(wanted)) => {
            entitlements::projects(plan)?;
            let project = chat.db.project(user_id, wanted).await?;
            Ok(Some(project.ok_or(ErrorCode::NotFound)?))
        }
        (
            Some(ConversationRow {
                project_id: Some(id), ..
            }),
            _,
        ) => Ok(chat.db.project(user_id, id).await?),
        _ => Ok(None),
    }
}

/// How the web is searched for the answer, if it is: the send's options must go
/// together and fit the plan, and this server must have a search for it.
fn engine_of(chat: &Chat, plan: &Plan, send: &ChatSend) -> Result<Option<Engine>, ApiError> {
    let searching = send.web_search || send.deep_search;
    if send.image_generation {
        if searching {
            // One answer cannot be both a search and a picture.
            return Err(ErrorCode::InvalidFrame.into());
        }
        entitlements::image_generation(plan)?;
    }
    if !searching {
        return Ok(None);
    }
    entitlements::web_search(plan)?;
    let field = if send.deep_search {
        "deepSearch"
    } else {
        "webSearch"
    };
    let engine = chat.search.providers.engine(plan, send.deep_search);
    Ok(Some(engine.ok_or_else(|| {
        ApiError::field(ErrorCode::SearchUnavailable, field)
    })?))
}

/// The model that answers: the search model searches by itself, and a model that cannot
/// see images hands the message to the plan's image model; with our own search the
/// chosen model answers from the notes.
fn model_used(
    chat: &Chat,
    plan: &Plan,
    send: &ChatSend,
    model: &str,
    engine: Option<&Engine>,
    files: &[FileRow],
) -> String {
    let has_images = files.iter().any(|f| f.kind == FileKind::Image);
    let instead = if send.image_generation {
        &plan.models.image_generation_preprocessing_model
    } else if matches!(engine, Some(Engine::Model)) {
        &plan.models.web_search_model
    } else if has_images && !chat.settings.model.vision_models.iter().any(|m| m == model) {
        &plan.models.image_analysis_model
    } else {
        &None
    };
    instead.clone().unwrap_or_else(|| model.to_owned())
}

/// Before anything is counted: a question that cannot reach `model_used` whole (with its
/// system turns and images) is refused.
async fn fits_window(
    chat: &Chat,
    account: &Account,
    project: Option<&ProjectRow>,
    content: &str,
    files: &[FileRow],
    model_used: &str,
) -> Result<(), ApiError> {
    let window = chat
        .context_sizes
        .window(model_used, chat.settings.model.max_tokens);
    let mut system = vec![Turn {
        role: "system",
        content: prompt::system_prompt(&account.user),
        images: Vec::new(),
    }];
    system.extend(project.and_then(prompt::project_instructions));
    let images = files
        .iter()
        .filter(|f| f.kind == FileKind::Image)
        .map(|f| {
            let side = |px: Option<i32>| px.map_or(0, |px| px.max(0) as u32);
            context::image_tokens(side(f.width), side(f.height))
        })
        .sum();
    let max_chars = chat.settings.chat.max_message_chars;
    context::check_question(system, content, images, window, max_chars).await?;
    Ok(())
}

/// Checks a send of the user whose tab holds `token`; `again`: the stored question a
/// regenerate answers again (its text and files were checked when it was sent).
async fn check(
    chat: &Chat,
    user_id: &str,
    token: &str,
    send: &ChatSend,
    again: Option<MessageRow>,
) -> Result<Option<Checked>, ApiError> {
    let (content, attachment_ids) = match &again {
        Some(question) => (question.content.clone(), Vec::new()),
        None => content_of(chat, send)?,
    };
    let Some(loaded) = load(chat, user_id, token, send, &attachment_ids).await? else {
        return Ok(None);
    };
    let Loaded {
        account,
        existing,
        found,
        edited,
    } = loaded;
    if send.conversation_id.is_some() && existing.is_none() {
        return Err(ErrorCode::NotFound.into());
    }
    let place = place_of(again, send, edited, existing.as_ref())?;
    let plan = chat.catalogue.plan(account.plan);
    // A follow-up keeps its conversation's model unless the user picks another.
    let requested = send.model.as_deref().map(str::trim).filter(|m| !m.is_empty());
    let model = entitlements::chat_model(plan, requested, existing.as_ref().map(|c| c.model.as_str()))?;
    let project = project_of(chat, user_id, plan, existing.as_ref(), send).await?;
    let engine = engine_of(chat, plan, send)?;
    let files = match &place {
        Place::Again(question) => fits_plan(chat.db.files_of_message(&question.id).await?, plan)?,
        Place::After(_) => attachments_of(&attachment_ids, found?, plan)?,
    };
    let model_used = model_used(chat, plan, send, &model, engine.as_ref(), &files);
    if !send.image_generation {
        fits_window(chat, &account, project.as_ref(), &content, &files, &model_used).await?;
    }
    Ok(Some(Checked {
        account,
        content,
        model,
        model_used,
        existing,
        files,
        engine,
        image_generation: send.image_generation,
        project,
        place,
    }))
}

/// Handles a `chat.send` of the user whose tab holds `token`.
pub async fn send(chat: &Arc<Chat>, user_id: &str, token: &str, send: ChatSend) -> Result<Sent, ApiError> {
    if chat.realtime.is_draining() {
        return Err(ErrorCode::ServerShuttingDown.into());
    }
    let Some(checked) = check(chat, user_id, token, &send, None).await? else {
        return Ok(Sent::TokenRevoked);
    };
    start(chat, user_id, checked, send).await
}

/// Handles a `chat.regenerate`: a new answer to the question of an answer, with the
/// question's files and send options, checked and counted like a send.
pub async fn regenerate(
    chat: &Arc<Chat>,
    user_id: &str,
    token: &str,
    frame: ChatRegenerate,
) -> Result<Sent, ApiError> {
    if chat.realtime.is_draining() {
        return Err(ErrorCode::ServerShuttingDown.into());
    }
    let not_found = || ApiError::field(ErrorCode::NotFound, "messageId");
    let answer = chat
        .db
        .message_of_user(user_id, &frame.message_id)
        .await?
        .filter(|m| m.conversation_id == frame.conversation_id)
        .ok_or_else(not_found)?;
    if answer.role != MessageRole::Assistant {
        return Err(ApiError::field(ErrorCode::AnswerRequired, "messageId"));
    }
    let question = match &answer.parent_id {
        Some(id) => chat.db.message(id).await?,
        None => None,
    }
    .ok_or_else(not_found)?;
    let mode = question.mode.as_deref();
    let send = ChatSend {
        client_id: frame.client_id,
        conversation_id: Some(frame.conversation_id),
        content: question.content.clone(),
        model: frame.model,
        web_search: mode == Some("web_search"),
        deep_search: mode == Some("deep_search"),
        image_generation: mode == Some("image_generation"),
        project_id: None,
        attachments: Vec::new(),
        edit_of: None,
    };
    let Some(checked) = check(chat, user_id, token, &send, Some(question)).await? else {
        return Ok(Sent::TokenRevoked);
    };
    start(chat, user_id, checked, send).await
}

/// Counts a checked send and starts its answer.
async fn start(chat: &Arc<Chat>, user_id: &str, checked: Checked, send: ChatSend) -> Result<Sent, ApiError> {
    // A new conversation's id is chosen here so that it is claimed like any other: a
    // follow-up sent to another instance meanwhile waits for this answer.
    let conversation_id = checked
        .existing
        .as_ref()
        .map_or_else(|| uuid::Uuid::now_v7().to_string(), |c| c.id.clone());
    let units = Units {
        searches: checked.searches(chat.settings.search.deep_searches, send.deep_search),
        image: checked.image_generation,
    };
    let (reservation, counted) =
        Reservation::take(chat, user_id, checked.account.plan, &conversation_id, units).await?;
    answer::start(chat, checked, conversation_id, send, reservation, counted).await?;
    Ok(Sent::Accepted)
}
