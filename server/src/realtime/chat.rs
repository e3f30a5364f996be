//! What a session asks of the server, above all `chat.send`: the plan's rules, the
//! quota, storage, then the answer streaming through a generation actor, and what
//! happens when it ends (stored, refunded if it ended before its first delta, titled).

use std::time::Duration;

use actix_web::web;
use chat_actors::generation::{Cancel, FinishReason, GetSnapshot, Outcome, Snapshot, Start};
use chat_actors::hub::{Event, Publish};
use chat_actors::model::{time_limited, ModelRequest, Turn};
use chat_actors::protocol::{ChatSend, ServerFrame};
use chat_actors::quota::{Decision, Service};
use chat_actors::session::{ChatService, FrameError, SessionUser};
use futures_util::future::BoxFuture;
use serde_json::json;

use crate::db::conversations::{ConversationRow, MessageRow};
use crate::db::users::UserRow;
use crate::error::{ApiError, ErrorCode};
use crate::http::settings::settings_json;
use crate::i18n::Lang;
use crate::plans::PlanType;
use crate::realtime::{conversation_view, message_view};
use crate::state::AppState;

/// How long a title may take before the conversation is named by its first words.
const TITLE_TIMEOUT: Duration = Duration::from_secs(20);

pub struct Chat {
    pub state: web::Data<AppState>,
}

fn frame_error(e: ApiError, lang: Lang) -> FrameError {
    if let ApiError::Internal(cause) = &e {
        tracing::error!(error = ?cause, "chat request failed");
    }
    let field = match &e {
        ApiError::Client { field, .. } => field.map(str::to_owned),
        ApiError::Internal(_) => None,
    };
    FrameError {
        code: e.code().as_str().to_owned(),
        message: e.message(lang),
        field,
    }
}

/// How long an error frame waits for the user's language before using the socket's (the
/// database may be what failed).
const LANG_LOOKUP_TIMEOUT: Duration = Duration::from_millis(500);

/// The user's language now (it may have changed since the socket connected).
async fn current_lang(state: &AppState, session: &SessionUser) -> Lang {
    let lookup = tokio::time::timeout(LANG_LOOKUP_TIMEOUT, state.db.user_by_id(&session.id)).await;
    let stored = lookup.ok().and_then(Result::ok).flatten().map(|u| u.language);
    Lang::parse_exact(stored.as_deref().unwrap_or(&session.language)).unwrap_or_default()
}

