//! A tab's outgoing side: the one queue between the user's events and the socket.
//!
//! The hub puts the user's frames straight into the tab's queue ([`TabSink`]); the HTTP
//! layer takes them out as the socket's response body ([`TabBody`]), encoding websocket
//! frames as it goes. There is no writer task and no channel per socket: an idle tab
//! holds an empty queue and the waker of its connection.
//!
//! A gate holds frames back while the tab catches up from a snapshot, and drops the
//! deltas the snapshot covered. A tab whose queue is full, or whose socket has taken
//! nothing for `write_timeout`, is closed as slow (it reconnects and resumes) instead of
//! making the server buffer without bound.
//!
//! Timers: none per tab. The hub of the user's shard sweeps its tabs every
//! [`SWEEP_EVERY`] ([`TabSink::sweep`]): a ping every `heartbeat`, a close after
//! `idle_timeout` of silence or `write_timeout` of stuck writes, and a token recheck
//! every `token_recheck`, each tab on its own schedule from when it joined.

use std::any::Any;
use std::collections::{HashMap, VecDeque};
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use actix_codec::Encoder;
use actix_http::ws::{CloseCode, CloseReason, Codec, Message};
use actix_web::body::{BodySize, MessageBody};
use actix_web::web::{Bytes, BytesMut};
use bytestring::ByteString;
use chat_contract::frames::ServerFrame;

use crate::messages::{Deliver, SessionConfig};

/// How often a hub sweeps its tabs; the configured periods are whole seconds.
pub const SWEEP_EVERY: Duration = Duration::from_secs(1);

/// The most one poll of the body encodes, so one chunk stays a reasonable write.
const CHUNK_BYTES: usize = 64 * 1024;

pub(crate) enum Outgoing {
    Text(ByteString),
    Ping,
    Pong(Bytes),
    /// Close after everything queued before it (a revoked session).
    Close(CloseReason),
}

/// What the tab tells its session.
pub(crate) enum Control {
    /// The tab is closing (too slow, idle, stuck) or its socket is gone: stop.
    Ended,
    /// Time to check the token again.
    Recheck,
}

/// A tab as the hub holds it. Cloning shares the tab.
#[derive(Clone)]
pub struct TabSink {
    shared: Arc<TabShared>,
}

struct TabShared {
    gate: Mutex<Gate>,
    /// Tells the session what the tab or the sweep decided.
    control: Box<dyn Fn(Control) + Send + Sync>,
    config: Arc<SessionConfig>,
}

struct Gate {
    /// Frames waiting for the socket.
    queue: VecDeque<Outgoing>,
    /// Snapshots being fetched; while any is, every frame for the tab is held back so
    /// nothing of those conversations overtakes its snapshot.
    opening: usize,
    held: Vec<Deliver>,
    /// Per streaming message, the seq a snapshot covered: older deltas are dropped.
    covered: HashMap<Arc<str>, u64>,
    /// The session was revoked: its last frames are on their way, nothing more is queued.
    revoked: bool,
    /// The tab is closing or its socket is gone: nothing more is queued.
    closing: bool,
    /// A close that goes out ahead of everything queued; the body ends after it.
    close_now: Option<Option<CloseReason>>,
    /// Since when frames have waited with the socket taking none of them.
    waiting_since: Option<Instant>,
    /// The connection's task, woken when there is something to write.
    waker: Option<Waker>,
    /// When the tab last sent anything (a frame, a pong).
    last_seen: Instant,
    next_ping: Instant,
    next_recheck: Instant,
}

impl TabSink {
    pub(crate) fn new(config: Arc<SessionConfig>, control: Box<dyn Fn(Control) + Send + Sync>) -> TabSink {
        let now = Instant::now();
        TabSink {
            shared: Arc::new(TabShared {
                gate: Mutex::new(Gate {
                    queue: VecDeque::new(),
                    opening: 0,
                    held: Vec::new(),
                    covered: HashMap::new(),
                    revoked: false,
                    closing: false,
                    close_now: None,
                    waiting_since: None,
                    waker: None,
                    last_seen: now,
                    next_ping: now + config.heartbeat,
                    next_recheck: now + config.token_recheck,
                }),
                control,
                config,
            }),
        }
    }

    /// A tab with no socket: what it gets comes out of the [`TabFrames`] (tests and
    /// tools that watch a user's frames).
    pub fn detached(queue: usize) -> (TabSink, TabFrames) {
        let hour = Duration::from_secs(3600);
        let config = SessionConfig {
            heartbeat: hour,
            idle_timeout: hour,
            auth_timeout: hour,
            queue,
            write_timeout: hour,
            max_frames_per_sec: u32::MAX,
            max_in_flight: usize::MAX,
            token_recheck: hour,
        };
        let sink = TabSink::new(Arc::new(config), Box::new(|_| {}));
        (sink.clone(), TabFrames(sink))
    }

