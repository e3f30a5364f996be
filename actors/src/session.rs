//! The session actor: one per websocket (browser tab).
//!
//! It authenticates the socket (a token at the upgrade, or an `auth` frame within
//! `auth_timeout`), joins the user in the hub, and writes the frames the hub delivers
//! through a bounded queue: a tab that cannot keep up is closed (it reconnects and
//! resumes) instead of making the server buffer without bound. Heartbeat: a ping every
//! `heartbeat`, and a socket silent for `idle_timeout` is closed.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::prelude::*;
use actix_web::web::Bytes;
use actix_ws::{AggregatedMessage, AggregatedMessageStream, CloseCode, CloseReason};
use bytestring::ByteString;
use futures_util::future::BoxFuture;
use tokio::sync::{mpsc, oneshot};

use crate::generation::Snapshot;
use crate::hub::{Connect, Deliver, Disconnect, SessionHub};
use crate::protocol::{ChatSend, ClientFrame, ServerFrame};

#[derive(Debug, Clone)]
pub struct SessionConfig {
    pub heartbeat: Duration,
    pub idle_timeout: Duration,
    pub auth_timeout: Duration,
    /// Frames that may wait for a slow tab before it is closed.
    pub queue: usize,
}

#[derive(Debug, Clone)]
pub struct SessionUser {
    pub id: String,
    /// For the texts of errors before the server looks the user up again.
    pub language: String,
}

/// An error for the tab, already in the user's language.
#[derive(Debug, Clone)]
pub struct FrameError {
    pub code: String,
    pub message: String,
    pub field: Option<String>,
}

