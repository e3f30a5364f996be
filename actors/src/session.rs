//! The session actor: one per websocket (browser tab).
//!
//! It authenticates the socket (a token at the upgrade, or an `auth` frame within
//! `auth_timeout`), joins the user in the hub, reads the tab's frames and answers them.
//! What the tab is sent goes through its queue ([`crate::tab`]), which the socket's
//! response body drains; the hub of the user's shard pings the tab, closes it when idle
//! or stuck, and asks the session to check its token again, so a session has no timers.
//!
//! Abuse limits (docs/protocol.md): frames a second and requests in flight per socket
//! (past either: close 1008), and the token is checked again every `token_recheck` and
//! before every send, so a revoked or expired token ends the tab even if the revoke
//! event never arrived.

use std::any::Any;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::prelude::*;
use actix_http::ws::{CloseCode, CloseReason, ProtocolError};
use actix_web::web;
use chat_contract::frames::{
    ChatRegenerate, ChatSend, ClientFrame, ServerFrame, Snapshot, MAX_CLIENT_ID_CHARS,
};
use futures_util::future::BoxFuture;

use crate::frames::{Frames, Incoming};
use crate::hub::{Connect, Disconnect, Hubs};
use crate::messages::SessionConfig;
use crate::metrics;
use crate::tab::{close_reason, policy, Control, Outgoing, TabBody, TabSink};

/// The largest message a tab may send (fragments joined), as the largest a user may
/// write with room for the frame around it.
pub const MAX_MESSAGE_BYTES: usize = 256 * 1024;

#[derive(Debug, Clone)]
pub struct SessionUser {
    pub id: String,
    /// For the texts of errors before the server looks the user up again.
    pub language: chat_contract::states::Language,
}

/// An error for the tab, already in the user's language.
#[derive(Debug, Clone)]
pub struct FrameError {
    pub code: String,
    pub message: String,
    pub field: Option<String>,
}

impl FrameError {
    /// The `error` frame that carries it (`client_id`: the request it answers, if any).
    pub fn into_frame(self, client_id: Option<String>) -> ServerFrame {
        ServerFrame::Error {
            client_id,
            code: self.code,
            message: self.message,
            field: self.field,
        }
    }
}

/// What sessions need from the server: authentication, and the chat itself.
pub trait ChatService: Send + Sync + 'static {
    /// `Ok(None)` for a bad, expired or revoked token; `Err` when it cannot be checked
    /// now (the tab should retry, not log out).
    fn authenticate(&self, token: &str) -> BoxFuture<'static, Result<Option<SessionUser>, FrameError>>;
    /// The `ready` frame: who the user is and their usage.
    fn ready(&self, user: &SessionUser) -> BoxFuture<'static, Result<ServerFrame, FrameError>>;
    /// Handles a `chat.send` of the tab holding `token`; `Ok(false)` when the token no
    /// longer works (checked with the send itself, so a revoke that never reached this
    /// tab still stops it).
    fn send(
        &self,
        user: &SessionUser,
        token: &str,
        send: ChatSend,
    ) -> BoxFuture<'static, Result<bool, FrameError>>;
    /// Handles a `chat.regenerate`, like [`ChatService::send`].
    fn regenerate(
        &self,
        user: &SessionUser,
        token: &str,
        frame: ChatRegenerate,
    ) -> BoxFuture<'static, Result<bool, FrameError>>;
    fn cancel(
        &self,
        user: &SessionUser,
        conversation_id: String,
    ) -> BoxFuture<'static, Result<(), FrameError>>;
    /// Handles a `conversation.select`: every tab learns the new current message.
    fn select(
        &self,
        user: &SessionUser,
        conversation_id: String,
        message_id: String,
    ) -> BoxFuture<'static, Result<(), FrameError>>;
    /// The running answer of a conversation of the user's, if any.
    fn snapshot(
        &self,
        user: &SessionUser,
        conversation_id: String,
    ) -> BoxFuture<'static, Result<Option<Snapshot>, FrameError>>;
    /// The text of an error code in the user's language (or the socket's, before auth).
    fn error(&self, user: Option<&SessionUser>, code: &str) -> FrameError;
}

static NEXT_SESSION: AtomicU64 = AtomicU64::new(1);

pub struct WsSession {
    id: u64,
    user: Option<SessionUser>,
    /// The token the socket authenticated with (or the upgrade carried, until checked):
    /// checked again periodically and before every send.
    token: Option<String>,
    hubs: Hubs,
    service: Arc<dyn ChatService>,
    config: Arc<SessionConfig>,
    tab: TabSink,
    /// Frames received in the current one-second window, and when it began.
    window_start: Instant,
    window_frames: u32,
    /// Requests spawned and not yet answered.
    in_flight: usize,
}

