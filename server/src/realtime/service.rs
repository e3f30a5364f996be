//! What a session asks of the server, as `chat_actors::session::ChatService`: frames in,
//! the chat's rules (`crate::chat`) applied, errors out in the user's language.

use std::time::Duration;

use actix_web::web;
use chat_actors::session::{ChatService, FrameError, SessionUser};
use chat_contract::frames::{ChatRegenerate, ChatSend, ServerFrame, Snapshot};
use futures_util::future::BoxFuture;
use tracing::Instrument;

use crate::chat::send::{self, Sent};
use crate::chat::tree;
use crate::error::{ApiError, ErrorCode};
use crate::i18n::Lang;
use crate::state::AppState;

pub struct SessionService {
    pub state: web::Data<AppState>,
}

fn frame_error(e: ApiError, lang: Lang) -> FrameError {
    if let ApiError::Internal(cause) = &e {
        crate::outage::log_failure(cause, "chat request failed");
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
/// A span for the work of one frame of a tab, with its user: what a request's span is
/// for REST (`crate::http::trace`).
fn frame_span(kind: &'static str, user: &str) -> tracing::Span {
    tracing::info_span!("frame", kind, user = %user)
}

async fn current_lang(state: &AppState, session: &SessionUser) -> Lang {
    let lookup = tokio::time::timeout(
        LANG_LOOKUP_TIMEOUT,
        state.realtime.accounts.get(&state.db, &*state.clock, &session.id),
    )
    .await;
    let stored = lookup
        .ok()
        .and_then(Result::ok)
        .flatten()
        .map(|a| a.user.language);
    stored.unwrap_or(session.language)
}

impl ChatService for SessionService {
    fn authenticate(&self, token: &str) -> BoxFuture<'static, Result<Option<SessionUser>, FrameError>> {
        let state = self.state.clone();
        let token = token.to_owned();
        Box::pin(async move {
            match state.accounts.authenticate(&token).await {
                Ok(user) => Ok(user.map(|u| SessionUser {
                    id: u.id,
                    language: u.language,
                })),
                // A suspended user's token works no more than a revoked one: the socket
                // closes (at the upgrade, or at its next check).
                Err(e) if e.code() == ErrorCode::AccountSuspended => Ok(None),
                Err(e) => Err(frame_error(e, Lang::default())),
            }
        })
    }

    fn ready(&self, session: &SessionUser) -> BoxFuture<'static, Result<ServerFrame, FrameError>> {
        let state = self.state.clone();
        let session = session.clone();
        let span = frame_span("ready", &session.id);
        Box::pin(
            async move {
                let result: Result<ServerFrame, ApiError> = async {
                    // Loads the account the tab's sends are checked against.
                    let account = state
                        .realtime
                        .accounts
                        .get(&state.db, &*state.clock, &session.id)
                        .await?
                        .ok_or(ErrorCode::Unauthorized)?;
                    let user = &account.user;
                    // Once per connected socket, never per frame.
                    state.accounts.seen(user).await;
                    let usage = state.quotas.usage_on(&user.id, account.plan).await?;
                    Ok(ServerFrame::Ready {
                        user: Box::new(crate::views::user(user)),
                        usage: Box::new(usage),
                    })
                }
                .await;
                match result {
                    Ok(frame) => Ok(frame),
                    Err(e) => Err(frame_error(e, current_lang(&state, &session).await)),
                }
            }
            .instrument(span),
        )
    }

    fn send(
        &self,
        session: &SessionUser,
        token: &str,
        frame: ChatSend,
    ) -> BoxFuture<'static, Result<bool, FrameError>> {
        let state = self.state.clone();
        let (session, token) = (session.clone(), token.to_owned());
        let span = tracing::info_span!("frame", kind = "chat.send", user = %session.id, client_id = %frame.client_id);
        Box::pin(
            async move {
                match send::send(&state.chat, &session.id, &token, frame).await {
                    Ok(sent) => Ok(sent == Sent::Accepted),
                    Err(e) => Err(frame_error(e, current_lang(&state, &session).await)),
                }
            }
            .instrument(span),
        )
    }

    fn regenerate(
        &self,
        session: &SessionUser,
        token: &str,
        frame: ChatRegenerate,
    ) -> BoxFuture<'static, Result<bool, FrameError>> {
        let state = self.state.clone();
        let (session, token) = (session.clone(), token.to_owned());
        let span = tracing::info_span!("frame", kind = "chat.regenerate", user = %session.id, client_id = %frame.client_id);
        Box::pin(
            async move {
                match send::regenerate(&state.chat, &session.id, &token, frame).await {
                    Ok(sent) => Ok(sent == Sent::Accepted),
                    Err(e) => Err(frame_error(e, current_lang(&state, &session).await)),
                }
            }
            .instrument(span),
        )
    }

    fn select(
        &self,
        session: &SessionUser,
        conversation_id: String,
        message_id: String,
    ) -> BoxFuture<'static, Result<(), FrameError>> {
        let state = self.state.clone();
        let session = session.clone();
        let span = frame_span("conversation.select", &session.id);
        Box::pin(
            async move {
                match tree::select(&state.chat, &session.id, &conversation_id, &message_id).await {
                    Ok(()) => Ok(()),
                    Err(e) => Err(frame_error(e, current_lang(&state, &session).await)),
                }
            }
            .instrument(span),
        )
    }

    fn cancel(
        &self,
        session: &SessionUser,
        conversation_id: String,
    ) -> BoxFuture<'static, Result<(), FrameError>> {
        let state = self.state.clone();
        let session = session.clone();
        let span = frame_span("chat.cancel", &session.id);
        Box::pin(
            async move {
                let owned = state.db.conversation(&session.id, &conversation_id).await;
                match owned {
                    Ok(Some(_)) => {
                        crate::chat::cancel_everywhere(&state.chat, &session.id, &conversation_id);
                        Ok(())
                    }
                    Ok(None) => Err(frame_error(
                        ErrorCode::NotFound.into(),
                        current_lang(&state, &session).await,
                    )),
                    Err(e) => Err(frame_error(e.into(), current_lang(&state, &session).await)),
                }
            }
            .instrument(span),
        )
    }

    fn snapshot(
        &self,
        session: &SessionUser,
        conversation_id: String,
    ) -> BoxFuture<'static, Result<Option<Snapshot>, FrameError>> {
        let state = self.state.clone();
        let session = session.clone();
        let span = frame_span("conversation.open", &session.id);
        Box::pin(
            async move {
                let result: Result<Option<Snapshot>, ApiError> = async {
                    state
                        .db
                        .conversation(&session.id, &conversation_id)
                        .await?
                        .ok_or(ErrorCode::NotFound)?;
                    if let Some(snapshot) = state.realtime.generations.snapshot(&conversation_id).await {
                        return Ok(Some(snapshot));
                    }
                    match &state.realtime.relay {
                        Some(relay) => Ok(relay.snapshot(&session.id, &conversation_id).await?),
                        None => Ok(None),
                    }
                }
                .await;
                match result {
                    Ok(snapshot) => Ok(snapshot),
                    Err(e) => Err(frame_error(e, current_lang(&state, &session).await)),
                }
            }
            .instrument(span),
        )
    }

    fn error(&self, session: Option<&SessionUser>, code: &str) -> FrameError {
        let lang = session.map(|s| s.language).unwrap_or_default();
        let code = ErrorCode::ALL
            .iter()
            .copied()
            .find(|c| c.as_str() == code)
            .unwrap_or(ErrorCode::ValidationError);
        frame_error(code.into(), lang)
    }
}
