//! The hub: which sessions (tabs) each user has on this instance. Every event of a user
//! goes through it to each of their sessions; with a [`FanOut`] (Redis pub/sub) it also
//! reaches the user's sessions on other instances. There is one hub per shard
//! ([`Hubs`]), each on its shard's arbiter, holding the users that hash to it. Because
//! everything a user's tabs get passes through their one hub, a relay sees a user's
//! events in the order they happened.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Instant;

use actix::prelude::*;
use bytestring::ByteString;

use crate::protocol::ServerFrame;
use crate::shard::Shards;
use crate::tab::{TabSink, SWEEP_EVERY};

/// A frame on its way to a user's tabs, serialized once for all of them.
#[derive(Message, Clone, Debug)]
#[rtype(result = "()")]
pub struct Deliver {
    pub text: ByteString,
    /// Set on `message.delta`, so a tab catching up from a snapshot can drop what the
    /// snapshot already holds.
    pub delta: Option<DeltaMeta>,
    /// Close the session after this frame (`session.revoked`).
    pub close: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeltaMeta {
    pub conversation_id: Arc<str>,
    pub message_id: Arc<str>,
    pub seq: u64,
    /// The delta's text, which a relay appends to the answer's stored text.
    pub text: Arc<str>,
}

impl Deliver {
    pub fn frame(frame: &ServerFrame) -> Deliver {
        let delta = match frame {
            ServerFrame::MessageDelta {
                conversation_id,
                message_id,
                seq,
                delta,
                ..
            } => Some(DeltaMeta {
                conversation_id: conversation_id.as_str().into(),
                message_id: message_id.as_str().into(),
                seq: *seq,
                text: delta.as_str().into(),
            }),
            _ => None,
        };
        let close = matches!(frame, ServerFrame::SessionRevoked { .. });
        Deliver {
            text: frame.to_text().into(),
            delta,
            close,
        }
    }
}

/// Something other instances must act on: a frame for a user's tabs, a request to stop
/// a generation that may run elsewhere, or the end of a generation (whose stored text a
/// relay then drops).
#[derive(Clone, Debug)]
pub enum Event {
    Frame(Deliver),
    Cancel { conversation_id: String },
    Ended { conversation_id: String },
}

/// Carries events between instances (Redis pub/sub). A relay also keeps a running
/// answer's text (from each delta's [`DeltaMeta::text`]) until `Ended`, for snapshots on
/// other instances. Implementations hand what other instances publish to the hub as
/// [`FromRemote`].
pub trait FanOut: Send + Sync + 'static {
    fn publish(&self, user: &str, event: &Event);
    /// This instance now has a session of `user` (first one) or none left.
    fn watch(&self, user: &str, watching: bool);
}

/// A session joins its user; `false` when the user already has as many tabs here as
/// allowed (the session is then not added).
#[derive(Message)]
#[rtype(result = "bool")]
pub struct Connect {
    pub user: String,
    pub session: u64,
    pub sink: TabSink,
}

#[derive(Message)]
#[rtype(result = "()")]
pub struct Disconnect {
    pub user: String,
    pub session: u64,
}

/// An event for every session of `user`, here and on other instances.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Publish {
    pub user: String,
    pub event: Event,
}

impl Publish {
    pub fn frame(user: &str, frame: &ServerFrame) -> Publish {
        Publish {
            user: user.to_owned(),
            event: Event::Frame(Deliver::frame(frame)),
        }
    }
}

/// An event another instance published.
#[derive(Message)]
#[rtype(result = "()")]
pub struct FromRemote {
    pub user: String,
    pub event: Event,
}

/// How many sessions the user has on this instance.
#[derive(Message)]
#[rtype(result = "usize")]
pub struct SessionCount {
    pub user: String,
}

/// Stops a local generation (a cancel another instance published); false if none runs.
pub type CancelSink = Arc<dyn Fn(&str) -> bool + Send + Sync>;

/// A shard's hub. Its state is shared with the generations of its shard thread (see
/// [`publish_here`]), which deliver without a trip through the hub's mailbox.
pub struct SessionHub {
    state: Rc<RefCell<HubState>>,
}

struct HubState {
    users: HashMap<String, HashMap<u64, TabSink>>,
    fan_out: Option<Arc<dyn FanOut>>,
    generations: Option<CancelSink>,
    /// Tabs one user may have on this instance.
    max_tabs: usize,
}

thread_local! {
    /// The hub of the shard this thread runs, once it started.
    static HERE: RefCell<Option<Rc<RefCell<HubState>>>> = const { RefCell::new(None) };
}

/// Publishes through the hub of this thread, directly, if this thread runs one; gives
/// the event back otherwise. A generation runs on its user's shard, whose hub holds the
/// user, so its deltas reach the tabs' queues with no mailbox on the way.
pub fn publish_here(user: &str, event: Event) -> Result<(), Event> {
    HERE.with(|here| match &*here.borrow() {
        Some(state) => {
            state.borrow().publish(user, event);
            Ok(())
        }
        None => Err(event),
    })
}

impl SessionHub {
    pub fn new(fan_out: Option<Arc<dyn FanOut>>, max_tabs: usize) -> Self {
        SessionHub {
            state: Rc::new(RefCell::new(HubState {
                users: HashMap::new(),
                fan_out,
                generations: None,
                max_tabs: max_tabs.max(1),
            })),
        }
    }
}

