//! A generation: one assistant answer streaming from the model. Its actor runs on its
//! user's shard and batches the model's chunks into `message.delta` frames (numbered by
//! `seq`): the answer's first chunk goes out at once (the user waits for it), then a
//! chunk opens a batch window of `batch`, and what arrived by its end goes out as one
//! frame. The windows of a shard's answers share one timer ([`Windows`]). It keeps the text so far for tabs that open the conversation mid-stream, and
//! stops on cancel, error or end. The [`Generations`] registry finds a conversation's
//! running generation on this instance: a map, not an actor, so a send asks it without
//! a mailbox round trip.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::{Rc, Weak};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix::prelude::*;
use chat_contract::frames::{ServerFrame, Snapshot};
use chat_contract::states::FinishReason;
use futures_util::future::BoxFuture;
use futures_util::stream::{self, BoxStream, StreamExt};

use crate::hub::{hold_here, publish_here, release_here, Event, Hubs, LiveAnswer, Publish, SessionHub};
use crate::messages::Deliver;
use crate::metrics;
use crate::model::{time_limited, ModelError};
use crate::shard::Shards;

#[derive(Debug, Clone)]
pub struct Outcome {
    pub content: String,
    pub finish: FinishReason,
    pub error: Option<ModelError>,
    /// Deltas sent.
    pub seq: u64,
    /// Whether the model (or the images API) was asked: its stream was polled.
    pub asked: bool,
}

pub type OnDone = Box<dyn FnOnce(Outcome) -> BoxFuture<'static, ()> + Send>;

/// Batch windows close on a grid of this step, so the windows of a shard's answers that
/// close within one step are flushed together: one timer for them all instead of one per
/// window, and their frames reach each tab's thread in one wake. A window closes up to
/// one step early, never late.
const WINDOW_STEP: Duration = Duration::from_millis(2);

pub struct Generation {
    answer: Rc<RefCell<Answer>>,
    batch: Duration,
    stream: Option<Chunks>,
    /// Set by the stream when the model is first polled (see [`chunks_of`]).
    asked: Arc<AtomicBool>,
    /// Frames that announce the answer, published before its first delta.
    intro: Vec<ServerFrame>,
    timestamps: bool,
    on_done: Option<OnDone>,
    /// The answer's model and when it was handed over, for its metrics.
    model: String,
    started_at: Instant,
}

/// What a generation streams: shared between its actor, which takes the model's chunks,
/// and its shard's [`Windows`], which flush a batch when its window closes.
struct Answer {
    user: String,
    conversation_id: String,
    message_id: String,
    hub: Addr<SessionHub>,
    /// Sent so far, and not yet sent.
    content: String,
    pending: String,
    /// When the oldest pending chunk arrived (µs since the Unix epoch), if frames carry it.
    pending_since: Option<u64>,
    seq: u64,
}

fn unix_micros() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64)
}

impl Answer {
    /// Through the hub of this thread (the user's shard) directly; through its mailbox
    /// if this generation runs elsewhere.
    fn publish(&self, event: Event) {
        if let Err(event) = publish_here(&self.user, event) {
            self.hub.do_send(Publish {
                user: self.user.clone(),
                event,
            });
        }
    }

    fn flush(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        self.seq += 1;
        let delta = std::mem::take(&mut self.pending);
        self.content.push_str(&delta);
        let frame = ServerFrame::MessageDelta {
            conversation_id: self.conversation_id.clone(),
            message_id: self.message_id.clone(),
            seq: self.seq,
            delta,
            emitted_at: self.pending_since.take(),
        };
        self.publish(Event::Frame(Deliver::frame(&frame)));
    }
}

impl LiveAnswer for RefCell<Answer> {
    /// What the answer's deltas so far hold (not the chunks waiting for their window).
    fn snapshot(&self) -> Snapshot {
        let answer = self.borrow();
        Snapshot {
            conversation_id: answer.conversation_id.clone(),
            message_id: answer.message_id.clone(),
            seq: answer.seq,
            content: answer.content.clone(),
        }
    }
}

