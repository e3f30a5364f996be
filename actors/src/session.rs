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
use actix_ws::{CloseCode, CloseReason};
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
    /// For the texts of errors (`en-US` or `hu-HU`).
    pub language: String,
}

/// An error for the tab, already in the user's language.
#[derive(Debug, Clone)]
pub struct FrameError {
    pub code: String,
    pub message: String,
}

/// What sessions need from the server: authentication, and the chat itself.
pub trait ChatService: Send + Sync + 'static {
    fn authenticate(&self, token: &str) -> BoxFuture<'static, Option<SessionUser>>;
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
    /// Deltas held back while a snapshot of their conversation is being fetched.
    waiting: HashMap<String, Vec<Deliver>>,
    /// Per streaming message, the seq a snapshot covered: older deltas are dropped.
    covered: HashMap<Arc<str>, u64>,
}

impl WsSession {
    /// Starts the actor for an upgraded socket; `token` is the one the upgrade carried.
    pub fn start(
        ws: actix_ws::Session,
        incoming: actix_ws::MessageStream,
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
                waiting: HashMap::new(),
                covered: HashMap::new(),
            }
        })
    }

    fn send_frame(&mut self, frame: &ServerFrame, ctx: &mut Context<Self>) {
        self.queue(frame.to_text().into(), ctx);
    }

    fn queue(&mut self, text: ByteString, ctx: &mut Context<Self>) {
        match self.out.try_send(Outgoing::Text(text)) {
            Ok(()) => {}
            Err(mpsc::error::TrySendError::Full(_)) => {
                tracing::info!(session = self.id, "closing a session that cannot keep up");
                self.close_with(CloseCode::Again, "slow consumer: too many frames waiting", ctx);
            }
            Err(mpsc::error::TrySendError::Closed(_)) => ctx.stop(),
        }
    }

    fn close_with(&mut self, code: CloseCode, description: &str, ctx: &mut Context<Self>) {
        if let Some(close) = self.close.take() {
            let _ = close.send(CloseReason {
                code,
                description: Some(description.to_owned()),
            });
        }
        ctx.stop();
    }

    fn send_error(&mut self, client_id: Option<String>, error: FrameError, ctx: &mut Context<Self>) {
        self.send_frame(
            &ServerFrame::Error {
                client_id,
                code: error.code,
                message: error.message,
            },
            ctx,
        );
    }

    fn authenticate(&mut self, token: String, ctx: &mut Context<Self>) {
        let service = self.service.clone();
        ctx.wait(
            async move { service.authenticate(&token).await }
                .into_actor(self)
                .map(|user, act, ctx| match user {
                    Some(user) => act.joined(user, ctx),
                    None => act.close_with(
                        CloseCode::Policy,
                        "unauthorized: token missing, expired or revoked",
                        ctx,
                    ),
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
                _ => self.close_with(CloseCode::Policy, "unauthorized: send an auth frame first", ctx),
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
                self.waiting.entry(conversation_id.clone()).or_default();
                let key = conversation_id.clone();
                ctx.spawn(
                    async move { service.snapshot(&user, conversation_id).await }
                        .into_actor(self)
                        .map(move |result, act, ctx| act.caught_up(&key, result, ctx)),
                );
            }
        }
    }

    /// Sends the snapshot, then the deltas held back meanwhile that it does not cover.
    fn caught_up(
        &mut self,
        conversation_id: &str,
        result: Result<Option<Snapshot>, FrameError>,
        ctx: &mut Context<Self>,
    ) {
        let held = self.waiting.remove(conversation_id).unwrap_or_default();
        match result {
            Ok(Some(snap)) => {
                if self.covered.len() > 64 {
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
            Ok(None) => {}
            Err(e) => self.send_error(None, e, ctx),
        }
        for deliver in held {
            self.deliver(deliver, ctx);
        }
    }

    fn deliver(&mut self, msg: Deliver, ctx: &mut Context<Self>) {
        if let Some(meta) = &msg.delta {
            if let Some(held) = self.waiting.get_mut(&*meta.conversation_id) {
                held.push(msg);
                return;
            }
            if self
                .covered
                .get(&meta.message_id)
                .is_some_and(|seq| meta.seq <= *seq)
            {
                return;
            }
        }
        let close = msg.close;
        self.queue(msg.text, ctx);
        if close {
            // Let the frame go out first.
            ctx.run_later(Duration::from_millis(50), |act, ctx| {
                act.close_with(CloseCode::Policy, "session revoked", ctx);
            });
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
                        act.close_with(CloseCode::Policy, "unauthorized: no auth frame in time", ctx);
                    }
                });
            }
        }
        ctx.run_interval(self.config.heartbeat, |act, ctx| {
            if act.last_seen.elapsed() > act.config.idle_timeout {
                act.close_with(CloseCode::Away, "idle timeout", ctx);
            } else if act.out.try_send(Outgoing::Ping).is_err() {
                act.close_with(CloseCode::Again, "slow consumer: too many frames waiting", ctx);
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

impl StreamHandler<Result<actix_ws::Message, actix_ws::ProtocolError>> for WsSession {
    fn handle(&mut self, msg: Result<actix_ws::Message, actix_ws::ProtocolError>, ctx: &mut Context<Self>) {
        self.last_seen = Instant::now();
        match msg {
            Ok(actix_ws::Message::Text(text)) => match serde_json::from_str::<ClientFrame>(&text) {
                Ok(frame) => self.on_frame(frame, ctx),
                Err(_) if self.user.is_none() => {
                    self.close_with(CloseCode::Policy, "unauthorized: send an auth frame first", ctx)
                }
                Err(_) => {
                    let error = self.service.error(self.user.as_ref(), "invalid_frame");
                    self.send_error(None, error, ctx);
                }
            },
            Ok(actix_ws::Message::Close(_)) => ctx.stop(),
            Ok(actix_ws::Message::Binary(_)) => {
                let error = self.service.error(self.user.as_ref(), "invalid_frame");
                self.send_error(None, error, ctx);
            }
            // Pings are answered by the writer's peer handling; pongs only prove life.
            Ok(_) => {}
            Err(_) => self.close_with(CloseCode::Protocol, "protocol error", ctx),
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
