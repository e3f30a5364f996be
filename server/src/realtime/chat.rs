//! What a session asks of the server, above all `chat.send`: the plan's rules, the
//! quota, storage, then the answer streaming through a generation actor, and what
//! happens when it ends (stored, refunded if it failed or was cancelled, titled).

use std::time::Duration;

use actix_web::web;
use chat_actors::generation::{Cancel, FinishReason, GetSnapshot, Outcome, Snapshot, Start};
use chat_actors::hub::{Event, Publish};
use chat_actors::model::{ModelError, ModelRequest, Turn};
use chat_actors::protocol::{ChatSend, ServerFrame};
use chat_actors::quota::Service;
use chat_actors::session::{ChatService, FrameError, SessionUser};
use futures_util::future::BoxFuture;
use futures_util::stream::{self, BoxStream, StreamExt};
use serde_json::json;

use crate::db::conversations::{ConversationRow, MessageRow};
use crate::db::users::UserRow;
use crate::error::{ApiError, ErrorCode};
use crate::http::settings::settings_json;
use crate::i18n::Lang;
use crate::plans::PlanType;
use crate::realtime::{conversation_view, message_view};
use crate::state::AppState;

/// How long a title may take before the conversation stays untitled.
const TITLE_TIMEOUT: Duration = Duration::from_secs(20);

pub struct Chat {
    pub state: web::Data<AppState>,
}

fn lang_of(user: &SessionUser) -> Lang {
    Lang::parse_exact(&user.language).unwrap_or_default()
}

fn frame_error(e: ApiError, lang: Lang) -> FrameError {
    if let ApiError::Internal(cause) = &e {
        tracing::error!(error = ?cause, "chat request failed");
    }
    FrameError {
        code: e.code().as_str().to_owned(),
        message: e.message(lang),
    }
}

/// The model's chunks, ending with `Timeout` when none comes for `limit`.
fn with_timeout(
    stream: BoxStream<'static, Result<String, ModelError>>,
    limit: Duration,
) -> BoxStream<'static, Result<String, ModelError>> {
    stream::unfold((stream, false), move |(mut inner, ended)| async move {
        if ended {
            return None;
        }
        match tokio::time::timeout(limit, inner.next()).await {
            Ok(Some(item)) => {
                let last = item.is_err();
                Some((item, (inner, last)))
            }
            Ok(None) => None,
            Err(_) => Some((Err(ModelError::Timeout), (inner, true))),
        }
    })
    .boxed()
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