/// The open batch windows of a shard's answers and the one timer that closes them (per
/// shard thread: the answers' actors run there).
#[derive(Default)]
struct Windows {
    /// When each open window closes (on the step grid), and its answer.
    open: Vec<(Instant, Weak<RefCell<Answer>>)>,
    /// When the timer fires next, if it is armed.
    armed: Option<Instant>,
}

thread_local! {
    static WINDOWS: RefCell<Windows> = RefCell::new(Windows::default());
    /// The origin of this thread's grid of window closings.
    static GRID: Instant = Instant::now();
}

/// Opens a batch window for `answer` that closes `batch` from now, rounded down to the
/// step grid.
fn open_window(answer: &Rc<RefCell<Answer>>, batch: Duration) {
    let closes = GRID.with(|origin| {
        let since = (Instant::now() + batch).saturating_duration_since(*origin);
        let steps = since.as_nanos() / WINDOW_STEP.as_nanos();
        *origin + WINDOW_STEP * steps as u32
    });
    let arm = WINDOWS.with(|windows| {
        let mut windows = windows.borrow_mut();
        windows.open.push((closes, Rc::downgrade(answer)));
        let arm = windows.armed.is_none_or(|at| closes < at);
        if arm {
            windows.armed = Some(closes);
        }
        arm
    });
    if arm {
        arm_timer(closes);
    }
}

fn arm_timer(at: Instant) {
    actix::spawn(async move {
        tokio::time::sleep_until(at.into()).await;
        close_windows(at);
    });
}

/// Flushes the answers whose windows have closed, and arms the timer for the next.
fn close_windows(fired: Instant) {
    let now = Instant::now();
    let (due, next) = WINDOWS.with(|windows| {
        let mut windows = windows.borrow_mut();
        if windows.armed == Some(fired) {
            windows.armed = None;
        }
        let mut due = Vec::new();
        windows.open.retain(|(closes, answer)| {
            if *closes <= now {
                due.push(answer.clone());
                false
            } else {
                true
            }
        });
        let next = match windows.armed {
            Some(_) => None,
            None => windows.open.iter().map(|(closes, _)| *closes).min(),
        };
        if next.is_some() {
            windows.armed = next;
        }
        (due, next)
    });
    if let Some(next) = next {
        arm_timer(next);
    }
    for answer in due {
        // Gone: the answer ended (and flushed) before its window closed.
        if let Some(answer) = answer.upgrade() {
            answer.borrow_mut().flush();
        }
    }
}

impl Generation {
    fn finish(&mut self, finish: FinishReason, error: Option<ModelError>, ctx: &mut Context<Self>) {
        let Some(on_done) = self.on_done.take() else {
            return;
        };
        let model = self.model.clone();
        metrics::histogram!(metrics::ANSWER_DURATION, "model" => model.clone())
            .record(self.started_at.elapsed());
        if let Some(error) = &error {
            metrics::counter!(metrics::MODEL_ERRORS, "model" => model, "kind" => metrics::error_kind(error))
                .increment(1);
        }
        let mut answer = self.answer.borrow_mut();
        answer.flush();
        // After the last delta and through the same hub: the claim goes, and the other
        // instances drop their copies after the last delta they got.
        answer.publish(Event::Ended {
            conversation_id: answer.conversation_id.clone(),
        });
        let outcome = Outcome {
            content: answer.content.clone(),
            finish,
            error,
            seq: answer.seq,
            asked: self.asked.load(Ordering::SeqCst),
        };
        actix::spawn(on_done(outcome));
        ctx.stop();
    }
}