/// What sessions need from the server: authentication, and the chat itself.
pub trait ChatService: Send + Sync + 'static {
    /// `Ok(None)` for a bad, expired or revoked token; `Err` when it cannot be checked
    /// now (the tab should retry, not log out).
    fn authenticate(&self, token: &str) -> BoxFuture<'static, Result<Option<SessionUser>, FrameError>>;
    /// The `ready` frame: who the user is and their usage.
    fn ready(&self, user: &SessionUser) -> BoxFuture<'static, Result<ServerFrame, FrameError>>;
    fn send(&self, user: &SessionUser, send: ChatSend) -> BoxFuture<'static, Result<(), FrameError>>;
    fn cancel(
        &self,
        user: &SessionUser,
        conversation_id: String,
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

enum Outgoing {
    Text(ByteString),
    Ping,
    Pong(Bytes),
    /// Close after everything queued before it (a revoked session).
    Close(CloseReason),
}

pub struct WsSession {
    id: u64,
    user: Option<SessionUser>,
    /// Set when the upgrade carried a token; checked before anything else.
    token: Option<String>,
    hub: Addr<SessionHub>,
    service: Arc<dyn ChatService>,
    config: SessionConfig,
    out: mpsc::Sender<Outgoing>,
    /// Closes the socket ahead of anything queued.
    close: Option<oneshot::Sender<CloseReason>>,
    last_seen: Instant,
    /// Snapshots being fetched; while any is, every frame for the tab is held back so
    /// nothing of those conversations overtakes its snapshot.
    opening: usize,
    held: Vec<Deliver>,
    /// Per streaming message, the seq a snapshot covered: older deltas are dropped.
    covered: HashMap<Arc<str>, u64>,
}

fn policy(description: &str) -> CloseReason {
    CloseReason {
        code: CloseCode::Policy,
        description: Some(description.to_owned()),
    }
}

impl WsSession {
    /// Starts the actor for an upgraded socket; `token` is the one the upgrade carried.
    pub fn start(
        ws: actix_ws::Session,
        incoming: AggregatedMessageStream,
        token: Option<String>,
        hub: Addr<SessionHub>,
        service: Arc<dyn ChatService>,
        config: SessionConfig,
    ) -> Addr<WsSession> {
        let (out, out_rx) = mpsc::channel(config.queue.max(1));
        let (close, close_rx) = oneshot::channel();
        WsSession::create(move |ctx| {
            ctx.add_stream(incoming);
            let addr = ctx.address();
            actix::spawn(write_loop(ws, out_rx, close_rx, addr));
            WsSession {
                id: NEXT_SESSION.fetch_add(1, Ordering::Relaxed),
                user: None,
                token,
                hub,
                service,
                config,
                out,
                close: Some(close),
                last_seen: Instant::now(),
                opening: 0,
                held: Vec::new(),
                covered: HashMap::new(),
            }
        })
    }

    fn send_frame(&mut self, frame: &ServerFrame, ctx: &mut Context<Self>) {
        self.push(Outgoing::Text(frame.to_text().into()), ctx);
    }

    fn push(&mut self, out: Outgoing, ctx: &mut Context<Self>) {
        match self.out.try_send(out) {
            Ok(()) => {}
            Err(mpsc::error::TrySendError::Full(_)) => {
                tracing::info!(session = self.id, "closing a session that cannot keep up");
                self.close_with(
                    CloseReason {
                        code: CloseCode::Again,
                        description: Some("slow consumer: too many frames waiting".into()),
                    },
                    ctx,
                );
            }
            Err(mpsc::error::TrySendError::Closed(_)) => ctx.stop(),
        }
    }

    /// Closes now, ahead of anything queued.
    fn close_with(&mut self, reason: CloseReason, ctx: &mut Context<Self>) {
        if let Some(close) = self.close.take() {
            let _ = close.send(reason);
        }
        ctx.stop();
    }

    fn send_error(&mut self, client_id: Option<String>, error: FrameError, ctx: &mut Context<Self>) {
        let frame = ServerFrame::Error {
            client_id,
            code: error.code,
            message: error.message,
            field: error.field,
        };
        self.send_frame(&frame, ctx);
    }

    fn authenticate(&mut self, token: String, ctx: &mut Context<Self>) {
        let service = self.service.clone();
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
                        Err(_) => act.close_with(
                            CloseReason {
                                code: CloseCode::Error,
                                description: Some("server error: try again".into()),
                            },
                            ctx,
                        ),
                    }
                }),
        );
    }

    fn joined(&mut self, user: SessionUser, ctx: &mut Context<Self>) {
        self.hub.do_send(Connect {
            user: user.id.clone(),
            session: self.id,
            addr: ctx.address().recipient(),
        });
        let service = self.service.clone();
        let for_ready = user.clone();
        self.user = Some(user);
        ctx.wait(
            async move { service.ready(&for_ready).await }
                .into_actor(self)
                .map(|ready, act, ctx| match ready {
                    Ok(frame) => act.send_frame(&frame, ctx),
                    Err(e) => act.send_error(None, e, ctx),
                }),
        );
    }

    fn on_frame(&mut self, frame: ClientFrame, ctx: &mut Context<Self>) {
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
            ClientFrame::Ping => self.send_frame(&ServerFrame::Pong, ctx),
            ClientFrame::ChatSend(send) => {
                let client_id = send.client_id.clone();
                ctx.spawn(
                    async move { service.send(&user, send).await }
                        .into_actor(self)
                        .map(move |result, act, ctx| {
                            if let Err(e) = result {
                                act.send_error(Some(client_id), e, ctx);
                            }
                        }),
                );
            }
            ClientFrame::ChatCancel { conversation_id } => {
                ctx.spawn(
                    async move { service.cancel(&user, conversation_id).await }
                        .into_actor(self)
                        .map(|result, act, ctx| {
                            if let Err(e) = result {
                                act.send_error(None, e, ctx);
                            }
                        }),
                );
            }
            ClientFrame::ConversationOpen { conversation_id } => {
                self.opening += 1;
                let id = conversation_id.clone();
                ctx.spawn(
                    async move { service.snapshot(&user, conversation_id).await }
                        .into_actor(self)
                        .map(move |result, act, ctx| act.caught_up(id, result, ctx)),
                );
            }
        }
    }

    /// Sends the snapshot and the answer to `conversation.open`, then the frames held
    /// back meanwhile (less the deltas the snapshot covers).
    fn caught_up(
        &mut self,
        conversation_id: String,
        result: Result<Option<Snapshot>, FrameError>,
        ctx: &mut Context<Self>,
    ) {
        self.opening -= 1;
        match result {
            Ok(snapshot) => {
                let streaming = snapshot.is_some();
                if let Some(snap) = snapshot {
                    // Messages that finished long ago need no entry.
                    if self.covered.len() > 256 {
                        self.covered.clear();
                    }
                    self.covered.insert(snap.message_id.as_str().into(), snap.seq);
                    let frame = ServerFrame::MessageSnapshot {
                        conversation_id: snap.conversation_id,
                        message_id: snap.message_id,
                        seq: snap.seq,
                        content: snap.content,
                    };
                    self.send_frame(&frame, ctx);
                }
                self.send_frame(
                    &ServerFrame::ConversationOpened {
                        conversation_id,
                        streaming,
                    },
                    ctx,
                );
            }
            Err(e) => self.send_error(None, e, ctx),
        }
        if self.opening == 0 {
            for deliver in std::mem::take(&mut self.held) {
                self.deliver(deliver, ctx);
            }
        }
    }

    fn deliver(&mut self, msg: Deliver, ctx: &mut Context<Self>) {
        if self.opening > 0 {
            // Held frames count against the same budget as queued ones.
            if self.held.len() >= self.config.queue {
                let reason = CloseReason {
                    code: CloseCode::Again,
                    description: Some("slow consumer: too many frames waiting".into()),
                };
                self.close_with(reason, ctx);
                return;
            }
            self.held.push(msg);
            return;
        }
        if let Some(meta) = &msg.delta {
            if self
                .covered
                .get(&meta.message_id)
                .is_some_and(|seq| meta.seq <= *seq)
            {
                return;
            }
        }
        let close = msg.close;
        self.push(Outgoing::Text(msg.text), ctx);
        if close {
            // Queued behind the frame, so the tab reads why before the socket closes.
            self.push(Outgoing::Close(policy("session revoked")), ctx);
        }
    }
}

