//! The session actor: one per websocket (browser tab).
//!
//! It authenticates the socket (a token at the upgrade, or an `auth` frame within
//! `auth_timeout`), joins the user in the hub, and writes the frames the hub delivers
//! through a bounded queue: a tab that cannot keep up is closed (it reconnects and
//! resumes) instead of making the server buffer without bound, and so is a tab whose
//! socket accepts no write for `write_timeout`. Heartbeat: a ping every `heartbeat`, and
//! a socket silent for `idle_timeout` is closed.
//!
//! Abuse limits (docs/protocol.md): frames a second and requests in flight per socket
//! (past either: close 1008), and the token is checked again every `token_recheck` and
//! before every send, so a revoked or expired token ends the tab even if the revoke
//! event never arrived.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix::prelude::*;
use actix_web::web::Bytes;
use actix_ws::{AggregatedMessage, AggregatedMessageStream, CloseCode, CloseReason};
use bytestring::ByteString;
use futures_util::future::BoxFuture;
use tokio::sync::{mpsc, oneshot};

use crate::generation::Snapshot;
use crate::hub::{Connect, Deliver, Disconnect, Hubs};
use crate::protocol::{ChatSend, ClientFrame, ServerFrame, MAX_CLIENT_ID_CHARS};

#[derive(Debug, Clone)]
pub struct SessionConfig {
    pub heartbeat: Duration,
    pub idle_timeout: Duration,
    pub auth_timeout: Duration,
    /// Frames that may wait for a slow tab before it is closed.
    pub queue: usize,
    /// How long one write may wait for a tab that does not read before it is closed.
    pub write_timeout: Duration,
    /// Frames a tab may send in one second.
    pub max_frames_per_sec: u32,
    /// `chat.send`, `chat.cancel` and `conversation.open` being handled at once.
    pub max_in_flight: usize,
    /// How often the token of an open socket is checked again.
    pub token_recheck: Duration,
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
    /// Handles a `chat.send` of the tab holding `token`; `Ok(false)` when the token no
    /// longer works (checked with the send itself, so a revoke that never reached this
    /// tab still stops it).
    fn send(
        &self,
        user: &SessionUser,
        token: &str,
        send: ChatSend,
    ) -> BoxFuture<'static, Result<bool, FrameError>>;
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

/// A tab as the hub holds it: the hub puts the user's frames straight into the tab's
/// writer queue, so between a generation and the socket there is that one queue (no
/// mailbox of the hub or the session on the way). A gate holds frames back while the
/// tab catches up from a snapshot, and drops the deltas the snapshot covered.
#[derive(Clone)]
pub struct TabSink {
    shared: Arc<TabShared>,
}

struct TabShared {
    out: mpsc::Sender<Outgoing>,
    gate: Mutex<Gate>,
    /// Tells the session when the tab cannot keep up, so it closes the socket ahead of
    /// the queue.
    on_slow: Box<dyn Fn() + Send + Sync>,
    /// Frames that may wait (queued or held) before the tab is closed as slow.
    queue: usize,
}

#[derive(Default)]
struct Gate {
    /// Snapshots being fetched; while any is, every frame for the tab is held back so
    /// nothing of those conversations overtakes its snapshot.
    opening: usize,
    held: Vec<Deliver>,
    /// Per streaming message, the seq a snapshot covered: older deltas are dropped.
    covered: HashMap<Arc<str>, u64>,
    /// The session was revoked: its last frames are on their way, nothing more is queued.
    revoked: bool,
    /// The tab was too slow or its writer is gone: nothing more is queued.
    closing: bool,
}

/// The frames a [`TabSink`] made by [`TabSink::detached`] received.
pub struct TabFrames(mpsc::Receiver<Outgoing>);

impl TabFrames {
    /// The next text frame (pings and closes are skipped).
    pub async fn next_text(&mut self) -> Option<ByteString> {
        loop {
            match self.0.recv().await? {
                Outgoing::Text(text) => return Some(text),
                _ => continue,
            }
        }
    }
}

impl TabSink {
    /// A tab with no socket: what it gets comes out of the [`TabFrames`] (tests and
    /// tools that watch a user's frames).
    pub fn detached(queue: usize) -> (TabSink, TabFrames) {
        let (out, rx) = mpsc::channel(queue.max(1));
        let sink = TabSink {
            shared: Arc::new(TabShared {
                out,
                gate: Mutex::new(Gate::default()),
                on_slow: Box::new(|| {}),
                queue: queue.max(1),
            }),
        };
        (sink, TabFrames(rx))
    }