impl WsSession {
    /// Starts the actor for an upgraded socket whose request payload is `payload`;
    /// `token` is the one the upgrade carried. Answers the socket's response body, which
    /// holds `held` (whatever the server keeps while the socket is open) until the
    /// HTTP layer drops it.
    pub fn start(
        payload: web::Payload,
        token: Option<String>,
        hubs: Hubs,
        service: Arc<dyn ChatService>,
        config: Arc<SessionConfig>,
        held: Box<dyn Any + Send>,
    ) -> TabBody {
        let incoming = Frames::new(payload, MAX_MESSAGE_BYTES);
        let mut body = None;
        WsSession::create(|ctx| {
            ctx.add_stream(incoming);
            // Weak: the tab (held by the hub and the connection) must not keep the
            // session alive.
            let session = ctx.address().downgrade();
            let tab = TabSink::new(
                config.clone(),
                Box::new(move |control| {
                    if let Some(session) = session.upgrade() {
                        session.do_send(control);
                    }
                }),
            );
            body = Some(tab.body(held));
            WsSession {
                id: NEXT_SESSION.fetch_add(1, Ordering::Relaxed),
                user: None,
                token,
                hubs,
                service,
                config,
                tab,
                window_start: Instant::now(),
                window_frames: 0,
                in_flight: 0,
            }
        });
        body.expect("the session made its tab")
    }

    fn send_frame(&mut self, frame: &ServerFrame) {
        self.push(Outgoing::Text(frame.to_text().into()));
    }

    /// Queues the session's own frame (a reply, a pong), past the snapshot gate.
    fn push(&mut self, out: Outgoing) {
        self.tab.push(out);
    }

    fn is_revoked(&self) -> bool {
        self.tab.is_revoked()
    }

    /// Closes now, ahead of anything queued.
    fn close_with(&mut self, reason: CloseReason, ctx: &mut Context<Self>) {
        self.tab.close(Some(reason));
        ctx.stop();
    }

    fn send_error(&mut self, client_id: Option<String>, error: FrameError) {
        self.send_frame(&error.into_frame(client_id));
    }

    fn authenticate(&mut self, token: String, ctx: &mut Context<Self>) {
        let service = self.service.clone();
        self.token = Some(token.clone());
        ctx.wait(
            async move { service.authenticate(&token).await }
                .into_actor(self)
                .map(|user, act, ctx| {
                    match user {
                        Ok(Some(user)) => act.joined(user, ctx),
                        Ok(None) => {
                            act.close_with(policy("unauthorized: token missing, expired or revoked"), ctx)
                        }
                        // Not the tab's fault: it should come back, still logged in.
                        Err(_) => {
                            act.close_with(close_reason(CloseCode::Error, "server error: try again"), ctx)
                        }
                    }
                }),
        );
    }

    fn joined(&mut self, user: SessionUser, ctx: &mut Context<Self>) {
        // The user's frames wait until `ready` is out: it is the tab's first frame, even
        // when an answer is streaming to the user's other tabs as this one joins.
        self.tab.opening();
        let connect = self.hubs.of(&user.id).send(Connect {
            user: user.id.clone(),
            session: self.id,
            sink: self.tab.clone(),
        });
        let service = self.service.clone();
        ctx.wait(connect.into_actor(self).map(move |joined, act, ctx| {
            if !matches!(joined, Ok(true)) {
                let error = act.service.error(Some(&user), "too_many_tabs");
                act.tab.revoke(&error.into_frame(None), "too many tabs");
                return;
            }
            let for_ready = user.clone();
            act.user = Some(user);
            ctx.wait(
                async move { service.ready(&for_ready).await }
                    .into_actor(act)
                    .map(|ready, act, _| {
                        let frame = ready.unwrap_or_else(|e| e.into_frame(None));
                        act.tab.caught_up(&[frame], None);
                    }),
            );
        }));
    }

    /// Checks the token again; a token that no longer works ends the session.
    fn recheck_token(&mut self, ctx: &mut Context<Self>) {
        let (Some(token), Some(_)) = (self.token.clone(), &self.user) else {
            return;
        };
        if self.is_revoked() {
            return;
        }
        let service = self.service.clone();
        ctx.spawn(
            async move { service.authenticate(&token).await }
                .into_actor(self)
                .map(|user, act, _| {
                    // A check that cannot be made now (database down) is not a revoke.
                    if let Ok(None) = user {
                        act.revoke();
                    }
                }),
        );
    }

