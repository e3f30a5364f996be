//! `chat.send`: what it must pass, in the order that costs least (the message itself,
//! then the token and the conversation in one statement, then the plan), and the
//! [`Reservation`] it then takes: everything that must be given back if no answer comes.

use chat_contract::states::{FileKind, MessageRole, Service};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use actix_web::web;
use chat_actors::model::Turn;
use chat_actors::quota::{Counted, Decision};
use chat_contract::frames::{ChatRegenerate, ChatSend};

use crate::chat::cache::Account;
use crate::chat::{answer, context, prompt};
use crate::db::conversations::{ConversationRow, MessageRow};
use crate::db::files::FileRow;
use crate::db::projects::ProjectRow;
use crate::error::{ApiError, ErrorCode};
use crate::plans::{Plan, PlanType};
use crate::search::Engine;
use crate::state::AppState;

/// How a send ended, when it was not refused.
#[derive(Debug, PartialEq, Eq)]
pub enum Sent {
    /// The answer is streaming.
    Accepted,
    /// The token no longer works (revoked, expired, or the user is gone): nothing sent.
    TokenRevoked,
}

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
    /// for a deep search (the most it may make).
    pub fn searches(&self, state: &AppState, deep: bool) -> u32 {
        match (&self.engine, deep) {
            (None, _) => 0,
            (Some(_), true) => state.settings.search.deep_searches.max(1),
            (Some(_), false) => 1,
        }
    }
}

/// The most files one message may name, whatever the plan: bounds the lookup before the
/// plan is known (the plan's own limit is checked after).
const MAX_ATTACHMENTS: usize = 16;

/// The message alone: text (none only with attachments), not too long, and the ids of
/// its attachments without repeats.
fn content_of(state: &AppState, send: &ChatSend) -> Result<(String, Vec<String>), ApiError> {
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
    let max = state.settings.chat.max_message_chars;
    if content.chars().count() > max {
        return Err(ApiError::with_max(ErrorCode::MessageTooLong, None, max as u64));
    }
    Ok((content, attachments))
}

/// The most documents one message may carry (their excerpts share one prompt).
const MAX_DOCUMENTS: usize = 10;