    /// A frame of the user's for this tab (from the hub, on the user's shard).
    pub fn deliver(&self, msg: Deliver) {
        let mut gate = self.shared.lock();
        self.shared.pass(&mut gate, msg);
    }
}

impl TabShared {
    fn lock(&self) -> std::sync::MutexGuard<'_, Gate> {
        self.gate.lock().expect("tab gate lock")
    }

    fn pass(&self, gate: &mut Gate, msg: Deliver) {
        if gate.revoked || gate.closing {
            return;
        }
        if gate.opening > 0 {
            // Held frames count against the same budget as queued ones.
            if gate.held.len() >= self.queue {
                self.too_slow(gate);
            } else {
                gate.held.push(msg);
            }
            return;
        }
        if let Some(meta) = &msg.delta {
            if gate
                .covered
                .get(&meta.message_id)
                .is_some_and(|seq| meta.seq <= *seq)
            {
                return;
            }
        }
        let close = msg.close;
        self.queue_out(gate, Outgoing::Text(msg.text));
        if close {
            // Queued behind the frame, so the tab reads why before the socket closes.
            gate.revoked = true;
            self.queue_out(gate, Outgoing::Close(policy("session revoked")));
        }
    }

    /// Queues a frame for the writer, from the hub or the session itself; a full queue
    /// tells the session to close the tab as too slow.
    fn queue_out(&self, gate: &mut Gate, out: Outgoing) {
        if gate.closing {
            return;
        }
        match self.out.try_send(out) {
            Ok(()) => {}
            Err(mpsc::error::TrySendError::Full(_)) => self.too_slow(gate),
            // The writer ended: the session stops by itself (`SocketGone`).
            Err(mpsc::error::TrySendError::Closed(_)) => gate.closing = true,
        }
    }

    fn too_slow(&self, gate: &mut Gate) {
        if !gate.closing {
            gate.closing = true;
            (self.on_slow)();
        }
    }
}

