//! A generation: one assistant answer streaming from the model. Its actor batches the
//! model's chunks into `message.delta` frames (numbered by `seq`): a chunk opens a batch
//! window of `batch`, and what arrived by its end goes out as one frame. It keeps the text so far for tabs that open the conversation mid-stream, and
//! stops on cancel, error or end. The [`Generations`] registry finds a conversation's
//! running generation on this instance.

use std::collections::HashMap;
use std::time::Duration;

use actix::prelude::*;
use futures_util::future::BoxFuture;
use futures_util::stream::BoxStream;

use crate::hub::{Event, Publish, SessionHub};
use crate::model::ModelError;
use crate::protocol::ServerFrame;

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
        self.hub.do_send(Publish::frame(&self.user, &frame));
    }

    fn finish(&mut self, finish: FinishReason, error: Option<ModelError>, ctx: &mut Context<Self>) {
        let Some(on_done) = self.on_done.take() else {
            return;
        };
        self.flush();
        // After the last delta and through the same hub: a relay drops the stored text.
        let ended = Event::Ended {
            conversation_id: self.conversation_id.clone(),
        };
        self.hub.do_send(Publish {
            user: self.user.clone(),
            event: ended,
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
        if let Some(stream) = self.stream.take() {
            ctx.add_stream(stream);
        }
    }
}

impl StreamHandler<Result<String, ModelError>> for Generation {
    fn handle(&mut self, chunk: Result<String, ModelError>, ctx: &mut Context<Self>) {
        match chunk {
            Ok(text) if text.is_empty() => {}
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
    pub batch: Duration,
    /// Stamp each delta with when its first chunk arrived (load tests).
    pub timestamps: bool,
    pub on_done: OnDone,
}

impl Message for Start {
    /// False if the conversation already has a running generation.
    type Result = bool;
}

#[derive(Message)]
#[rtype(result = "()")]
struct Ended {
    conversation_id: String,
}

/// A generation's outcome has been handled (stored, refunded, announced).
#[derive(Message)]
#[rtype(result = "()")]
struct Settled;

/// How many generations have not settled yet: running, or their outcome being stored.
#[derive(Message, Debug, Clone, Copy)]
#[rtype(result = "usize")]
pub struct Unsettled;

/// The running generations of this instance, by conversation.
pub struct Generations {
    hub: Addr<SessionHub>,
    running: HashMap<String, Addr<Generation>>,
    unsettled: usize,
}

impl Generations {
    pub fn new(hub: Addr<SessionHub>) -> Self {
        Generations {
            hub,
            running: HashMap::new(),
            unsettled: 0,
        }
    }
}

impl Actor for Generations {
    type Context = Context<Self>;
}

impl Handler<Start> for Generations {
    type Result = bool;

    fn handle(&mut self, msg: Start, ctx: &mut Context<Self>) -> bool {
        if self
            .running
            .get(&msg.conversation_id)
            .is_some_and(Addr::connected)
        {
            return false;
        }
        let registry = ctx.address();
        let conversation_id = msg.conversation_id.clone();
        let on_done = msg.on_done;
        let ended_id = conversation_id.clone();
        // The registry forgets the generation once its outcome is handed on, and counts
        // it settled once that is done (a shutdown waits for it).
        let on_done: OnDone = Box::new(move |outcome| {
            registry.do_send(Ended {
                conversation_id: ended_id,
            });
            let handled = on_done(outcome);
            Box::pin(async move {
                handled.await;
                registry.do_send(Settled);
            })
        });
        let generation = Generation {
            user: msg.user,
            conversation_id: msg.conversation_id,
            message_id: msg.message_id,
            hub: self.hub.clone(),
            batch: msg.batch,
            stream: Some(msg.stream),
            content: String::new(),
            pending: String::new(),
            pending_since: None,
            timestamps: msg.timestamps,
            seq: 0,
            on_done: Some(on_done),
        }
        .start();
        self.running.insert(conversation_id, generation);
        self.unsettled += 1;
        true
    }
}

impl Handler<Settled> for Generations {
    type Result = ();

    fn handle(&mut self, _: Settled, _: &mut Context<Self>) {
        self.unsettled = self.unsettled.saturating_sub(1);
    }
}

impl Handler<Unsettled> for Generations {
    type Result = usize;

    fn handle(&mut self, _: Unsettled, _: &mut Context<Self>) -> usize {
        self.unsettled
    }
}

/// Interrupts every running generation of this instance.
impl Handler<Interrupt> for Generations {
    type Result = ();

    fn handle(&mut self, msg: Interrupt, _: &mut Context<Self>) {
        for generation in self.running.values() {
            generation.do_send(msg);
        }
    }
}

impl Handler<Ended> for Generations {
    type Result = ();

    fn handle(&mut self, msg: Ended, _: &mut Context<Self>) {
        self.running
            .retain(|id, addr| id != &msg.conversation_id && addr.connected());
    }
}

impl Handler<Cancel> for Generations {
    type Result = ResponseFuture<bool>;

    fn handle(&mut self, msg: Cancel, _: &mut Context<Self>) -> Self::Result {
        let addr = self.running.get(&msg.conversation_id).cloned();
        Box::pin(async move {
            match addr {
                Some(addr) => addr.send(msg).await.unwrap_or(false),
                None => false,
            }
        })
    }
}

impl Handler<GetSnapshot> for Generations {
    type Result = ResponseFuture<Option<Snapshot>>;

    fn handle(&mut self, msg: GetSnapshot, _: &mut Context<Self>) -> Self::Result {
        let addr = self.running.get(&msg.conversation_id).cloned();
        Box::pin(async move {
            match addr {
                Some(addr) => addr.send(msg).await.ok().flatten(),
                None => None,
            }
        })
    }
}