impl Chat {
    async fn send_checked(&self, session: &SessionUser, send: ChatSend) -> Result<(), ApiError> {
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
        let now = state.now();
        let user = state
            .db
            .user_by_id(&session.id)
            .await?
            .ok_or(ErrorCode::Unauthorized)?;
        let subscription = state.db.subscription(&user.id, now).await?;
        let plan = state.catalogue.plan(PlanType::from_db(&subscription.plan_type));
        let model = match send.model.as_deref().map(str::trim).filter(|m| !m.is_empty()) {
            Some(m) if plan.chat_models.iter().any(|allowed| allowed == m) => m.to_owned(),
            Some(_) => return Err(ErrorCode::ModelNotAllowed.into()),
            None => plan.models.base_chat_model.clone().unwrap_or_default(),
        };
        if send.web_search && !(plan.features.openai_web_search || plan.features.google_web_search) {
            return Err(ApiError::field(ErrorCode::PremiumRequired, "webSearch"));
        }
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
        if let Some(c) = &existing {
            if state
                .realtime
                .generations
                .send(GetSnapshot {
                    conversation_id: c.id.clone(),
                })
                .await
                .ok()
                .flatten()
                .is_some()
            {
                return Err(ErrorCode::GenerationInProgress.into());
            }
        }

        // Count the response (and the search) before anything is stored.
        state.quotas.consume_response(&user.id).await?;
        if send.web_search {
            if let chat_actors::quota::Decision::Refused { .. } =
                state.quotas.consume(&user.id, Service::WebSearches).await?
            {
                state.quotas.refund(&user.id, Service::Responses).await?;
                return Err(ErrorCode::SearchLimitReached.into());
            }
        }

        let realtime = &state.realtime;
        let conversation = match existing {
            Some(c) => c,
            None => {
                let c = ConversationRow {
                    id: uuid::Uuid::now_v7().to_string(),
                    user_id: user.id.clone(),
                    title: None,
                    model: model.clone(),
                    web_search: send.web_search,
                    created_at: now,
                    updated_at: now,
                };
                state.db.insert_conversation(&c).await?;
                realtime.publish(
                    &user.id,
                    &ServerFrame::ConversationCreated {
                        client_id: send.client_id.clone(),
                        conversation: conversation_view(&c),
                    },
                );
                c
            }
        };
        let first_exchange = conversation.title.is_none();
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
        state.db.insert_message(&question).await?;
        let answer = MessageRow {
            id: uuid::Uuid::now_v7().to_string(),
            conversation_id: conversation.id.clone(),
            role: "assistant".into(),
            content: String::new(),
            status: "streaming".into(),
            model: Some(model.clone()),
            client_id: Some(send.client_id.clone()),
            finish_reason: None,
            created_at: state.now().max(now + 1),
        };
        state.db.insert_message(&answer).await?;
        for m in [&question, &answer] {
            realtime.publish(
                &user.id,
                &ServerFrame::MessageCreated {
                    conversation_id: conversation.id.clone(),
                    client_id: Some(send.client_id.clone()),
                    message: message_view(m),
                },
            );
        }
        publish_usage(state, &user.id).await;

        // The conversation so far (the new question included), newest last.
        let history = state.db.messages(&conversation.id).await?;
        let keep = state.settings.chat.history_messages.max(1);
        let mut turns = vec![Turn {
            role: "system",
            content: system_prompt(&user),
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
        let model_used = if send.web_search {
            plan.models.web_search_model.clone().unwrap_or(model.clone())
        } else {
            model.clone()
        };
        let limit = Duration::from_secs(state.settings.model.timeout_secs.max(1));
        let stream = with_timeout(
            realtime.provider.stream(ModelRequest {
                model: model_used,
                messages: turns,
            }),
            limit,
        );

        let done = Finished {
            state: state.clone(),
            user_id: user.id.clone(),
            lang: Lang::parse_exact(&user.language).unwrap_or_default(),
            conversation: conversation.clone(),
            answer: answer.clone(),
            web_search: send.web_search,
            title_from: first_exchange.then(|| content.clone()),
        };
        let started = realtime
            .generations
            .send(Start {
                user: user.id.clone(),
                conversation_id: conversation.id.clone(),
                message_id: answer.id.clone(),
                stream,
                batch: Duration::from_millis(state.settings.chat.batch_ms.max(1)),
                on_done: Box::new(move |outcome| Box::pin(done.handle(outcome))),
            })
            .await
            .map_err(|e| anyhow::anyhow!("generation registry: {e}"))?;
        if !started {
            // Another tab started an answer in this conversation at the same moment.
            let failed = Outcome {
                content: String::new(),
                finish: FinishReason::Error,
                error: None,
                seq: 0,
            };
            let done = Finished {
                state: state.clone(),
                user_id: user.id.clone(),
                lang: lang_of(session),
                conversation,
                answer,
                web_search: send.web_search,
                title_from: None,
            };
            done.handle(failed).await;
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
        if let Err(e) = self.store_and_tell(outcome).await {
            tracing::error!(error = ?e, conversation = %self.conversation.id, "finishing an answer");
        }
    }

    async fn store_and_tell(&self, outcome: Outcome) -> anyhow::Result<()> {
        let state = &self.state;
        let status = match outcome.finish {
            FinishReason::Stop => "complete",
            FinishReason::Cancelled => "cancelled",
            FinishReason::Error => "error",
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
        if outcome.finish != FinishReason::Stop {
            // A failed or cancelled answer gives its units back.
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
            realtime.publish(
                &self.user_id,
                &ServerFrame::Error {
                    client_id: self.answer.client_id.clone(),
                    code: e.code().as_str().into(),
                    message: e.message(self.lang),
                },
            );
        }
        if outcome.finish != FinishReason::Stop {
            publish_usage(state, &self.user_id).await;
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
            let mut info = limit_info;
            info["hasActiveLimit"] = json!(has_active_limit);
            state
                .realtime
                .publish(user_id, &ServerFrame::UsageUpdated { limit_info: info });
        }
        Err(e) => tracing::warn!(error = ?e, "reading usage for usage.updated"),
    }
}

impl ChatService for Chat {
    fn authenticate(&self, token: &str) -> BoxFuture<'static, Option<SessionUser>> {
        let state = self.state.clone();
        let token = token.to_owned();
        Box::pin(async move {
            let user = state.authenticate(&token).await.ok().flatten()?;
            Some(SessionUser {
                id: user.id,
                language: user.language,
            })
        })
    }

    fn ready(&self, session: &SessionUser) -> BoxFuture<'static, Result<ServerFrame, FrameError>> {
        let state = self.state.clone();
        let session = session.clone();
        Box::pin(async move {
            let lang = lang_of(&session);
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
            result.map_err(|e| frame_error(e, lang))
        })
    }

    fn send(&self, session: &SessionUser, send: ChatSend) -> BoxFuture<'static, Result<(), FrameError>> {
        let chat = Chat {
            state: self.state.clone(),
        };
        let session = session.clone();
        Box::pin(async move {
            chat.send_checked(&session, send)
                .await
                .map_err(|e| frame_error(e, lang_of(&session)))
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
            let result: Result<(), ApiError> = async {
                state
                    .db
                    .conversation(&session.id, &conversation_id)
                    .await?
                    .ok_or(ErrorCode::NotFound)?;
                let stopped_here = state
                    .realtime
                    .generations
                    .send(Cancel {
                        conversation_id: conversation_id.clone(),
                    })
                    .await
                    .unwrap_or(false);
                if !stopped_here && state.realtime.relay.is_some() {
                    // It may run on another instance: ask them all.
                    let event = Event::Cancel { conversation_id };
                    state.realtime.hub.do_send(Publish {
                        user: session.id.clone(),
                        event,
                        remote: true,
                    });
                }
                Ok(())
            }
            .await;
            result.map_err(|e| frame_error(e, lang_of(&session)))
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
            result.map_err(|e| frame_error(e, lang_of(&session)))
        })
    }

    fn error(&self, session: Option<&SessionUser>, code: &str) -> FrameError {
        let lang = session.map(lang_of).unwrap_or_default();
        let code = ErrorCode::ALL
            .iter()
            .copied()
            .find(|c| c.as_str() == code)
            .unwrap_or(ErrorCode::ValidationError);
        frame_error(code.into(), lang)
    }
}