pub struct WsSession {
    id: u64,
    user: Option<SessionUser>,
    /// The token the socket authenticated with (or the upgrade carried, until checked):
    /// checked again periodically and before every send.
    token: Option<String>,
    hubs: Hubs,
    service: Arc<dyn ChatService>,
    config: SessionConfig,
    tab: TabSink,
    /// Closes the socket ahead of anything queued.
    close: Option<oneshot::Sender<CloseReason>>,
    last_seen: Instant,
    /// Frames received in the current one-second window, and when it began.
    window_start: Instant,
    window_frames: u32,
    /// Requests spawned and not yet answered.
    in_flight: usize,
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
        hubs: Hubs,
        service: Arc<dyn ChatService>,
        config: SessionConfig,
    ) -> Addr<WsSession> {
        let (out, out_rx) = mpsc::channel(config.queue.max(1));
        let (close, close_rx) = oneshot::channel();
        WsSession::create(move |ctx| {
            ctx.add_stream(incoming);
            let writer = Writer {
                ws,
                out: out_rx,
                close: close_rx,
                session: ctx.address(),
                timeout: config.write_timeout,
            };
            actix::spawn(writer.run());
            let tab = TabSink {
                shared: Arc::new(TabShared {
                    out,
                    gate: Mutex::new(Gate::default()),
                    on_slow: {
                        let session = ctx.address();
                        Box::new(move || session.do_send(TooSlow))
                    },
                    queue: config.queue.max(1),
                }),
            };
            WsSession {
                id: NEXT_SESSION.fetch_add(1, Ordering::Relaxed),
                user: None,
                token,
                hubs,
                service,
                config,
                tab,
                close: Some(close),
                last_seen: Instant::now(),
                window_start: Instant::now(),
                window_frames: 0,
                in_flight: 0,
            }
        })
    }

    fn send_frame(&mut self, frame: &ServerFrame) {
        self.push(Outgoing::Text(frame.to_text().into()));
    }

    /// Queues the session's own frame (a reply, a ping), past the snapshot gate.
    fn push(&mut self, out: Outgoing) {
        let shared = &self.tab.shared;
        shared.queue_out(&mut shared.lock(), out);
    }

    fn is_revoked(&self) -> bool {
        self.tab.shared.lock().revoked
    }

    fn close_slow(&mut self, ctx: &mut Context<Self>) {
        tracing::info!(session = self.id, "closing a session that cannot keep up");
        self.close_with(
            CloseReason {
                code: CloseCode::Again,
                description: Some("slow consumer: too many frames waiting".into()),
            },
            ctx,
        );
    }

    /// Closes now, ahead of anything queued.
    fn close_with(&mut self, reason: CloseReason, ctx: &mut Context<Self>) {
        if let Some(close) = self.close.take() {
            let _ = close.send(reason);
        }
        ctx.stop();
    }

    fn send_error(&mut self, client_id: Option<String>, error: FrameError) {
        let frame = ServerFrame::Error {
            client_id,
            code: error.code,
            message: error.message,
            field: error.field,
        };
        self.send_frame(&frame);
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
        let connect = self.hubs.of(&user.id).send(Connect {
            user: user.id.clone(),
            session: self.id,
            sink: self.tab.clone(),
        });
        let service = self.service.clone();
        ctx.wait(connect.into_actor(self).map(move |joined, act, ctx| {
            if !matches!(joined, Ok(true)) {
                let error = act.service.error(Some(&user), "too_many_tabs");
                act.send_error(None, error);
                act.push(Outgoing::Close(policy("too many tabs")));
                act.tab.shared.lock().revoked = true;
                return;
            }
            let for_ready = user.clone();
            act.user = Some(user);
            ctx.wait(
                async move { service.ready(&for_ready).await }
                    .into_actor(act)
                    .map(|ready, act, _| match ready {
                        Ok(frame) => act.send_frame(&frame),
                        Err(e) => act.send_error(None, e),
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
        let shared = &self.tab.shared;
        let mut gate = shared.lock();
        if gate.revoked {
            return;
        }
        gate.revoked = true;
        shared.queue_out(&mut gate, Outgoing::Text(frame.to_text().into()));
        shared.queue_out(&mut gate, Outgoing::Close(policy("session revoked")));
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
                if send.client_id.chars().count() > MAX_CLIENT_ID_CHARS {
                    // Not echoed: an oversized id is exactly what must not travel.
                    let mut error = self.service.error(Some(&user), "client_id_too_long");
                    error.field = Some("clientId".into());
                    self.send_error(None, error);
                    return;
                }
                if !self.start_request(ctx) {
                    return;
                }
                let client_id = send.client_id.clone();
                let token = self.token.clone().unwrap_or_default();
                ctx.spawn(
                    service
                        .send(&user, &token, send)
                        .into_actor(self)
                        .map(move |result, act, _| {
                            act.in_flight -= 1;
                            match result {
                                Ok(true) => {}
                                Ok(false) => act.revoke(),
                                Err(e) => act.send_error(Some(client_id), e),
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
                self.tab.shared.lock().opening += 1;
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
            Err(e) => frames.push(ServerFrame::Error {
                client_id: None,
                code: e.code,
                message: e.message,
                field: e.field,
            }),
        }
        let shared = &self.tab.shared;
        let mut gate = shared.lock();
        gate.opening -= 1;
        if let Some((message_id, seq)) = covered {
            // Messages that finished long ago need no entry.
            if gate.covered.len() > 256 {
                gate.covered.clear();
            }
            gate.covered.insert(message_id, seq);
        }
        for frame in &frames {
            shared.queue_out(&mut gate, Outgoing::Text(frame.to_text().into()));
        }
        if gate.opening == 0 {
            for deliver in std::mem::take(&mut gate.held) {
                shared.pass(&mut gate, deliver);
            }
        }
    }
}

impl Actor for WsSession {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
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
                act.push(Outgoing::Ping);
            }
        });
        ctx.run_interval(self.config.token_recheck, |act, ctx| act.recheck_token(ctx));
    }

    fn stopped(&mut self, _: &mut Context<Self>) {
        if let Some(user) = &self.user {
            self.hubs.of(&user.id).do_send(Disconnect {
                user: user.id.clone(),
                session: self.id,
            });
        }
    }
}

/// The hub found the tab too slow.
#[derive(Message)]
#[rtype(result = "()")]
struct TooSlow;

impl Handler<TooSlow> for WsSession {
    type Result = ();

    fn handle(&mut self, _: TooSlow, ctx: &mut Context<Self>) {
        self.close_slow(ctx);
    }
}

impl StreamHandler<Result<AggregatedMessage, actix_ws::ProtocolError>> for WsSession {
    fn handle(&mut self, msg: Result<AggregatedMessage, actix_ws::ProtocolError>, ctx: &mut Context<Self>) {
        self.last_seen = Instant::now();
        if !matches!(msg, Ok(AggregatedMessage::Close(_))) && !self.within_frame_rate() {
            tracing::info!(session = self.id, "closing a session that sends too many frames");
            self.close_with(policy("too many frames"), ctx);
            return;
        }
        match msg {
            Ok(AggregatedMessage::Text(text)) => match serde_json::from_str::<ClientFrame>(&text) {
                Ok(frame) => self.on_frame(frame, ctx),
                Err(_) if self.user.is_none() => {
                    self.close_with(policy("unauthorized: send an auth frame first"), ctx)
                }
                Err(_) => {
                    let error = self.service.error(self.user.as_ref(), "invalid_frame");
                    self.send_error(None, error);
                }
            },
            Ok(AggregatedMessage::Binary(_)) if self.user.is_none() => {
                self.close_with(policy("unauthorized: send an auth frame first"), ctx)
            }
            Ok(AggregatedMessage::Binary(_)) => {
                let error = self.service.error(self.user.as_ref(), "invalid_frame");
                self.send_error(None, error);
            }
            Ok(AggregatedMessage::Ping(payload)) => self.push(Outgoing::Pong(payload)),
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

/// Writes queued frames to the socket. A close request jumps the queue, even past a
/// write that is stuck because the tab stopped reading; a write stuck for `timeout`
/// closes the tab as slow. (The connection under a tab that reads nothing at all is
/// ended by the kernel: the server sets `TCP_USER_TIMEOUT` on accepted sockets.)
struct Writer {
    ws: actix_ws::Session,
    out: mpsc::Receiver<Outgoing>,
    close: oneshot::Receiver<CloseReason>,
    session: Addr<WsSession>,
    timeout: Duration,
}

/// Why the writer stopped: a close to send (none: the session ended without a reason),
/// or `Err` when the connection is already gone.
type End = Result<Option<CloseReason>, actix_ws::Closed>;

impl Writer {
    async fn run(mut self) {
        let end = self.write_all().await;
        let Writer {
            ws, session, timeout, ..
        } = self;
        if let Ok(reason) = end {
            // Bounded: the close frame waits behind what the HTTP layer holds for the tab.
            let _ = tokio::time::timeout(timeout, ws.close(reason)).await;
        }
        session.do_send(SocketGone);
    }

    async fn write_all(&mut self) -> End {
        loop {
            let next = tokio::select! {
                biased;
                reason = &mut self.close => return Ok(reason.ok()),
                next = self.out.recv() => next,
            };
            let frame = match next {
                None => return Ok(None),
                Some(Outgoing::Close(reason)) => return Ok(Some(reason)),
                Some(frame) => frame,
            };
            let ws = &mut self.ws;
            let write = async move {
                match frame {
                    Outgoing::Text(text) => ws.text(text).await,
                    Outgoing::Ping => ws.ping(b"").await,
                    Outgoing::Pong(payload) => ws.pong(&payload).await,
                    Outgoing::Close(_) => Ok(()),
                }
            };
            let written = tokio::select! {
                biased;
                reason = &mut self.close => return Ok(reason.ok()),
                written = tokio::time::timeout(self.timeout, write) => written,
            };
            match written {
                Ok(Ok(())) => {}
                Ok(Err(closed)) => return Err(closed),
                Err(_) => {
                    tracing::info!("closing a session whose socket takes no writes");
                    return Ok(Some(CloseReason {
                        code: CloseCode::Again,
                        description: Some("slow consumer: the socket takes no writes".into()),
                    }));
                }
            }
        }
    }
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