impl Actor for Generation {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        {
            let answer = self.answer.borrow();
            let live: Rc<dyn LiveAnswer> = self.answer.clone();
            hold_here(&answer.user, &answer.conversation_id, Rc::downgrade(&live));
        }
        // The answer's announcements and its deltas take the same path, so no delta can
        // reach a tab before the message it belongs to.
        let answer = self.answer.borrow();
        for frame in std::mem::take(&mut self.intro) {
            answer.publish(Event::Frame(Deliver::frame(&frame)));
        }
        if let Some(stream) = self.stream.take() {
            ctx.add_stream(stream);
        }
        metrics::gauge!(metrics::ANSWERS_STREAMING).increment(1);
    }

    fn stopped(&mut self, _: &mut Context<Self>) {
        metrics::gauge!(metrics::ANSWERS_STREAMING).decrement(1);
        let answer = self.answer.borrow();
        release_here(&answer.user, &answer.conversation_id);
    }
}

impl StreamHandler<Result<String, ModelError>> for Generation {
    fn handle(&mut self, chunk: Result<String, ModelError>, ctx: &mut Context<Self>) {
        let text = match chunk {
            Ok(text) if text.is_empty() => return,
            Ok(text) => text,
            Err(e) => return self.finish(FinishReason::Error, Some(e), ctx),
        };
        let mut answer = self.answer.borrow_mut();
        if answer.pending.is_empty() && self.timestamps {
            answer.pending_since = Some(unix_micros());
        }
        if answer.seq == 0 && answer.pending.is_empty() {
            // The answer's first words go out at once: batching saves frames on a long
            // stream, but the wait for the first token is what a user feels.
            metrics::histogram!(metrics::TIME_TO_FIRST_TOKEN, "model" => self.model.clone())
                .record(self.started_at.elapsed());
            answer.pending = text;
            answer.flush();
            return;
        }
        // The first chunk of a batch opens its window; a stream that pauses costs no
        // timer ticks, and every chunk waits at most `batch`.
        if answer.pending.is_empty() {
            open_window(&self.answer, self.batch);
        }
        answer.pending.push_str(&text);
    }

    fn finished(&mut self, ctx: &mut Context<Self>) {
        self.finish(FinishReason::Stop, None, ctx);
    }
}

/// Stop generating; the text so far is kept.
#[derive(Message, Debug, Clone)]
#[rtype(result = "bool")]
pub struct Cancel {
    pub conversation_id: String,
}

impl Handler<Cancel> for Generation {
    type Result = bool;

    fn handle(&mut self, _: Cancel, ctx: &mut Context<Self>) -> bool {
        self.finish(FinishReason::Cancelled, None, ctx);
        true
    }
}

#[derive(Message, Debug, Clone)]
#[rtype(result = "Option<Snapshot>")]
pub struct GetSnapshot {
    pub conversation_id: String,
}

impl Handler<GetSnapshot> for Generation {
    type Result = Option<Snapshot>;

    fn handle(&mut self, _: GetSnapshot, _: &mut Context<Self>) -> Option<Snapshot> {
        Some(self.answer.snapshot())
    }
}

/// Stop generating because the server shuts down; the text so far is kept.
#[derive(Message, Debug, Clone, Copy)]
#[rtype(result = "()")]
pub struct Interrupt;

impl Handler<Interrupt> for Generation {
    type Result = ();

    fn handle(&mut self, _: Interrupt, ctx: &mut Context<Self>) {
        self.finish(FinishReason::Interrupted, None, ctx);
    }
}

// ---- what an answer streams ------------------------------------------------------------

/// The chunks of an answer's text as they come.
pub type Chunks = BoxStream<'static, Result<String, ModelError>>;

/// How long the model may take: `per_chunk` for each chunk (the first one included),
/// `total` for the whole answer. A model that trickles forever must not hold a claim
/// and a quota unit forever.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub per_chunk: Duration,
    pub total: Duration,
}