impl Actor for WsSession {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        match self.token.take() {
            Some(token) => self.authenticate(token, ctx),
            None => {
                ctx.run_later(self.config.auth_timeout, |act, ctx| {
                    if act.user.is_none() {
                        act.close_with(policy("unauthorized: no auth frame in time"), ctx);
                    }
                });
            }
        }
        ctx.run_interval(self.config.heartbeat, |act, ctx| {
            if act.last_seen.elapsed() > act.config.idle_timeout {
                act.close_with(
                    CloseReason {
                        code: CloseCode::Away,
                        description: Some("idle timeout".into()),
                    },
                    ctx,
                );
            } else {
                act.push(Outgoing::Ping, ctx);
            }
        });
    }

    fn stopped(&mut self, _: &mut Context<Self>) {
        if let Some(user) = &self.user {
            self.hub.do_send(Disconnect {
                user: user.id.clone(),
                session: self.id,
            });
        }
    }
}

impl Handler<Deliver> for WsSession {
    type Result = ();

    fn handle(&mut self, msg: Deliver, ctx: &mut Context<Self>) {
        self.deliver(msg, ctx);
    }
}

impl StreamHandler<Result<AggregatedMessage, actix_ws::ProtocolError>> for WsSession {
    fn handle(&mut self, msg: Result<AggregatedMessage, actix_ws::ProtocolError>, ctx: &mut Context<Self>) {
        self.last_seen = Instant::now();
        match msg {
            Ok(AggregatedMessage::Text(text)) => match serde_json::from_str::<ClientFrame>(&text) {
                Ok(frame) => self.on_frame(frame, ctx),
                Err(_) if self.user.is_none() => {
                    self.close_with(policy("unauthorized: send an auth frame first"), ctx)
                }
                Err(_) => {
                    let error = self.service.error(self.user.as_ref(), "invalid_frame");
                    self.send_error(None, error, ctx);
                }
            },
            Ok(AggregatedMessage::Binary(_)) if self.user.is_none() => {
                self.close_with(policy("unauthorized: send an auth frame first"), ctx)
            }
            Ok(AggregatedMessage::Binary(_)) => {
                let error = self.service.error(self.user.as_ref(), "invalid_frame");
                self.send_error(None, error, ctx);
            }
            Ok(AggregatedMessage::Ping(payload)) => self.push(Outgoing::Pong(payload), ctx),
            Ok(AggregatedMessage::Pong(_)) => {}
            Ok(AggregatedMessage::Close(_)) => ctx.stop(),
            Err(_) => self.close_with(
                CloseReason {
                    code: CloseCode::Protocol,
                    description: Some("protocol error".into()),
                },
                ctx,
            ),
        }
    }

    fn finished(&mut self, ctx: &mut Context<Self>) {
        ctx.stop();
    }
}

/// Writes queued frames to the socket; a close request jumps the queue.
async fn write_loop(
    mut ws: actix_ws::Session,
    mut out: mpsc::Receiver<Outgoing>,
    mut close: oneshot::Receiver<CloseReason>,
    session: Addr<WsSession>,
) {
    loop {
        tokio::select! {
            biased;
            reason = &mut close => {
                let _ = ws.close(reason.ok()).await;
                return;
            }
            next = out.recv() => {
                let sent = match next {
                    Some(Outgoing::Text(text)) => ws.text(text).await,
                    Some(Outgoing::Ping) => ws.ping(b"").await,
                    Some(Outgoing::Pong(payload)) => ws.pong(&payload).await,
                    Some(Outgoing::Close(reason)) => {
                        let _ = ws.close(Some(reason)).await;
                        break;
                    }
                    None => {
                        let _ = ws.close(None).await;
                        return;
                    }
                };
                if sent.is_err() {
                    break;
                }
            }
        }
    }
    session.do_send(SocketGone);
}

#[derive(Message)]
#[rtype(result = "()")]
struct SocketGone;

impl Handler<SocketGone> for WsSession {
    type Result = ();

    fn handle(&mut self, _: SocketGone, ctx: &mut Context<Self>) {
        ctx.stop();
    }
}