/// The files a send names, in its order: each must be the user's and not sent before,
/// a document must be processed (and the plan take documents), and there may be no
/// more images than the plan takes in one message, nor more than [`MAX_DOCUMENTS`].
fn attachments_of(ids: &[String], mut found: Vec<FileRow>, plan: &Plan) -> Result<Vec<FileRow>, ApiError> {
    if ids.len() > MAX_ATTACHMENTS {
        // Only images and documents exist: one of the two limits is passed.
        let max = plan.max_images_per_message as usize;
        return Err(ApiError::with_max(
            ErrorCode::TooManyImages,
            None,
            max.min(MAX_ATTACHMENTS) as u64,
        ));
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

/// Files a question carries that its plan must take: no more images than the plan takes
/// in one message, documents only on plans with them and no more than [`MAX_DOCUMENTS`],
/// each processed.
fn fits_plan(files: Vec<FileRow>, plan: &Plan) -> Result<Vec<FileRow>, ApiError> {
    let images = files.iter().filter(|f| f.kind == FileKind::Image).count();
    let max_images = (plan.max_images_per_message as usize).min(MAX_ATTACHMENTS);
    if images > max_images {
        return Err(ApiError::with_max(
            ErrorCode::TooManyImages,
            None,
            max_images as u64,
        ));
    }
    let documents: Vec<&FileRow> = files.iter().filter(|f| f.kind == FileKind::Document).collect();
    if !documents.is_empty() && !plan.features.document_processing {
        // Uploaded on a plan that had them, sent after a downgrade.
        return Err(ApiError::field(ErrorCode::PremiumRequired, "documentUpload"));
    }
    if documents.len() > MAX_DOCUMENTS {
        return Err(ApiError::with_max(
            ErrorCode::TooManyDocuments,
            None,
            MAX_DOCUMENTS as u64,
        ));
    }
    for d in documents {
        match d.status.as_str() {
            "ready" => {}
            "processing" => return Err(ErrorCode::FileProcessing.into()),
            _ => return Err(ErrorCode::FileUnreadable.into()),
        }
    }
    Ok(files)
}

/// Checks a send of the user whose tab holds `token`; `again`: the stored question a
/// regenerate answers again (its text and files were checked when it was sent).
async fn check(
    state: &AppState,
    user_id: &str,
    token: &str,
    send: &ChatSend,
    again: Option<MessageRow>,
) -> Result<Option<Checked>, ApiError> {
    let (content, attachment_ids) = match &again {
        Some(question) => (question.content.clone(), Vec::new()),
        None => content_of(state, send)?,
    };
    // More than any plan takes is refused below, once the plan is known: not looked up.
    let lookup = if attachment_ids.len() > MAX_ATTACHMENTS {
        &[][..]
    } else {
        &attachment_ids[..]
    };
    // The token's signature and expiry here; its version (a password change since) below.
    let Some(claims) = state
        .tokens
        .verify(token, state.now())
        .filter(|c| c.sub == user_id)
    else {
        return Ok(None);
    };
    let edited = async {
        match &send.edit_of {
            Some(id) => state.db.message_of_user(user_id, id).await,
            None => Ok(None),
        }
    };
    let (account, context, found, edited) = futures_util::join!(
        state.realtime.accounts.get(state, user_id),
        state.db.send_context(user_id, send.conversation_id.as_deref()),
        state.db.files_of_user(user_id, lookup),
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
        state.realtime.accounts.forget(user_id);
        match state.realtime.accounts.get(state, user_id).await? {
            Some(fresh) => account = fresh,
            None => return Ok(None),
        }
    }
    let existing = context.conversation;
    if send.conversation_id.is_some() && existing.is_none() {
        return Err(ErrorCode::NotFound.into());
    }
    let place = match (again, &send.edit_of) {
        (Some(question), _) => Place::Again(Box::new(question)),
        (None, Some(_)) => {
            // The question replaced: one of this conversation's (so the user's).
            let edited = edited?
                .filter(|m| existing.as_ref().is_some_and(|c| c.id == m.conversation_id))
                .ok_or_else(|| ApiError::field(ErrorCode::NotFound, "editOf"))?;
            if edited.role != MessageRole::User {
                return Err(ApiError::field(ErrorCode::QuestionRequired, "editOf"));
            }
            Place::After(edited.parent_id)
        }
        (None, None) => Place::After(existing.as_ref().and_then(|c| c.current_message_id.clone())),
    };
    let plan = state.catalogue.plan(account.plan);
    // A follow-up keeps its conversation's model unless the user picks another.
    let requested = send.model.as_deref().map(str::trim).filter(|m| !m.is_empty());
    let model = match (requested, &existing) {
        (Some(m), _) if plan.chat_models.iter().any(|allowed| allowed == m) => m.to_owned(),
        (Some(_), _) => return Err(ErrorCode::ModelNotAllowed.into()),
        (None, Some(c)) if plan.chat_models.contains(&c.model) => c.model.clone(),
        (None, _) => plan.models.base_chat_model.clone().unwrap_or_default(),
    };
    // A new conversation may start in a project; an existing one stays where it is.
    let project = match (&existing, send.project_id.as_deref().filter(|p| !p.is_empty())) {
        (None, Some(wanted)) => {
            if !plan.features.project_management {
                return Err(ApiError::field(ErrorCode::PremiumRequired, "projectManagement"));
            }
            Some(
                state
                    .db
                    .project(user_id, wanted)
                    .await?
                    .ok_or(ErrorCode::NotFound)?,
            )
        }
        (
            Some(ConversationRow {
                project_id: Some(id), ..
            }),
            _,
        ) => state.db.project(user_id, id).await?,
        _ => None,
    };
    let searching = send.web_search || send.deep_search;
    if send.image_generation {
        if searching {
            // One answer cannot be both a search and a picture.
            return Err(ErrorCode::InvalidFrame.into());
        }
        if !plan.features.image_generation {
            return Err(ApiError::field(ErrorCode::PremiumRequired, "imageGeneration"));
        }
    }
    if searching && !(plan.features.openai_web_search || plan.features.google_web_search) {
        return Err(ApiError::field(ErrorCode::PremiumRequired, "webSearch"));
    }
    let engine = match searching {
        true => Some(
            state
                .search
                .providers
                .engine(plan, send.deep_search)
                .ok_or_else(|| {
                    ApiError::field(
                        ErrorCode::SearchUnavailable,
                        if send.deep_search {
                            "deepSearch"
                        } else {
                            "webSearch"
                        },
                    )
                })?,
        ),
        false => None,
    };
    let files = match &place {
        Place::Again(question) => fits_plan(state.db.files_of_message(&question.id).await?, plan)?,
        Place::After(_) => attachments_of(&attachment_ids, found?, plan)?,
    };
    let has_images = files.iter().any(|f| f.kind == FileKind::Image);
    // The search model searches by itself; with our own search the chosen model
    // answers from the notes.
    let model_used = if send.image_generation {
        plan.models
            .image_generation_preprocessing_model
            .clone()
            .unwrap_or_else(|| model.clone())
    } else if matches!(engine, Some(Engine::Model)) {
        plan.models
            .web_search_model
            .clone()
            .unwrap_or_else(|| model.clone())
    } else if has_images && !state.settings.model.vision_models.contains(&model) {
        // A model that cannot see images hands the message to the plan's image model.
        plan.models
            .image_analysis_model
            .clone()
            .unwrap_or_else(|| model.clone())
    } else {
        model.clone()
    };
    if !send.image_generation {
        // Before anything is counted: a question that cannot reach the model whole.
        let window = state
            .context_sizes
            .window(&model_used, state.settings.model.max_tokens);
        let mut system = vec![Turn {
            role: "system",
            content: prompt::system_prompt(&account.user),
            images: Vec::new(),
        }];
        system.extend(project.as_ref().and_then(prompt::project_instructions));
        let images = files
            .iter()
            .filter(|f| f.kind == FileKind::Image)
            .map(|f| {
                let side = |px: Option<i32>| px.map_or(0, |px| px.max(0) as u32);
                context::image_tokens(side(f.width), side(f.height))
            })
            .sum();
        let max_chars = state.settings.chat.max_message_chars;
        context::check_question(system, &content, images, window, max_chars).await?;
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
pub async fn send(
    state: &web::Data<AppState>,
    user_id: &str,
    token: &str,
    send: ChatSend,
) -> Result<Sent, ApiError> {
    if state.realtime.is_draining() {
        return Err(ErrorCode::ServerShuttingDown.into());
    }
    let Some(checked) = check(state, user_id, token, &send, None).await? else {
        return Ok(Sent::TokenRevoked);
    };
    start(state, user_id, checked, send).await
}

/// Handles a `chat.regenerate`: a new answer to the question of an answer, with the
/// question's files and send options, checked and counted like a send.
pub async fn regenerate(
    state: &web::Data<AppState>,
    user_id: &str,
    token: &str,
    frame: ChatRegenerate,
) -> Result<Sent, ApiError> {
    if state.realtime.is_draining() {
        return Err(ErrorCode::ServerShuttingDown.into());
    }
    let not_found = || ApiError::field(ErrorCode::NotFound, "messageId");
    let answer = state
        .db
        .message_of_user(user_id, &frame.message_id)
        .await?
        .filter(|m| m.conversation_id == frame.conversation_id)
        .ok_or_else(not_found)?;
    if answer.role != MessageRole::Assistant {
        return Err(ApiError::field(ErrorCode::AnswerRequired, "messageId"));
    }
    let question = match &answer.parent_id {
        Some(id) => state.db.message(id).await?,
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
    let Some(checked) = check(state, user_id, token, &send, Some(question)).await? else {
        return Ok(Sent::TokenRevoked);
    };
    start(state, user_id, checked, send).await
}

/// Counts a checked send and starts its answer.
async fn start(
    state: &web::Data<AppState>,
    user_id: &str,
    checked: Checked,
    send: ChatSend,
) -> Result<Sent, ApiError> {
    // A new conversation's id is chosen here so that it is claimed like any other: a
    // follow-up sent to another instance meanwhile waits for this answer.
    let conversation_id = checked
        .existing
        .as_ref()
        .map_or_else(|| uuid::Uuid::now_v7().to_string(), |c| c.id.clone());
    let units = Units {
        searches: checked.searches(state, send.deep_search),
        image: checked.image_generation,
    };
    let (reservation, counted) =
        Reservation::take(state, user_id, checked.account.plan, &conversation_id, units).await?;
    answer::start(state, checked, conversation_id, send, reservation, counted).await?;
    Ok(Sent::Accepted)
}

/// What a send counts besides its response.
#[derive(Debug, Clone, Copy, Default)]
pub struct Units {
    /// Web searches to reserve.
    pub searches: u32,
    /// An image generation.
    pub image: bool,
}

/// What a send holds from its checks until its answer ends: one of the user's answer
/// slots, the conversation (on every instance, with Redis), and the units counted. The
/// one place that takes them and gives them back.
pub struct Reservation {
    state: web::Data<AppState>,
    user_id: String,
    conversation_id: String,
    /// Web searches counted for this answer (reserved before it starts).
    searches: u32,
    /// Of those, the searches made: the rest go back when the answer ends.
    pub searches_made: Arc<AtomicU32>,
    /// An image generation counted (given back with the response).
    image: bool,
}

impl Reservation {
    /// Takes, in order, a slot, the conversation, a response (and `searches` web
    /// searches, all or none); what fails gives back what was taken before it. Answers
    /// the counters as the check left them.
    pub async fn take(
        state: &web::Data<AppState>,
        user_id: &str,
        plan: PlanType,
        conversation_id: &str,
        units: Units,
    ) -> Result<(Reservation, Counted), ApiError> {
        let searches = units.searches;
        let realtime = &state.realtime;
        let slots = &realtime.answers;
        if !slots.take(user_id).await? {
            let max = slots.max() as u64;
            return Err(ApiError::with_max(ErrorCode::TooManyParallelAnswers, None, max));
        }
        let give_slot_back = || slots.give_back(user_id);
        // One answer at a time per conversation, on any instance.
        if realtime.generations.is_running(conversation_id) {
            give_slot_back().await;
            return Err(ErrorCode::GenerationInProgress.into());
        }
        if let Some(relay) = &realtime.relay {
            match relay.claim(conversation_id).await {
                Ok(true) => {}
                Ok(false) => {
                    give_slot_back().await;
                    return Err(ErrorCode::GenerationInProgress.into());
                }
                Err(e) => {
                    give_slot_back().await;
                    return Err(e.into());
                }
            }
        }
        let mut held = Reservation {
            state: state.clone(),
            user_id: user_id.to_owned(),
            conversation_id: conversation_id.to_owned(),
            // Nothing counted yet: a refusal below gives back only the response.
            searches: 0,
            searches_made: Arc::new(AtomicU32::new(0)),
            image: false,
        };
        // Counted before anything is stored.
        let mut counted = match state.quotas.consume_response_on(user_id, plan).await {
            Ok(counted) => counted,
            Err(e) => {
                held.release_claim_and_slot().await;
                return Err(e);
            }
        };
        // One unit at a time, each checked atomically: parallel sends never pass the
        // limit together, and a deep search that cannot have all it needs gives back
        // what it took.
        while held.searches < searches {
            let searched = state.quotas.consume_on(user_id, plan, Service::WebSearches).await;
            match searched {
                Ok(
                    now @ Counted {
                        decision: Decision::Allowed { .. },
                        ..
                    },
                ) => {
                    held.searches += 1;
                    counted = now;
                }
                refused => {
                    held.cancel().await;
                    return Err(match refused {
                        Err(e) => e,
                        Ok(_) if searches > 1 => {
                            ApiError::with_max(ErrorCode::DeepSearchLimit, None, u64::from(searches))
                        }
                        Ok(_) => ErrorCode::SearchLimitReached.into(),
                    });
                }
            }
        }
        if units.image {
            match state
                .quotas
                .consume_on(user_id, plan, Service::ImageGenerations)
                .await
            {
                Ok(
                    now @ Counted {
                        decision: Decision::Allowed { .. },
                        ..
                    },
                ) => {
                    held.image = true;
                    counted = now;
                }
                refused => {
                    held.cancel().await;
                    return Err(match refused {
                        Err(e) => e,
                        Ok(_) => ErrorCode::ImageLimitReached.into(),
                    });
                }
            }
        }
        Ok((held, counted))
    }

    async fn release_claim_and_slot(&self) {
        let realtime = &self.state.realtime;
        if let Some(relay) = &realtime.relay {
            relay.release(&self.conversation_id).await;
        }
        realtime.answers.give_back(&self.user_id).await;
    }

    /// Gives back the response (when `response`) and the searches not made.
    async fn refund(&self, response: bool) -> anyhow::Result<()> {
        let quotas = &self.state.quotas;
        let responses = match response {
            true => quotas.refund(&self.user_id, Service::Responses).await,
            false => Ok(()),
        };
        // An image is made or not with the answer's first text: it goes back with it.
        if response && self.image {
            quotas.refund(&self.user_id, Service::ImageGenerations).await?;
        }
        let made = self.searches_made.load(Ordering::SeqCst).min(self.searches);
        for _ in made..self.searches {
            quotas.refund(&self.user_id, Service::WebSearches).await?;
        }
        Ok(responses?)
    }

    /// Nothing will answer: the units, the conversation and the slot go back, and the
    /// tabs learn their counters.
    pub async fn cancel(self) {
        self.searches_made.store(0, Ordering::SeqCst);
        if let Err(e) = self.refund(true).await {
            crate::outage::log_failure(&e, "giving back units after a failed send");
        }
        self.release_claim_and_slot().await;
        crate::announce::usage(&self.state, &self.user_id).await;
    }

    /// The web searches reserved.
    pub fn searches(&self) -> u32 {
        self.searches
    }

    /// Marks every reserved search as made (the search model searched by itself).
    pub fn all_searches_made(&self) {
        self.searches_made.store(self.searches, Ordering::SeqCst);
    }

    /// Whether giving back would change the counters: a refunded response, or searches
    /// reserved and not made.
    pub fn gives_back(&self, refund: bool) -> bool {
        refund || self.searches_made.load(Ordering::SeqCst) < self.searches
    }

    /// The answer ended: the slot goes back (a tab told it ended may start another), the
    /// response when `refund`, and the searches not made. Searches made stay counted
    /// even when the answer is refunded: cancelling before the text must not make
    /// searches free. The conversation's claim is released by the relay once the
    /// answer's end is written, after its last delta.
    pub async fn settle(self, refund: bool) -> anyhow::Result<()> {
        self.state.realtime.answers.give_back(&self.user_id).await;
        self.refund(refund).await
    }
}