/// Where an answer's text comes from. The model (or the images API) counts as asked
/// once its stream is first polled, since the providers' streams send their request
/// then: from that moment the provider bills it, which decides whether a cancel gives
/// the answer's unit back ([`Outcome::asked`]).
pub enum Reply {
    /// The model's stream, ended with [`ModelError::Timeout`] past its limits.
    Model(Chunks, Limits),
    /// A step that is not yet the ask (a web search, which bounds itself), then the
    /// model's stream it gives, limited from then on; the step's error ends the answer
    /// without asking.
    ModelAfter(BoxFuture<'static, Result<Chunks, ModelError>>, Limits),
    /// A stream that bounds itself (an image being made, in one chunk).
    SelfLimited(Chunks),
}

/// The stream a generation polls for `reply`: limited, and setting `asked` when the
/// model's stream is first polled. Made here rather than by the caller so that each
/// chunk of the model is polled from the generation directly.
fn chunks_of(reply: Reply, asked: Arc<AtomicBool>) -> Chunks {
    let noted = move |mut chunks: Chunks| -> Chunks {
        stream::poll_fn(move |cx| {
            asked.store(true, Ordering::SeqCst);
            chunks.poll_next_unpin(cx)
        })
        .boxed()
    };
    match reply {
        Reply::Model(chunks, limits) => noted(time_limited(chunks, limits.per_chunk, limits.total)),
        Reply::SelfLimited(chunks) => noted(chunks),
        Reply::ModelAfter(step, limits) => stream::once(async move {
            match step.await {
                // The whole answer's limit runs from when the step is done.
                Ok(chunks) => noted(time_limited(chunks, limits.per_chunk, limits.total)),
                Err(e) => stream::once(async { Err(e) }).boxed(),
            }
        })
        .flatten()
        .boxed(),
    }
}

// ---- the registry ----------------------------------------------------------------------

/// Everything needed to start generating an answer.
pub struct Start {
    pub user: String,
    pub conversation_id: String,
    pub message_id: String,
    /// The answer's model, for its metrics' `model` label.
    pub model: String,
    pub stream: Reply,
    /// Frames for the user's tabs before the first delta (the new messages).
    pub intro: Vec<ServerFrame>,
    pub batch: Duration,
    /// Stamp each delta with when its first chunk arrived (load tests).
    pub timestamps: bool,
    pub on_done: OnDone,
}

/// The running generations of this instance, by conversation. Each runs on its user's
/// shard, beside the user's hub.
pub struct Generations {
    shards: Shards,
    hubs: Hubs,
    running: Mutex<HashMap<String, Addr<Generation>>>,
    /// Generations not settled yet: running, or their outcome being stored.
    unsettled: AtomicUsize,
}

impl Generations {
    /// The registry of the generations that stream through `hubs`; the hubs stop them
    /// on the cancels other instances publish.
    pub fn new(shards: Shards, hubs: Hubs) -> Arc<Generations> {
        let generations = Arc::new(Generations {
            shards,
            hubs: hubs.clone(),
            running: Mutex::new(HashMap::new()),
            unsettled: AtomicUsize::new(0),
        });
        // Weak: the registry holds the hubs, which would otherwise keep it alive.
        let registry = Arc::downgrade(&generations);
        hubs.cancel_with(Arc::new(move |conversation_id: &str| {
            registry.upgrade().is_some_and(|g| g.cancel(conversation_id))
        }));
        generations
    }

    fn running(&self) -> std::sync::MutexGuard<'_, HashMap<String, Addr<Generation>>> {
        self.running.lock().expect("generations lock")
    }

    fn get(&self, conversation_id: &str) -> Option<Addr<Generation>> {
        self.running()
            .get(conversation_id)
            .filter(|a| a.connected())
            .cloned()
    }

    /// Whether the conversation has an answer running on this instance.
    pub fn is_running(&self, conversation_id: &str) -> bool {
        self.get(conversation_id).is_some()
    }

