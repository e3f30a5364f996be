//! A generation: one assistant answer streaming from the model. Its actor runs on its
//! user's shard and batches the model's chunks into `message.delta` frames (numbered by
//! `seq`): the answer's first chunk goes out at once (the user waits for it), then a
//! chunk opens a batch window of `batch`, and what arrived by its end goes out as one
//! frame. It keeps the text so far for tabs that open the conversation mid-stream, and
//! stops on cancel, error or end. The [`Generations`] registry finds a conversation's
//! running generation on this instance: a map, not an actor, so a send asks it without
//! a mailbox round trip.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix::prelude::*;
use futures_util::future::BoxFuture;
use futures_util::stream::BoxStream;

use crate::hub::{publish_here, Deliver, Event, Hubs, Publish, SessionHub};
use crate::model::ModelError;
use crate::protocol::ServerFrame;
use crate::shard::Shards;

/// How a generation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FinishReason {
    Stop,
    Cancelled,
    Error,
    /// The server shut down before the answer ended.
    Interrupted,
}

impl FinishReason {
    pub fn as_str(self) -> &'static str {
        match self {
            FinishReason::Stop => "stop",
            FinishReason::Cancelled => "cancelled",
            FinishReason::Error => "error",
            FinishReason::Interrupted => "interrupted",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Outcome {
    pub content: String,
    pub finish: FinishReason,
    pub error: Option<ModelError>,
    /// Deltas sent.
    pub seq: u64,
}

/// The text so far of a running generation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    pub conversation_id: String,
    pub message_id: String,
    pub seq: u64,
    pub content: String,
}

pub type OnDone = Box<dyn FnOnce(Outcome) -> BoxFuture<'static, ()> + Send>;

pub struct Generation {
    user: String,
    conversation_id: String,
    message_id: String,
    hub: Addr<SessionHub>,
    batch: Duration,
    stream: Option<BoxStream<'static, Result<String, ModelError>>>,
    /// Frames that announce the answer, published before its first delta.
    intro: Vec<ServerFrame>,
    /// Sent so far, and not yet sent.
    content: String,
    pending: String,
    /// When the oldest pending chunk arrived (µs since the Unix epoch), if frames carry it.
    pending_since: Option<u64>,
    timestamps: bool,
    seq: u64,
    on_done: Option<OnDone>,
}

fn unix_micros() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64)
}

impl Generation {
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

    fn finish(&mut self, finish: FinishReason, error: Option<ModelError>, ctx: &mut Context<Self>) {
        let Some(on_done) = self.on_done.take() else {
            return;
        };
        self.flush();
        // After the last delta and through the same hub: a relay drops the stored text.
        self.publish(Event::Ended {
            conversation_id: self.conversation_id.clone(),
        });
        let outcome = Outcome {
            content: self.content.clone(),
            finish,
            error,
            seq: self.seq,
        };
        actix::spawn(on_done(outcome));
        ctx.stop();
    }
}

impl Actor for Generation {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        // The answer's announcements and its deltas take the same path, so no delta can
        // reach a tab before the message it belongs to.
        for frame in std::mem::take(&mut self.intro) {
            self.publish(Event::Frame(Deliver::frame(&frame)));
        }
        if let Some(stream) = self.stream.take() {
            ctx.add_stream(stream);
        }
    }
}

impl StreamHandler<Result<String, ModelError>> for Generation {
    fn handle(&mut self, chunk: Result<String, ModelError>, ctx: &mut Context<Self>) {
        match chunk {
            Ok(text) if text.is_empty() => {}
            Ok(text) if self.seq == 0 && self.pending.is_empty() => {
                // The answer's first words go out at once: batching saves frames on a
                // long stream, but the wait for the first token is what a user feels.
                if self.timestamps {
                    self.pending_since = Some(unix_micros());
                }
                self.pending = text;
                self.flush();
            }
            Ok(text) => {
                // The first chunk of a batch opens its window; a stream that pauses costs
                // no timer ticks, and every chunk waits at most `batch`.
                if self.pending.is_empty() {
                    if self.timestamps {
                        self.pending_since = Some(unix_micros());
                    }
                    ctx.run_later(self.batch, |act, _| act.flush());
                }
                self.pending.push_str(&text);
            }
            Err(e) => self.finish(FinishReason::Error, Some(e), ctx),
        }
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
        Some(Snapshot {
            conversation_id: self.conversation_id.clone(),
            message_id: self.message_id.clone(),
            seq: self.seq,
            content: self.content.clone(),
        })
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

// ---- the registry ----------------------------------------------------------------------

/// Everything needed to start generating an answer.
pub struct Start {
    pub user: String,
    pub conversation_id: String,
    pub message_id: String,
    pub stream: BoxStream<'static, Result<String, ModelError>>,
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
    pub fn new(shards: Shards, hubs: Hubs) -> Arc<Generations> {
        Arc::new(Generations {
            shards,
            hubs,
            running: Mutex::new(HashMap::new()),
            unsettled: AtomicUsize::new(0),
        })
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
        let generation = Generation {
            hub: self.hubs.of(&msg.user).clone(),
            user: msg.user,
            conversation_id: msg.conversation_id.clone(),
            message_id: msg.message_id,
            batch: msg.batch,
            stream: Some(msg.stream),
            intro: msg.intro,
            content: String::new(),
            pending: String::new(),
            pending_since: None,
            timestamps: msg.timestamps,
            seq: 0,
            on_done: Some(on_done),
        };
        let shard = self.shards.arbiter(&generation.user);
        self.unsettled.fetch_add(1, Ordering::SeqCst);
        let addr = Generation::start_in_arbiter(&shard, move |_| generation);
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
            stream: chunks.boxed(),
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
        // The batched rest went out when the answer ended.
        let second = got.next_text().await.unwrap();
        assert_eq!(delta(second), (2, " world".to_owned()));
        assert!(!generations.is_running("c1"));
        shards.stop();
    }
}