    /// The response body that writes this tab's frames to its socket, holding `held`
    /// until it is dropped.
    pub(crate) fn body(&self, held: Box<dyn Any + Send>) -> TabBody {
        TabBody {
            tab: self.clone(),
            codec: Codec::new(),
            done: false,
            _held: held,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Gate> {
        self.shared.gate.lock().expect("tab gate lock")
    }

    /// A frame of the user's for this tab (from the hub, on the user's shard).
    pub fn deliver(&self, msg: Deliver) {
        let mut gate = self.lock();
        self.pass(&mut gate, msg);
    }

    fn pass(&self, gate: &mut Gate, msg: Deliver) {
        if gate.revoked || gate.closing {
            return;
        }
        if gate.opening > 0 {
            // Held frames count against the same budget as queued ones.
            if gate.held.len() >= self.shared.config.queue.max(1) {
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

    /// Queues a frame for the socket, from the hub or the session itself; a full queue
    /// closes the tab as too slow.
    fn queue_out(&self, gate: &mut Gate, out: Outgoing) {
        if gate.closing {
            return;
        }
        if gate.queue.len() >= self.shared.config.queue.max(1) {
            self.too_slow(gate);
            return;
        }
        // Waiting since the first frame the socket has not taken yet.
        gate.waiting_since.get_or_insert_with(Instant::now);
        gate.queue.push_back(out);
        wake(gate);
    }

    fn too_slow(&self, gate: &mut Gate) {
        tracing::info!("closing a session that cannot keep up");
        self.end(
            gate,
            Some(close_reason(
                CloseCode::Again,
                "slow consumer: too many frames waiting",
            )),
        );
    }

    /// Closes the tab now, ahead of anything queued, and tells the session to stop.
    fn end(&self, gate: &mut Gate, reason: Option<CloseReason>) {
        if gate.closing {
            return;
        }
        gate.closing = true;
        gate.close_now = Some(reason);
        gate.queue.clear();
        gate.held.clear();
        wake(gate);
        (self.shared.control)(Control::Ended);
    }

    /// Queues a frame of the session's own (a reply, a pong), past the snapshot gate.
    pub(crate) fn push(&self, out: Outgoing) {
        self.queue_out(&mut self.lock(), out);
    }

    /// Closes the tab now (see [`TabSink::end`]).
    pub(crate) fn close(&self, reason: Option<CloseReason>) {
        self.end(&mut self.lock(), reason);
    }

    pub(crate) fn is_revoked(&self) -> bool {
        self.lock().revoked
    }

    /// Sends `frame` as the tab's last, then closes with `reason` once it is written.
    pub(crate) fn revoke(&self, frame: &ServerFrame, reason: &str) {
        let mut gate = self.lock();
        if gate.revoked {
            return;
        }
        gate.revoked = true;
        self.queue_out(&mut gate, Outgoing::Text(frame.to_text().into()));
        self.queue_out(&mut gate, Outgoing::Close(policy(reason)));
    }

    /// A snapshot (or the `ready` frame) is being made: hold the user's frames back
    /// until it is sent.
    pub(crate) fn opening(&self) {
        self.lock().opening += 1;
    }

    /// Sends the snapshot's frames (the snapshot and the answer to `conversation.open`,
    /// or `ready`), then the frames held back meanwhile, less the deltas a snapshot covers
    /// (`covered`: its message and seq), all under the gate's lock so no frame of the
    /// hub's slips in between.
    pub(crate) fn caught_up(&self, frames: &[ServerFrame], covered: Option<(Arc<str>, u64)>) {
        let mut gate = self.lock();
        gate.opening -= 1;
        if let Some((message_id, seq)) = covered {
            // Messages that finished long ago need no entry.
            if gate.covered.len() > 256 {
                gate.covered.clear();
            }
            gate.covered.insert(message_id, seq);
        }
        for frame in frames {
            self.queue_out(&mut gate, Outgoing::Text(frame.to_text().into()));
        }
        if gate.opening == 0 {
            for deliver in std::mem::take(&mut gate.held) {
                self.pass(&mut gate, deliver);
            }
        }
    }

    /// The tab sent something: it is alive.
    pub(crate) fn seen(&self) {
        self.lock().last_seen = Instant::now();
    }

    /// The hub's periodic look at the tab: a ping when due, a close when the tab has
    /// been silent for `idle_timeout` or its socket has taken nothing for
    /// `write_timeout`, a token recheck when due.
    pub fn sweep(&self, now: Instant) {
        let config = &self.shared.config;
        let mut gate = self.lock();
        if gate.closing {
            return;
        }
        if gate
            .waiting_since
            .is_some_and(|since| now.saturating_duration_since(since) >= config.write_timeout)
        {
            tracing::info!("closing a session whose socket takes no writes");
            self.end(
                &mut gate,
                Some(close_reason(
                    CloseCode::Again,
                    "slow consumer: the socket takes no writes",
                )),
            );
            return;
        }
        if now.saturating_duration_since(gate.last_seen) >= config.idle_timeout {
            self.end(&mut gate, Some(close_reason(CloseCode::Away, "idle timeout")));
            return;
        }
        if now >= gate.next_ping {
            gate.next_ping = now + config.heartbeat;
            self.queue_out(&mut gate, Outgoing::Ping);
        }
        if now >= gate.next_recheck && !gate.revoked {
            gate.next_recheck = now + config.token_recheck;
            (self.shared.control)(Control::Recheck);
        }
    }
}

fn wake(gate: &mut Gate) {
    if let Some(waker) = gate.waker.take() {
        waker.wake();
    }
}

/// A close with its code and the reason the tab is shown.
pub(crate) fn close_reason(code: CloseCode, description: &str) -> CloseReason {
    CloseReason {
        code,
        description: Some(description.to_owned()),
    }
}

/// A close for breaking a rule (1008).
pub(crate) fn policy(description: &str) -> CloseReason {
    close_reason(CloseCode::Policy, description)
}

/// The socket's response body: the tab's queue, encoded as websocket frames. Dropped
/// by the HTTP layer when the connection ends, which ends the session.
pub struct TabBody {
    tab: TabSink,
    codec: Codec,
    done: bool,
    /// What the server keeps for as long as the socket is open (its place in the count
    /// of sockets per address): dropped with the body, since only then are the
    /// connection and its buffers really gone. Held here, so the HTTP layer polls this
    /// body itself rather than through a wrapper of the server's.
    _held: Box<dyn Any + Send>,
}

impl MessageBody for TabBody {
    type Error = actix_http::ws::ProtocolError;

    fn size(&self) -> BodySize {
        BodySize::Stream
    }

    /// The close that jumps the queue, or what is queued (up to [`CHUNK_BYTES`] of it),
    /// encoded; the connection's task is woken when more comes.
    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Bytes, Self::Error>>> {
        let TabBody { tab, codec, done, .. } = self.get_mut();
        if *done {
            return Poll::Ready(None);
        }
        let mut gate = tab.lock();
        let mut buf = BytesMut::new();
        if let Some(reason) = gate.close_now.take() {
            *done = true;
            codec.encode(Message::Close(reason.map(short_reason)), &mut buf)?;
            return Poll::Ready(Some(Ok(buf.freeze())));
        }
        while buf.len() < CHUNK_BYTES {
            let Some(out) = gate.queue.pop_front() else {
                break;
            };
            let message = match out {
                Outgoing::Text(text) => Message::Text(text),
                Outgoing::Ping => Message::Ping(Bytes::new()),
                Outgoing::Pong(payload) => Message::Pong(payload),
                Outgoing::Close(reason) => {
                    *done = true;
                    gate.closing = true;
                    Message::Close(Some(short_reason(reason)))
                }
            };
            codec.encode(message, &mut buf)?;
            if *done {
                break;
            }
        }
        // The socket took frames: what is left has waited only from now.
        gate.waiting_since = (!gate.queue.is_empty()).then(Instant::now);
        if buf.is_empty() {
            if !gate.waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                gate.waker = Some(cx.waker().clone());
            }
            return Poll::Pending;
        }
        Poll::Ready(Some(Ok(buf.freeze())))
    }
}

impl Drop for TabBody {
    fn drop(&mut self) {
        let mut gate = self.tab.lock();
        gate.closing = true;
        gate.queue.clear();
        gate.held.clear();
        gate.waker = None;
        drop(gate);
        (self.tab.shared.control)(Control::Ended);
    }
}

/// A close reason fits a control frame (125 bytes, 2 of them the code); browsers reject
/// longer ones.
fn short_reason(mut reason: CloseReason) -> CloseReason {
    if let Some(description) = reason.description.as_mut() {
        let mut end = description.len().min(123);
        while !description.is_char_boundary(end) {
            end -= 1;
        }
        description.truncate(end);
    }
    reason
}

/// The frames a [`TabSink`] made by [`TabSink::detached`] received.
pub struct TabFrames(TabSink);

impl TabFrames {
    /// The next text frame (pings and closes are skipped).
    pub async fn next_text(&mut self) -> Option<ByteString> {
        std::future::poll_fn(|cx| {
            let mut gate = self.0.lock();
            while let Some(out) = gate.queue.pop_front() {
                if let Outgoing::Text(text) = out {
                    return Poll::Ready(Some(text));
                }
            }
            if gate.closing {
                return Poll::Ready(None);
            }
            gate.waker = Some(cx.waker().clone());
            Poll::Pending
        })
        .await
    }
}