    /// Starts streaming an answer; gives `msg` back if the conversation already has one
    /// running here.
    pub fn start(self: &Arc<Self>, msg: Start) -> Result<(), Box<Start>> {
        let mut running = self.running();
        if running.get(&msg.conversation_id).is_some_and(Addr::connected) {
            return Err(Box::new(msg));
        }
        let registry = Arc::downgrade(self);
        let on_done = msg.on_done;
        let ended_id = msg.conversation_id.clone();
        // The registry forgets the generation once its outcome is handed on, and counts
        // it settled once that is done (a shutdown waits for it).
        let on_done: OnDone = Box::new(move |outcome| {
            if let Some(registry) = registry.upgrade() {
                registry.running().remove(&ended_id);
            }
            let handled = on_done(outcome);
            Box::pin(async move {
                handled.await;
                if let Some(registry) = registry.upgrade() {
                    registry.unsettled.fetch_sub(1, Ordering::SeqCst);
                }
            })
        });
        let hub = self.hubs.of(&msg.user).clone();
        let shard = self.shards.arbiter(&msg.user);
        let conversation_id = msg.conversation_id.clone();
        let (user, message_id, model, batch, stream, intro, timestamps) = (
            msg.user,
            msg.message_id,
            msg.model,
            msg.batch,
            msg.stream,
            msg.intro,
            msg.timestamps,
        );
        let asked = Arc::new(AtomicBool::new(false));
        let started_at = Instant::now();
        // Made now: the whole answer's limit runs from the start.
        let stream = chunks_of(stream, asked.clone());
        self.unsettled.fetch_add(1, Ordering::SeqCst);
        // Made on the shard's thread: the answer is shared there with the shard's windows.
        let addr = Generation::start_in_arbiter(&shard, move |_| Generation {
            answer: Rc::new(RefCell::new(Answer {
                user,
                conversation_id,
                message_id,
                hub,
                content: String::new(),
                pending: String::new(),
                pending_since: None,
                seq: 0,
            })),
            batch,
            stream: Some(stream),
            asked,
            intro,
            timestamps,
            on_done: Some(on_done),
            model,
            started_at,
        });
        running.insert(msg.conversation_id, addr);
        Ok(())
    }

    /// Stops the conversation's answer if it runs here; false if it does not.
    pub fn cancel(&self, conversation_id: &str) -> bool {
        match self.get(conversation_id) {
            Some(addr) => {
                addr.do_send(Cancel {
                    conversation_id: conversation_id.to_owned(),
                });
                true
            }
            None => false,
        }
    }

    /// The text so far of the conversation's answer, if it runs here.
    pub async fn snapshot(&self, conversation_id: &str) -> Option<Snapshot> {
        let addr = self.get(conversation_id)?;
        let ask = GetSnapshot {
            conversation_id: conversation_id.to_owned(),
        };
        addr.send(ask).await.ok().flatten()
    }

    /// Interrupts every running generation of this instance (shutdown).
    pub fn interrupt_all(&self) {
        for generation in self.running().values() {
            generation.do_send(Interrupt);
        }
    }