    /// Tells the tab its session ended, then closes once that frame is written.
    fn revoke(&mut self) {
        let frame = ServerFrame::SessionRevoked {
            reason: "token_invalid".into(),
        };
        self.tab.revoke(&frame, "session revoked");
    }

    /// Counts a frame from the tab; `false` once it sent more this second than allowed.
    fn within_frame_rate(&mut self) -> bool {
        let now = Instant::now();
        if now.duration_since(self.window_start) >= Duration::from_secs(1) {
            self.window_start = now;
            self.window_frames = 0;
        }
        self.window_frames = self.window_frames.saturating_add(1);
        self.window_frames <= self.config.max_frames_per_sec
    }

    /// Takes a slot for a request; past the cap the socket is closed.
    fn start_request(&mut self, ctx: &mut Context<Self>) -> bool {
        if self.in_flight >= self.config.max_in_flight {
            tracing::info!(
                session = self.id,
                "closing a session with too many requests in flight"
            );
            self.close_with(policy("too many requests in flight"), ctx);
            return false;
        }
        self.in_flight += 1;
        true
    }

    fn on_frame(&mut self, frame: ClientFrame, ctx: &mut Context<Self>) {
        if self.is_revoked() {
            return;
        }
        let Some(user) = self.user.clone() else {
            match frame {
                ClientFrame::Auth { token } => self.authenticate(token, ctx),
                _ => self.close_with(policy("unauthorized: send an auth frame first"), ctx),
            }
            return;
        };
        let service = self.service.clone();
        match frame {
            ClientFrame::Auth { .. } => {}
            ClientFrame::Ping => self.send_frame(&ServerFrame::Pong),
            ClientFrame::ChatSend(send) => {
                if !self.client_id_ok(&user, &send.client_id) || !self.start_request(ctx) {
                    return;
                }
                let (client_id, token) = (send.client_id.clone(), self.token.clone().unwrap_or_default());
                self.answer(client_id, service.send(&user, &token, send), ctx);
            }
            ClientFrame::ChatRegenerate(frame) => {
                if !self.client_id_ok(&user, &frame.client_id) || !self.start_request(ctx) {
                    return;
                }
                let (client_id, token) = (frame.client_id.clone(), self.token.clone().unwrap_or_default());
                self.answer(client_id, service.regenerate(&user, &token, frame), ctx);
            }
            ClientFrame::ConversationSelect {
                conversation_id,
                message_id,
            } => {
                if !self.start_request(ctx) {
                    return;
                }
                ctx.spawn(
                    async move { service.select(&user, conversation_id, message_id).await }
                        .into_actor(self)
                        .map(|result, act, _| {
                            act.in_flight -= 1;
                            if let Err(e) = result {
                                act.send_error(None, e);
                            }
                        }),
                );
            }
            ClientFrame::ChatCancel { conversation_id } => {
                if !self.start_request(ctx) {
                    return;
                }
                ctx.spawn(
                    async move { service.cancel(&user, conversation_id).await }
                        .into_actor(self)
                        .map(|result, act, _| {
                            act.in_flight -= 1;
                            if let Err(e) = result {
                                act.send_error(None, e);
                            }
                        }),
                );
            }
            ClientFrame::ConversationOpen { conversation_id } => {
                if !self.start_request(ctx) {
                    return;
                }
                self.tab.opening();
                let id = conversation_id.clone();
                ctx.spawn(
                    async move { service.snapshot(&user, conversation_id).await }
                        .into_actor(self)
                        .map(move |result, act, _| {
                            act.in_flight -= 1;
                            act.caught_up(id, result)
                        }),
                );
            }
        }
    }

    /// Whether a send's `clientId` can be used: not blank (nothing to match the send's
    /// frames by, and a retry by), not oversized; the error frame is sent if not.
    fn client_id_ok(&mut self, user: &SessionUser, client_id: &str) -> bool {
        let code = if client_id.trim().is_empty() {
            "client_id_required"
        } else if client_id.chars().count() > MAX_CLIENT_ID_CHARS {
            // Not echoed: an oversized id is exactly what must not travel.
            "client_id_too_long"
        } else {
            return true;
        };
        let mut error = self.service.error(Some(user), code);
        error.field = Some("clientId".into());
        self.send_error(None, error);
        false
    }