fn system_prompt(user: &UserRow) -> String {
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

/// A send that passed the plan's rules, before anything is counted or stored.
struct Checked {
    user: UserRow,
    content: String,
    model: String,
    model_used: String,
    existing: Option<ConversationRow>,
}

impl Chat {
    async fn check(&self, session: &SessionUser, send: &ChatSend) -> Result<Checked, ApiError> {
        let state = &self.state;
        let content = send.content.trim().to_owned();
        if content.is_empty() {
            return Err(ErrorCode::MessageEmpty.into());
        }
        let max = state.settings.chat.max_message_chars;
        if content.chars().count() > max {
            return Err(ApiError::with_max(ErrorCode::MessageTooLong, None, max as u64));
        }
        if !send.attachments.is_empty() {
            return Err(ErrorCode::AttachmentsUnsupported.into());
        }
        let user = state
            .db
            .user_by_id(&session.id)
            .await?
            .ok_or(ErrorCode::Unauthorized)?;
        let subscription = state.db.subscription(&user.id, state.now()).await?;
        let plan = state.catalogue.plan(PlanType::from_db(&subscription.plan_type));
        let existing = match &send.conversation_id {
            Some(id) => Some(
                state
                    .db
                    .conversation(&user.id, id)
                    .await?
                    .ok_or(ErrorCode::NotFound)?,
            ),
            None => None,
        };
        // A follow-up keeps its conversation's model unless the user picks another.
        let requested = send.model.as_deref().map(str::trim).filter(|m| !m.is_empty());
        let model = match (requested, &existing) {
            (Some(m), _) if plan.chat_models.iter().any(|allowed| allowed == m) => m.to_owned(),
            (Some(_), _) => return Err(ErrorCode::ModelNotAllowed.into()),
            (None, Some(c)) if plan.chat_models.contains(&c.model) => c.model.clone(),
            (None, _) => plan.models.base_chat_model.clone().unwrap_or_default(),
        };
        if send.web_search && !(plan.features.openai_web_search || plan.features.google_web_search) {
            return Err(ApiError::field(ErrorCode::PremiumRequired, "webSearch"));
        }
        let model_used = if send.web_search {
            plan.models
                .web_search_model
                .clone()
                .unwrap_or_else(|| model.clone())
        } else {
            model.clone()
        };
        Ok(Checked {
            user,
            content,
            model,
            model_used,
            existing,
        })
    }

    async fn send_checked(&self, session: &SessionUser, send: ChatSend) -> Result<(), ApiError> {
        let state = &self.state;
        if state.realtime.is_draining() {
            return Err(ErrorCode::ServerShuttingDown.into());
        }
        let checked = self.check(session, &send).await?;
        let user_id = checked.user.id.clone();
        // Held until the answer ends (`Finished`), or given back here if it never starts.
        let slots = &self.state.realtime.answers;
        if !slots.take(&user_id).await? {
            let max = slots.max() as u64;
            return Err(ApiError::with_max(ErrorCode::TooManyParallelAnswers, None, max));
        }
        let sent = self.send_in_slot(checked, send).await;
        if sent.is_err() {
            slots.give_back(&user_id).await;
        }
        sent
    }

    async fn send_in_slot(&self, checked: Checked, send: ChatSend) -> Result<(), ApiError> {
        let state = &self.state;
        let user_id = checked.user.id.clone();
        // One answer at a time per conversation, on any instance.
        if let Some(c) = &checked.existing {
            let running_here = state
                .realtime
                .generations
                .send(GetSnapshot {
                    conversation_id: c.id.clone(),
                })
                .await;
            if matches!(running_here, Ok(Some(_))) {
                return Err(ErrorCode::GenerationInProgress.into());
            }
        }
        // A new conversation's id is chosen here so that it is claimed like any other: a
        // follow-up sent to another instance meanwhile waits for this answer.
        let conversation_id = checked
            .existing
            .as_ref()
            .map_or_else(|| uuid::Uuid::now_v7().to_string(), |c| c.id.clone());
        if let Some(relay) = &state.realtime.relay {
            if !relay.claim(&conversation_id).await? {
                return Err(ErrorCode::GenerationInProgress.into());
            }
        }
        let release_claim = || async {
            if let Some(relay) = &state.realtime.relay {
                relay.release(&conversation_id).await;
            }
        };
        // Count the response (and the search) before anything is stored.
        if let Err(e) = state.quotas.consume_response(&user_id).await {
            release_claim().await;
            return Err(e);
        }
        if send.web_search {
            let searched = state.quotas.consume(&user_id, Service::WebSearches).await;
            if !matches!(searched, Ok(Decision::Allowed { .. })) {
                state.quotas.refund(&user_id, Service::Responses).await?;
                release_claim().await;
                return Err(match searched {
                    Err(e) => e,
                    Ok(_) => ErrorCode::SearchLimitReached.into(),
                });
            }
        }
        let web_search = send.web_search;
        match self.start_answer(checked, &conversation_id, send).await {
            Ok(()) => Ok(()),
            Err(e) => {
                // Nothing will answer: give the units back (and go on if that fails).
                let mut refunds = vec![state.quotas.refund(&user_id, Service::Responses).await];
                if web_search {
                    refunds.push(state.quotas.refund(&user_id, Service::WebSearches).await);
                }
                for failed in refunds.into_iter().filter_map(Result::err) {
                    tracing::error!(error = ?failed, "giving back a unit after a failed send");
                }
                release_claim().await;
                publish_usage(state, &user_id).await;
                Err(e)
            }
        }
    }

    /// Stores the question and an empty answer, announces them, and starts streaming.
    async fn start_answer(
        &self,
        checked: Checked,
        conversation_id: &str,
        send: ChatSend,
    ) -> Result<(), ApiError> {
        let state = &self.state;
        let realtime = &state.realtime;
        let Checked {
            user,
            content,
            model,
            model_used,
            existing,
        } = checked;
        let now = state.now();
        let (conversation, is_new) = match existing {
            Some(c) => (c, false),
            None => {
                let c = ConversationRow {
                    id: conversation_id.to_owned(),
                    user_id: user.id.clone(),
                    title: None,
                    model: model.clone(),
                    web_search: send.web_search,
                    created_at: now,
                    updated_at: now,
                };
                (c, true)
            }
        };
        let question = MessageRow {
            id: uuid::Uuid::now_v7().to_string(),
            conversation_id: conversation.id.clone(),
            role: "user".into(),
            content: content.clone(),
            status: "complete".into(),
            model: None,
            client_id: Some(send.client_id.clone()),
            finish_reason: None,
            created_at: now,
        };
        let answer = MessageRow {
            id: uuid::Uuid::now_v7().to_string(),
            conversation_id: conversation.id.clone(),
            role: "assistant".into(),
            content: String::new(),
            status: "streaming".into(),
            model: Some(model_used.clone()),
            client_id: Some(send.client_id.clone()),
            finish_reason: None,
            created_at: state.now().max(now + 1),
        };
        // All or nothing: a failure (the database going away) never leaves a question
        // without its answer, or an empty new conversation.
        state
            .db
            .insert_exchange(is_new.then_some(&conversation), &question, &answer)
            .await?;
        if is_new {
            let frame = ServerFrame::ConversationCreated {
                client_id: send.client_id.clone(),
                conversation: conversation_view(&conversation),
            };
            realtime.publish(&user.id, &frame);
        }
        for m in [&question, &answer] {
            let frame = ServerFrame::MessageCreated {
                conversation_id: conversation.id.clone(),
                client_id: Some(send.client_id.clone()),
                message: message_view(m),
            };
            realtime.publish(&user.id, &frame);
        }
        publish_usage(state, &user.id).await;

        let title_from = conversation.title.is_none().then(|| content.clone());
        let web_search = send.web_search;
        let streamed = async {
            if let Some(relay) = &realtime.relay {
                // Other instances see the answer as streaming before its first delta.
                relay.start_live(&conversation.id, &answer.id).await?;
            }
            self.stream_answer(&user, &conversation, &answer, model_used, web_search, title_from)
                .await
        }
        .await;
        if let Err(e) = streamed {
            // Tabs were told an answer is coming: tell them it will not.
            let now = state.now();
            state
                .db
                .finish_message(&answer.id, "", "error", FinishReason::Error.as_str(), now)
                .await?;
            let mut failed = answer.clone();
            failed.status = "error".into();
            let frame = ServerFrame::MessageCompleted {
                conversation_id: conversation.id.clone(),
                message: message_view(&failed),
                finish_reason: FinishReason::Error.as_str().into(),
            };
            realtime.publish(&user.id, &frame);
            return Err(e);
        }
        Ok(())
    }

    /// Builds the prompt and hands the model's stream to a generation actor.
    async fn stream_answer(
        &self,
        user: &UserRow,
        conversation: &ConversationRow,
        answer: &MessageRow,
        model_used: String,
        web_search: bool,
        title_from: Option<String>,
    ) -> Result<(), ApiError> {
        let state = &self.state;
        let realtime = &state.realtime;
        // The conversation so far (the new question included), newest last.
        let history = state.db.messages(&conversation.id).await?;
        let keep = state.settings.chat.history_messages.max(1);
        let mut turns = vec![Turn {
            role: "system",
            content: system_prompt(user),
        }];
        let earlier: Vec<&MessageRow> = history
            .iter()
            .filter(|m| m.id != answer.id && !m.content.is_empty() && m.status != "error")
            .collect();
        for m in earlier.iter().skip(earlier.len().saturating_sub(keep)) {
            turns.push(Turn {
                role: if m.role == "user" { "user" } else { "assistant" },
                content: m.content.clone(),
            });
        }
        let settings = &state.settings.model;
        let stream = time_limited(
            realtime.provider.stream(ModelRequest {
                model: model_used,
                messages: turns,
                max_tokens: (settings.max_tokens > 0).then_some(settings.max_tokens),
            }),
            Duration::from_secs(settings.timeout_secs.max(1)),
            Duration::from_secs(settings.total_timeout_secs.max(1)),
        );

        let done = Finished {
            state: state.clone(),
            user_id: user.id.clone(),
            lang: Lang::parse_exact(&user.language).unwrap_or_default(),
            conversation: conversation.clone(),
            answer: answer.clone(),
            web_search,
            title_from,
        };
        let started = realtime
            .generations
            .send(Start {
                user: user.id.clone(),
                conversation_id: conversation.id.clone(),
                message_id: answer.id.clone(),
                stream,
                batch: Duration::from_millis(state.settings.chat.batch_ms.max(1)),
                timestamps: state.settings.chat.frame_timestamps,
                on_done: Box::new(move |outcome| Box::pin(done.handle(outcome))),
            })
            .await
            .map_err(|e| anyhow::anyhow!("generation registry: {e}"))?;
        if !started {
            // Another tab of this instance started an answer here at the same moment.
            return Err(ErrorCode::GenerationInProgress.into());
        }
        Ok(())
    }
}

/// What to do when an answer ends.
struct Finished {
    state: web::Data<AppState>,
    user_id: String,
    lang: Lang,
    conversation: ConversationRow,
    answer: MessageRow,
    web_search: bool,
    /// The first message, when the conversation still needs a title.
    title_from: Option<String>,
}

impl Finished {
    async fn handle(self, outcome: Outcome) {
        // The model stream is over: a tab told the answer ended may start another.
        self.state.realtime.answers.give_back(&self.user_id).await;
        if let Err(e) = self.store_and_tell(outcome).await {
            tracing::error!(error = ?e, conversation = %self.conversation.id, "finishing an answer");
        }
    }

    async fn store_and_tell(&self, outcome: Outcome) -> anyhow::Result<()> {
        let state = &self.state;
        let status = match outcome.finish {
            FinishReason::Stop => "complete",
            FinishReason::Cancelled => "cancelled",
            // Like an answer whose server died: an error, with the text it had.
            FinishReason::Error | FinishReason::Interrupted => "error",
        };
        let now = state.now();
        state
            .db
            .finish_message(
                &self.answer.id,
                &outcome.content,
                status,
                outcome.finish.as_str(),
                now,
            )
            .await?;
        // Only an answer that ended before its first delta gives its units back: one the
        // tab saw text of counts, or cancelling right after the first words (or asking for
        // an endless answer that the time limit cuts) would make answers free. An answer
        // our own shutdown interrupted is given back: no user can cause that.
        let refunded = match outcome.finish {
            FinishReason::Stop => false,
            FinishReason::Interrupted => true,
            _ => outcome.seq == 0,
        };
        if refunded {
            state.quotas.refund(&self.user_id, Service::Responses).await?;
            if self.web_search {
                state.quotas.refund(&self.user_id, Service::WebSearches).await?;
            }
        }
        let mut message = self.answer.clone();
        message.content = outcome.content.clone();
        message.status = status.into();
        let realtime = &state.realtime;
        realtime.publish(
            &self.user_id,
            &ServerFrame::MessageCompleted {
                conversation_id: self.conversation.id.clone(),
                message: message_view(&message),
                finish_reason: outcome.finish.as_str().into(),
            },
        );
        if let Some(error) = &outcome.error {
            tracing::warn!(error = %error, conversation = %self.conversation.id, "model error");
            let e = ApiError::from(ErrorCode::ModelError);
            let frame = ServerFrame::Error {
                client_id: self.answer.client_id.clone(),
                code: e.code().as_str().into(),
                message: e.message(self.lang),
                field: None,
            };
            realtime.publish(&self.user_id, &frame);
        }
        if refunded {
            publish_usage(state, &self.user_id).await;
        }
        if outcome.finish != FinishReason::Stop {
            return Ok(());
        }
        if let Some(first) = &self.title_from {
            let model = self.answer.model.clone().unwrap_or_default();
            let title = tokio::time::timeout(TITLE_TIMEOUT, realtime.provider.title(&model, first)).await;
            let title = match title {
                Ok(Ok(t)) if !t.trim().is_empty() => t,
                // A title is a nicety: fall back to the first words.
                _ => chat_actors::model::demo_title(first),
            };
            if state
                .db
                .set_generated_title(&self.conversation.id, &title)
                .await?
            {
                if let Some(c) = state
                    .db
                    .conversation(&self.user_id, &self.conversation.id)
                    .await?
                {
                    realtime.publish(
                        &self.user_id,
                        &ServerFrame::ConversationUpdated {
                            conversation: conversation_view(&c),
                        },
                    );
                }
            }
        }
        Ok(())
    }
}

/// Tells every tab the user's counters (after a send, a refund or a plan change).
pub async fn publish_usage(state: &AppState, user_id: &str) {
    match state.quotas.limit_info(user_id).await {
        Ok((has_active_limit, limit_info)) => {
            state.realtime.publish(
                user_id,
                &ServerFrame::UsageUpdated {
                    has_active_limit,
                    limit_info,
                },
            );
        }
        Err(e) => tracing::warn!(error = ?e, "reading usage for usage.updated"),
    }
}

/// Stops a conversation's answer wherever it runs.
pub async fn cancel_everywhere(state: &AppState, user_id: &str, conversation_id: &str) {
    let cancel = Cancel {
        conversation_id: conversation_id.to_owned(),
    };
    let stopped_here = state.realtime.generations.send(cancel).await.unwrap_or(false);
    if !stopped_here && state.realtime.relay.is_some() {
        let event = Event::Cancel {
            conversation_id: conversation_id.to_owned(),
        };
        state.realtime.hub.do_send(Publish {
            user: user_id.to_owned(),
            event,
        });
    }
}

impl ChatService for Chat {
    fn authenticate(&self, token: &str) -> BoxFuture<'static, Result<Option<SessionUser>, FrameError>> {
        let state = self.state.clone();
        let token = token.to_owned();
        Box::pin(async move {
            match state.authenticate(&token).await {
                Ok(user) => Ok(user.map(|u| SessionUser {
                    id: u.id,
                    language: u.language,
                })),
                Err(e) => Err(frame_error(e, Lang::default())),
            }
        })
    }

    fn ready(&self, session: &SessionUser) -> BoxFuture<'static, Result<ServerFrame, FrameError>> {
        let state = self.state.clone();
        let session = session.clone();
        Box::pin(async move {
            let result: Result<ServerFrame, ApiError> = async {
                let user = state
                    .db
                    .user_by_id(&session.id)
                    .await?
                    .ok_or(ErrorCode::Unauthorized)?;
                let (has_active_limit, limit_info) = state.quotas.limit_info(&user.id).await?;
                Ok(ServerFrame::Ready {
                    user: json!({
                        "_id": user.id,
                        "name": user.name,
                        "email": user.email,
                        "profileImage": user.profile_image,
                        "settings": settings_json(&user),
                    }),
                    usage: json!({ "hasActiveLimit": has_active_limit, "limitInfo": limit_info }),
                })
            }
            .await;
            match result {
                Ok(frame) => Ok(frame),
                Err(e) => Err(frame_error(e, current_lang(&state, &session).await)),
            }
        })
    }

    fn send(&self, session: &SessionUser, send: ChatSend) -> BoxFuture<'static, Result<(), FrameError>> {
        let chat = Chat {
            state: self.state.clone(),
        };
        let session = session.clone();
        Box::pin(async move {
            match chat.send_checked(&session, send).await {
                Ok(()) => Ok(()),
                Err(e) => Err(frame_error(e, current_lang(&chat.state, &session).await)),
            }
        })
    }

    fn cancel(
        &self,
        session: &SessionUser,
        conversation_id: String,
    ) -> BoxFuture<'static, Result<(), FrameError>> {
        let state = self.state.clone();
        let session = session.clone();
        Box::pin(async move {
            let owned = state.db.conversation(&session.id, &conversation_id).await;
            match owned {
                Ok(Some(_)) => {
                    cancel_everywhere(&state, &session.id, &conversation_id).await;
                    Ok(())
                }
                Ok(None) => Err(frame_error(
                    ErrorCode::NotFound.into(),
                    current_lang(&state, &session).await,
                )),
                Err(e) => Err(frame_error(e.into(), current_lang(&state, &session).await)),
            }
        })
    }

    fn snapshot(
        &self,
        session: &SessionUser,
        conversation_id: String,
    ) -> BoxFuture<'static, Result<Option<Snapshot>, FrameError>> {
        let state = self.state.clone();
        let session = session.clone();
        Box::pin(async move {
            let result: Result<Option<Snapshot>, ApiError> = async {
                state
                    .db
                    .conversation(&session.id, &conversation_id)
                    .await?
                    .ok_or(ErrorCode::NotFound)?;
                let local = state
                    .realtime
                    .generations
                    .send(GetSnapshot {
                        conversation_id: conversation_id.clone(),
                    })
                    .await;
                if let Ok(Some(snapshot)) = local {
                    return Ok(Some(snapshot));
                }
                match &state.realtime.relay {
                    Some(relay) => Ok(relay.snapshot(&conversation_id).await?),
                    None => Ok(None),
                }
            }
            .await;
            match result {
                Ok(snapshot) => Ok(snapshot),
                Err(e) => Err(frame_error(e, current_lang(&state, &session).await)),
            }
        })
    }

    fn error(&self, session: Option<&SessionUser>, code: &str) -> FrameError {
        let lang = session
            .and_then(|s| Lang::parse_exact(&s.language))
            .unwrap_or_default();
        let code = ErrorCode::ALL
            .iter()
            .copied()
            .find(|c| c.as_str() == code)
            .unwrap_or(ErrorCode::ValidationError);
        frame_error(code.into(), lang)
    }
}