    /// How many generations have not settled yet: running, or their outcome being stored.
    pub fn unsettled(&self) -> usize {
        self.unsettled.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hub::Connect;
    use crate::tab::TabSink;
    use futures_util::stream::{self, StreamExt};
    use serde_json::Value;
    use tokio::sync::oneshot;

    const HOUR_LIMITS: Limits = Limits {
        per_chunk: Duration::from_secs(3600),
        total: Duration::from_secs(3600),
    };

    /// Starts `reply` for user `u1` in conversation `conversation`, with no tab watching;
    /// its outcome comes out of the receiver.
    fn answer(
        generations: &Arc<Generations>,
        conversation: &str,
        reply: Reply,
    ) -> oneshot::Receiver<Outcome> {
        let (done, outcome) = oneshot::channel();
        let started = generations.start(Start {
            user: "u1".into(),
            conversation_id: conversation.into(),
            message_id: format!("m-{conversation}"),
            model: "demo".into(),
            stream: reply,
            intro: Vec::new(),
            batch: Duration::from_millis(1),
            timestamps: false,
            on_done: Box::new(move |o| {
                let _ = done.send(o);
                Box::pin(async {})
            }),
        });
        assert!(started.is_ok());
        outcome
    }

    async fn outcome_of(outcome: oneshot::Receiver<Outcome>) -> Outcome {
        tokio::time::timeout(Duration::from_secs(10), outcome)
            .await
            .expect("the answer ended")
            .unwrap()
    }

    #[actix_rt::test]
    async fn the_first_chunk_goes_out_at_once_and_the_rest_is_batched() {
        let shards = Shards::start(2);
        let hubs = Hubs::start(&shards, None, 4);
        let generations = Generations::new(shards.clone(), hubs.clone());
        let (sink, mut got) = TabSink::detached(64);
        let joined = hubs
            .of("u1")
            .send(Connect {
                user: "u1".into(),
                session: 1,
                sink,
            })
            .await
            .unwrap();
        assert!(joined);
        let chunks = stream::iter([Ok("Hello".to_owned()), Ok(" world".to_owned())]).chain(stream::pending());
        let (done, outcome) = tokio::sync::oneshot::channel();
        let started = generations.start(Start {
            user: "u1".into(),
            conversation_id: "c1".into(),
            message_id: "m1".into(),
            model: "demo".into(),
            stream: Reply::Model(chunks.boxed(), HOUR_LIMITS),
            intro: Vec::new(),
            // Far longer than the test: only the first chunk can arrive before a cancel.
            batch: Duration::from_secs(3600),
            timestamps: false,
            on_done: Box::new(move |o| {
                let _ = done.send(o);
                Box::pin(async {})
            }),
        });
        assert!(started.is_ok());
        let delta = |text: bytestring::ByteString| {
            let frame: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(frame["type"], "message.delta");
            (
                frame["seq"].as_u64().unwrap(),
                frame["delta"].as_str().unwrap().to_owned(),
            )
        };
        let first = tokio::time::timeout(Duration::from_secs(10), got.next_text())
            .await
            .expect("the first delta without waiting for the batch window")
            .unwrap();
        assert_eq!(delta(first), (1, "Hello".to_owned()));
        assert!(generations.is_running("c1"));
        assert!(generations.cancel("c1"));
        let outcome = outcome.await.unwrap();
        assert_eq!(outcome.finish, FinishReason::Cancelled);
        assert_eq!((outcome.content.as_str(), outcome.seq), ("Hello world", 2));
        assert!(outcome.asked);
        // The batched rest went out when the answer ended.
        let second = got.next_text().await.unwrap();
        assert_eq!(delta(second), (2, " world".to_owned()));
        assert!(!generations.is_running("c1"));
        shards.stop();
    }

    #[actix_rt::test]
    async fn chunks_in_one_window_go_out_as_one_delta_for_every_answer_of_the_shard() {
        let shards = Shards::start(1);
        let hubs = Hubs::start(&shards, None, 4);
        let generations = Generations::new(shards.clone(), hubs.clone());
        let mut tabs = Vec::new();
        for (user, conversation) in [("u1", "c1"), ("u2", "c2")] {
            let (sink, got) = TabSink::detached(64);
            let connect = Connect {
                user: user.into(),
                session: 1,
                sink,
            };
            assert!(hubs.of(user).send(connect).await.unwrap());
            // Three chunks at once, then the model goes quiet until the test ends.
            let chunks = stream::iter(["a", "b", "c"].map(|c| Ok(c.to_owned()))).chain(stream::pending());
            let started = generations.start(Start {
                user: user.into(),
                conversation_id: conversation.into(),
                message_id: format!("m-{conversation}"),
                model: "demo".into(),
                stream: Reply::SelfLimited(chunks.boxed()),
                intro: Vec::new(),
                batch: Duration::from_millis(50),
                timestamps: false,
                on_done: Box::new(|_| Box::pin(async {})),
            });
            assert!(started.is_ok());
            tabs.push(got);
        }
        for got in &mut tabs {
            let mut deltas = Vec::new();
            for _ in 0..2 {
                let text = tokio::time::timeout(Duration::from_secs(10), got.next_text())
                    .await
                    .expect("both deltas")
                    .unwrap();
                let frame: Value = serde_json::from_str(&text).unwrap();
                deltas.push((
                    frame["seq"].as_u64().unwrap(),
                    frame["delta"].as_str().unwrap().to_owned(),
                ));
            }
            assert_eq!(deltas, vec![(1, "a".to_owned()), (2, "bc".to_owned())]);
        }
        assert!(generations.cancel("c1") && generations.cancel("c2"));
        shards.stop();
    }

    #[actix_rt::test]
    async fn a_model_that_sends_nothing_in_time_ends_the_answer_with_a_timeout_once_asked() {
        let shards = Shards::start(1);
        let generations = Generations::new(shards.clone(), Hubs::start(&shards, None, 4));
        let limits = Limits {
            per_chunk: Duration::from_millis(100),
            total: Duration::from_secs(3600),
        };
        let hang = stream::pending().boxed();
        let outcome = outcome_of(answer(&generations, "c1", Reply::Model(hang, limits))).await;
        assert_eq!(outcome.finish, FinishReason::Error);
        assert!(matches!(outcome.error, Some(ModelError::Timeout)), "{outcome:?}");
        assert_eq!(outcome.seq, 0);
        assert!(outcome.asked);

        // One that trickles is cut off at the whole answer's limit, its words kept.
        let limits = Limits {
            per_chunk: Duration::from_secs(3600),
            total: Duration::from_millis(300),
        };
        let trickle = stream::unfold(0u32, |i| async move {
            tokio::time::sleep(Duration::from_millis(40)).await;
            Some((Ok(format!("w{i} ")), i + 1))
        })
        .boxed();
        let outcome = outcome_of(answer(&generations, "c2", Reply::Model(trickle, limits))).await;
        assert!(matches!(outcome.error, Some(ModelError::Timeout)), "{outcome:?}");
        assert!(outcome.content.starts_with("w0 w1 "), "{outcome:?}");
        shards.stop();
    }

    #[actix_rt::test]
    async fn the_model_is_asked_only_once_the_step_before_it_is_done() {
        let shards = Shards::start(1);
        let generations = Generations::new(shards.clone(), Hubs::start(&shards, None, 4));
        // Cancelled during the step: the model was never asked.
        let step = Box::pin(std::future::pending());
        let outcome = answer(&generations, "c1", Reply::ModelAfter(step, HOUR_LIMITS));
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(generations.cancel("c1"));
        let outcome = outcome_of(outcome).await;
        assert_eq!((outcome.finish, outcome.asked), (FinishReason::Cancelled, false));

        // A step that fails ends the answer with its error, unasked.
        let failed = Box::pin(async { Err(ModelError::Upstream("no room".into())) });
        let outcome = outcome_of(answer(&generations, "c2", Reply::ModelAfter(failed, HOUR_LIMITS))).await;
        assert_eq!((outcome.finish, outcome.asked), (FinishReason::Error, false));
        assert!(
            matches!(outcome.error, Some(ModelError::Upstream(_))),
            "{outcome:?}"
        );

        // A step that gives the model's stream: asked, and its words streamed; the
        // per-chunk limit runs from the model's stream, not from the step's start.
        let limits = Limits {
            per_chunk: Duration::from_millis(200),
            total: Duration::from_secs(3600),
        };
        let searched = Box::pin(async {
            tokio::time::sleep(Duration::from_millis(400)).await;
            Ok(stream::iter([Ok("found".to_owned())]).boxed())
        });
        let outcome = outcome_of(answer(&generations, "c3", Reply::ModelAfter(searched, limits))).await;
        assert_eq!((outcome.finish, outcome.asked), (FinishReason::Stop, true));
        assert_eq!(outcome.content, "found");

        // A stream that bounds itself is asked when first polled, with no limit of ours.
        let made = stream::once(async {
            tokio::time::sleep(Duration::from_millis(50)).await;
            Ok("an image".to_owned())
        })
        .boxed();
        let outcome = outcome_of(answer(&generations, "c4", Reply::SelfLimited(made))).await;
        assert_eq!((outcome.finish, outcome.asked), (FinishReason::Stop, true));
        shards.stop();
    }
}