impl HubState {
    fn publish(&self, user: &str, event: Event) {
        if let Some(fan_out) = &self.fan_out {
            fan_out.publish(user, &event);
        }
        self.deliver_locally(user, event);
    }

    fn deliver_locally(&self, user: &str, event: Event) {
        match event {
            Event::Frame(deliver) => {
                if let Some(sessions) = self.users.get(user) {
                    for sink in sessions.values() {
                        sink.deliver(deliver.clone());
                    }
                }
            }
            Event::Cancel { conversation_id } => {
                if let Some(cancel) = &self.generations {
                    cancel(&conversation_id);
                }
            }
            Event::Ended { .. } => {}
        }
    }
}

impl Actor for SessionHub {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        HERE.with(|here| *here.borrow_mut() = Some(self.state.clone()));
        // The tabs' heartbeat, idle and stuck-socket checks and token rechecks: one
        // timer for the shard instead of timers per tab.
        ctx.run_interval(SWEEP_EVERY, |hub, _| {
            let now = Instant::now();
            for tabs in hub.state.borrow().users.values() {
                for tab in tabs.values() {
                    tab.sweep(now);
                }
            }
        });
    }

    fn stopped(&mut self, _: &mut Context<Self>) {
        HERE.with(|here| *here.borrow_mut() = None);
    }
}

/// Tells the hub where cancels of local generations go.
#[derive(Message)]
#[rtype(result = "()")]
pub struct SetGenerations(pub CancelSink);

impl Handler<SetGenerations> for SessionHub {
    type Result = ();

    fn handle(&mut self, msg: SetGenerations, _: &mut Context<Self>) {
        self.state.borrow_mut().generations = Some(msg.0);
    }
}

impl Handler<Connect> for SessionHub {
    type Result = bool;

    fn handle(&mut self, msg: Connect, _: &mut Context<Self>) -> bool {
        // Counted here, in the one mailbox every join passes, so tabs opening at once
        // cannot all slip under the cap.
        let state = &mut *self.state.borrow_mut();
        let sessions = state.users.entry(msg.user.clone()).or_default();
        if sessions.len() >= state.max_tabs {
            return false;
        }
        sessions.insert(msg.session, msg.sink);
        if sessions.len() == 1 {
            if let Some(fan_out) = &state.fan_out {
                fan_out.watch(&msg.user, true);
            }
        }
        true
    }
}

impl Handler<Disconnect> for SessionHub {
    type Result = ();

    fn handle(&mut self, msg: Disconnect, _: &mut Context<Self>) {
        let state = &mut *self.state.borrow_mut();
        if let Some(sessions) = state.users.get_mut(&msg.user) {
            sessions.remove(&msg.session);
            if sessions.is_empty() {
                state.users.remove(&msg.user);
                if let Some(fan_out) = &state.fan_out {
                    fan_out.watch(&msg.user, false);
                }
            }
        }
    }
}

impl Handler<Publish> for SessionHub {
    type Result = ();

    fn handle(&mut self, msg: Publish, _: &mut Context<Self>) {
        self.state.borrow().publish(&msg.user, msg.event);
    }
}

impl Handler<FromRemote> for SessionHub {
    type Result = ();

    fn handle(&mut self, msg: FromRemote, _: &mut Context<Self>) {
        self.state.borrow().deliver_locally(&msg.user, msg.event);
    }
}

impl Handler<SessionCount> for SessionHub {
    type Result = usize;

    fn handle(&mut self, msg: SessionCount, _: &mut Context<Self>) -> usize {
        self.state.borrow().users.get(&msg.user).map_or(0, HashMap::len)
    }
}

/// The hubs of every shard: a user's tabs join the hub of the user's shard, and every
/// event of the user goes through it.
#[derive(Clone)]
pub struct Hubs {
    shards: Shards,
    hubs: Arc<Vec<Addr<SessionHub>>>,
}

impl Hubs {
    /// Starts a hub on each shard.
    pub fn start(shards: &Shards, fan_out: Option<Arc<dyn FanOut>>, max_tabs: usize) -> Hubs {
        let hubs = (0..shards.len())
            .map(|i| {
                let fan_out = fan_out.clone();
                SessionHub::start_in_arbiter(&shards.arbiter_at(i), move |_| {
                    SessionHub::new(fan_out, max_tabs)
                })
            })
            .collect();
        Hubs {
            shards: shards.clone(),
            hubs: Arc::new(hubs),
        }
    }

    /// The hub of `user`.
    pub fn of(&self, user: &str) -> &Addr<SessionHub> {
        &self.hubs[self.shards.index(user)]
    }

    /// An event for every session of `user`, here and on other instances.
    pub fn publish(&self, user: &str, event: Event) {
        self.of(user).do_send(Publish {
            user: user.to_owned(),
            event,
        });
    }

    /// Sends `frame` to every tab of `user`, on every instance.
    pub fn publish_frame(&self, user: &str, frame: &ServerFrame) {
        self.of(user).do_send(Publish::frame(user, frame));
    }

    /// Tells every hub how to stop a local generation.
    pub fn set_generations(&self, cancel: CancelSink) {
        for hub in self.hubs.iter() {
            hub.do_send(SetGenerations(cancel.clone()));
        }
    }
}