    /// Waits for a send or regenerate: an error frame names its `clientId`; a token that
    /// no longer works revokes the session.
    fn answer(
        &mut self,
        client_id: String,
        request: BoxFuture<'static, Result<bool, FrameError>>,
        ctx: &mut Context<Self>,
    ) {
        ctx.spawn(request.into_actor(self).map(move |result, act, _| {
            act.in_flight -= 1;
            match result {
                Ok(true) => {}
                Ok(false) => act.revoke(),
                Err(e) => act.send_error(Some(client_id), e),
            }
        }));
    }

    /// Sends the snapshot and the answer to `conversation.open`, then the frames held
    /// back meanwhile (less the deltas the snapshot covers), all under the gate's lock so
    /// no frame of the hub's slips in between.
    fn caught_up(&mut self, conversation_id: String, result: Result<Option<Snapshot>, FrameError>) {
        let mut frames = Vec::with_capacity(2);
        let mut covered = None;
        match result {
            Ok(snapshot) => {
                let streaming = snapshot.is_some();
                if let Some(snap) = snapshot {
                    covered = Some((Arc::<str>::from(snap.message_id.as_str()), snap.seq));
                    frames.push(ServerFrame::MessageSnapshot {
                        conversation_id: snap.conversation_id,
                        message_id: snap.message_id,
                        seq: snap.seq,
                        content: snap.content,
                    });
                }
                frames.push(ServerFrame::ConversationOpened {
                    conversation_id,
                    streaming,
                });
            }
            Err(e) => frames.push(e.into_frame(None)),
        }
        self.tab.caught_up(&frames, covered);
    }
}

impl Actor for WsSession {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        metrics::gauge!(metrics::WEBSOCKETS_OPEN).increment(1);
        match self.token.clone() {
            Some(token) => self.authenticate(token, ctx),
            None => {
                ctx.run_later(self.config.auth_timeout, |act, ctx| {
                    if act.user.is_none() {
                        act.close_with(policy("unauthorized: no auth frame in time"), ctx);
                    }
                });
            }
        }
    }

    fn stopped(&mut self, _: &mut Context<Self>) {
        metrics::gauge!(metrics::WEBSOCKETS_OPEN).decrement(1);
        // Whatever stopped the session, the socket closes (at once if nothing did yet).
        self.tab.close(None);
        if let Some(user) = &self.user {
            self.hubs.of(&user.id).do_send(Disconnect {
                user: user.id.clone(),
                session: self.id,
            });
        }
    }
}

impl Message for Control {
    type Result = ();
}

impl Handler<Control> for WsSession {
    type Result = ();

    fn handle(&mut self, control: Control, ctx: &mut Context<Self>) {
        match control {
            Control::Ended => ctx.stop(),
            Control::Recheck => self.recheck_token(ctx),
        }
    }
}

impl StreamHandler<Result<Incoming, ProtocolError>> for WsSession {
    fn handle(&mut self, msg: Result<Incoming, ProtocolError>, ctx: &mut Context<Self>) {
        self.tab.seen();
        if !matches!(msg, Ok(Incoming::Close(_))) && !self.within_frame_rate() {
            tracing::info!(session = self.id, "closing a session that sends too many frames");
            self.close_with(policy("too many frames"), ctx);
            return;
        }
        match msg {
            Ok(Incoming::Text(text)) => match serde_json::from_str::<ClientFrame>(&text) {
                Ok(frame) => self.on_frame(frame, ctx),
                Err(_) if self.user.is_none() => {
                    self.close_with(policy("unauthorized: send an auth frame first"), ctx)
                }
                Err(_) => {
                    let error = self.service.error(self.user.as_ref(), "invalid_frame");
                    self.send_error(None, error);
                }
            },
            Ok(Incoming::Binary(_)) if self.user.is_none() => {
                self.close_with(policy("unauthorized: send an auth frame first"), ctx)
            }
            Ok(Incoming::Binary(_)) => {
                let error = self.service.error(self.user.as_ref(), "invalid_frame");
                self.send_error(None, error);
            }
            Ok(Incoming::Ping(payload)) => self.push(Outgoing::Pong(payload)),
            Ok(Incoming::Pong(_)) => {}
            Ok(Incoming::Close(_)) => ctx.stop(),
            Err(_) => self.close_with(close_reason(CloseCode::Protocol, "protocol error"), ctx),
        }
    }

    fn finished(&mut self, ctx: &mut Context<Self>) {
        ctx.stop();
    }
}
