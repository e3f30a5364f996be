//! The hub: which sessions (tabs) each user has on this instance. Every event of a user
//! goes through it to each of their sessions; with a [`FanOut`] (Redis pub/sub) it also
//! reaches the user's sessions on other instances. There is one hub per shard
//! ([`Hubs`]), each on its shard's arbiter, holding the users that hash to it. Because
//! everything a user's tabs get passes through their one hub, a relay sees a user's
//! events in the order they happened.
//!
//! An instance shares a user's events with the others only while another instance
//! watches the user (has tabs or answers of theirs): instances announce themselves on
//! the user's channel ([`Presence`]), and a hub keeps who answered. The answer carries
//! the text of the answerer's running answers, and every delta after it comes along, so
//! a hub keeps the text of the user's answers running elsewhere as its tabs got it: a
//! tab here that opens one mid-stream catches up from that copy ([`RemoteSnapshot`]),
//! and Redis never stores an answer's text.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::rc::{Rc, Weak};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use actix::prelude::*;
use chat_contract::frames::{ServerFrame, Snapshot};
use tokio::sync::oneshot;

use crate::messages::{Deliver, DeltaMeta};
use crate::metrics;
use crate::shard::Shards;
use crate::tab::{TabSink, SWEEP_EVERY};

/// Something other instances must act on: a frame for a user's tabs, a request to stop
/// a generation that may run elsewhere, or the end of a generation (whose copies and
/// claim go then). From other instances also: who watches the user.
#[derive(Clone, Debug)]
pub enum Event {
    Frame(Deliver),
    Cancel { conversation_id: String },
    Ended { conversation_id: String },
    Presence(Presence),
}

/// Who watches a user, as a relay hears it on the user's channel. Instances are named
/// by their relay's origin.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Presence {
    /// This instance's own announcement is out: every instance already watching has
    /// heard it, and their answers follow within [`FanOut::settle`].
    Announced,
    /// Another instance now watches the user, and waits for the answer of those that
    /// already did ([`FanOut::welcome`]).
    Joined(Arc<str>),
    /// Another instance answered: it watches the user too, and runs these answers of
    /// theirs (their text so far).
    Here(Arc<str>, Vec<Snapshot>),
    /// Another instance no longer watches the user.
    Left(Arc<str>),
}

/// Carries events between instances (Redis pub/sub). Implementations hand what other
/// instances publish to the hub as [`FromRemote`].
pub trait FanOut: Send + Sync + 'static {
    /// Frames, cancels and presence (ends go to [`FanOut::ended`]).
    fn publish(&self, user: &str, event: &Event);
    /// An answer of `user` ended here: its claim goes, and the instances watching the
    /// user hear of it (to drop their copy of it) if `heard`.
    fn ended(&self, user: &str, conversation_id: &str, heard: bool);
    /// This instance now watches `user` (its first tab or answer of theirs), or no longer
    /// does. Watching, it hears the user's events and, once it listens, announces itself
    /// ([`Presence::Joined`] elsewhere, [`Presence::Announced`] here).
    fn watch(&self, user: &str, watching: bool);
    /// Another instance joined `user`: answer it with the text of the user's running
    /// answers here ([`Presence::Here`] there), behind everything published before.
    fn welcome(&self, user: &str, answers: &[Snapshot]);
    /// How long after this instance's announcement the answers of the others can take
    /// to arrive; until then it shares everything.
    fn settle(&self) -> Duration;
}

/// A running answer, as the hub sees it: enough to give its text to a newcomer.
pub(crate) trait LiveAnswer {
    fn snapshot(&self) -> Snapshot;
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

/// An event another instance (`origin`) published.
#[derive(Message)]
#[rtype(result = "()")]
pub struct FromRemote {
    pub user: String,
    pub origin: Arc<str>,
    pub event: Event,
}

/// How many sessions the user has on this instance.
#[derive(Message)]
#[rtype(result = "usize")]
pub struct SessionCount {
    pub user: String,
}

/// Stops a local generation (a cancel another instance published); false if none runs.
/// The generations' registry gives it to the hubs it is made with (`hub` cannot import
/// `generation`, which imports it).
pub(crate) type CancelSink = Arc<dyn Fn(&str) -> bool + Send + Sync>;

/// A shard's hub. Its state is shared with the generations of its shard thread (see
/// [`publish_here`]), which deliver without a trip through the hub's mailbox.
pub struct SessionHub {
    state: Rc<RefCell<HubState>>,
}

struct HubState {
    users: HashMap<String, UserEntry>,
    fan_out: Option<Arc<dyn FanOut>>,
    /// Where cancels of local generations go (set once, after the hubs are made).
    generations: Arc<OnceLock<CancelSink>>,
    /// Tabs one user may have on this instance.
    max_tabs: usize,
}

/// A user this instance watches: their tabs and running answers here, and the other
/// instances that watch them too.
#[derive(Default)]
struct UserEntry {
    tabs: HashMap<u64, TabSink>,
    answers: HashMap<String, Weak<dyn LiveAnswer>>,
    /// Other instances watching the user (their relays' origins).
    others: HashSet<Arc<str>>,
    /// The user's answers running on other instances, by conversation: their text as
    /// this instance's tabs got it.
    remote: HashMap<String, RemoteAnswer>,
    /// Until when events are shared whoever watches: unset until this instance's
    /// announcement is out, then [`FanOut::settle`] after it.
    settling_until: Option<Instant>,
    /// Snapshot readers waiting for an instance to answer (see [`RemoteSnapshot`]).
    waiting: Vec<Waiting>,
}

/// An answer running on another instance (`origin`).
struct RemoteAnswer {
    origin: Arc<str>,
    text: Snapshot,
    /// When it last grew (or was made): a copy that stops growing may have missed its
    /// end (see [`IdleCopies`]).
    touched: Instant,
}

/// A snapshot reader waiting for `origin` to answer.
struct Waiting {
    origin: Arc<str>,
    conversation_id: String,
    reply: oneshot::Sender<Option<Snapshot>>,
}

impl UserEntry {
    fn is_empty(&self) -> bool {
        self.tabs.is_empty() && self.answers.is_empty()
    }

    /// Whether another instance may be watching the user.
    fn shared(&self) -> bool {
        !self.others.is_empty() || self.settling_until.is_none_or(|until| Instant::now() < until)
    }

    /// `origin` watches the user too: those waiting for it get their copies.
    fn knows(&mut self, origin: Arc<str>) {
        for waiting in std::mem::take(&mut self.waiting) {
            if waiting.origin == origin {
                let _ = waiting.reply.send(self.copy_of(&waiting.conversation_id));
            } else {
                self.waiting.push(waiting);
            }
        }
        self.others.insert(origin);
    }

    fn copy_of(&self, conversation_id: &str) -> Option<Snapshot> {
        self.remote.get(conversation_id).map(|answer| answer.text.clone())
    }

    /// Keeps the copy of a remote answer current with a delta the tabs here get. A copy
    /// starts with the answer's first delta, or with the text in its instance's answer
    /// to this one's announcement (deltas before that answer are in its text). A delta
    /// past a gap (one was lost) drops the copy rather than keep a wrong text.
    fn copy_delta(&mut self, origin: &Arc<str>, delta: &DeltaMeta) {
        let conversation_id = &*delta.conversation_id;
        match self.remote.get_mut(conversation_id) {
            Some(answer) if *answer.text.message_id == *delta.message_id => {
                if delta.seq == answer.text.seq + 1 {
                    answer.text.content.push_str(&delta.text);
                    answer.text.seq = delta.seq;
                    answer.touched = Instant::now();
                } else if delta.seq > answer.text.seq {
                    self.remote.remove(conversation_id);
                }
            }
            _ if delta.seq == 1 => {
                let text = Snapshot {
                    conversation_id: conversation_id.to_owned(),
                    message_id: delta.message_id.to_string(),
                    seq: 1,
                    content: delta.text.to_string(),
                };
                let origin = origin.clone();
                self.remote.insert(
                    conversation_id.to_owned(),
                    RemoteAnswer {
                        origin,
                        text,
                        touched: Instant::now(),
                    },
                );
            }
            _ => {}
        }
    }
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
    fn new(setup: &HubSetup) -> Self {
        SessionHub {
            state: Rc::new(RefCell::new(HubState {
                users: HashMap::new(),
                fan_out: setup.fan_out.clone(),
                generations: setup.generations.clone(),
                max_tabs: setup.max_tabs.max(1),
            })),
        }
    }
}

/// A running answer of `user` on this thread's shard: the user stays watched while it
/// runs, and its text is written for instances that join meanwhile.
pub(crate) fn hold_here(user: &str, conversation_id: &str, answer: Weak<dyn LiveAnswer>) {
    HERE.with(|here| {
        if let Some(state) = &*here.borrow() {
            let state = &mut *state.borrow_mut();
            state
                .entry(user)
                .answers
                .insert(conversation_id.to_owned(), answer);
        }
    });
}

/// The answer ended (see [`hold_here`]).
pub(crate) fn release_here(user: &str, conversation_id: &str) {
    HERE.with(|here| {
        if let Some(state) = &*here.borrow() {
            let state = &mut *state.borrow_mut();
            if let Some(entry) = state.users.get_mut(user) {
                entry.answers.remove(conversation_id);
            }
            state.forget_if_empty(user);
        }
    });
}

impl HubState {
    /// The user's entry, made (and watched) if it is the first of theirs.
    fn entry(&mut self, user: &str) -> &mut UserEntry {
        if !self.users.contains_key(user) {
            if let Some(fan_out) = &self.fan_out {
                fan_out.watch(user, true);
            }
        }
        self.users.entry(user.to_owned()).or_default()
    }

    fn forget_if_empty(&mut self, user: &str) {
        if self.users.get(user).is_some_and(UserEntry::is_empty) {
            self.users.remove(user);
            if let Some(fan_out) = &self.fan_out {
                fan_out.watch(user, false);
            }
        }
    }

    fn publish(&self, user: &str, event: Event) {
        if let Some(fan_out) = &self.fan_out {
            // A frame goes to other instances only if one may watch the user; a user
            // not watched here (an account change made through this instance) may be
            // watched anywhere. Cancels always go: the answer may run anywhere.
            let shared = self.users.get(user).is_none_or(UserEntry::shared);
            match &event {
                Event::Frame(_) if !shared => {}
                Event::Ended { conversation_id } => fan_out.ended(user, conversation_id, shared),
                _ => fan_out.publish(user, &event),
            }
        }
        self.deliver_locally(user, event);
    }

    fn deliver_locally(&self, user: &str, event: Event) {
        match event {
            Event::Frame(deliver) => {
                if let Some(entry) = self.users.get(user) {
                    for sink in entry.tabs.values() {
                        sink.deliver(deliver.clone());
                    }
                }
            }
            Event::Cancel { conversation_id } => {
                if let Some(cancel) = self.generations.get() {
                    cancel(&conversation_id);
                }
            }
            Event::Ended { .. } | Event::Presence(_) => {}
        }
    }

    /// Who watches `user`, as another instance (or this one's relay) says.
    fn presence(&mut self, user: &str, presence: Presence) {
        let (Some(fan_out), Some(entry)) = (&self.fan_out, self.users.get_mut(user)) else {
            return;
        };
        match presence {
            Presence::Announced => {
                entry.settling_until = Some(Instant::now() + fan_out.settle());
            }
            Presence::Joined(origin) => {
                let answers: Vec<Snapshot> = entry
                    .answers
                    .values()
                    .filter_map(Weak::upgrade)
                    .map(|answer| answer.snapshot())
                    .collect();
                fan_out.welcome(user, &answers);
                entry.knows(origin);
            }
            Presence::Here(origin, answers) => {
                // Its text holds every delta published before it; later ones follow.
                for text in answers {
                    let answer = RemoteAnswer {
                        origin: origin.clone(),
                        text,
                        touched: Instant::now(),
                    };
                    entry.remote.insert(answer.text.conversation_id.clone(), answer);
                }
                entry.knows(origin);
            }
            Presence::Left(origin) => {
                entry.remote.retain(|_, answer| answer.origin != origin);
                entry.others.remove(&origin);
            }
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
            for entry in hub.state.borrow().users.values() {
                for tab in entry.tabs.values() {
                    tab.sweep(now);
                }
            }
        });
    }

    fn stopped(&mut self, _: &mut Context<Self>) {
        HERE.with(|here| *here.borrow_mut() = None);
    }
}

impl Handler<Connect> for SessionHub {
    type Result = bool;

    fn handle(&mut self, msg: Connect, _: &mut Context<Self>) -> bool {
        // Counted here, in the one mailbox every join passes, so tabs opening at once
        // cannot all slip under the cap.
        let state = &mut *self.state.borrow_mut();
        let max_tabs = state.max_tabs;
        let tabs = &mut state.entry(&msg.user).tabs;
        let joined = tabs.len() < max_tabs;
        if joined && tabs.insert(msg.session, msg.sink).is_none() {
            metrics::gauge!(metrics::TABS_OPEN).increment(1);
        }
        state.forget_if_empty(&msg.user);
        joined
    }
}

impl Handler<Disconnect> for SessionHub {
    type Result = ();

    fn handle(&mut self, msg: Disconnect, _: &mut Context<Self>) {
        let state = &mut *self.state.borrow_mut();
        if let Some(entry) = state.users.get_mut(&msg.user) {
            if entry.tabs.remove(&msg.session).is_some() {
                metrics::gauge!(metrics::TABS_OPEN).decrement(1);
            }
        }
        state.forget_if_empty(&msg.user);
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
        let mut state = self.state.borrow_mut();
        let event = match msg.event {
            Event::Presence(presence) => return state.presence(&msg.user, presence),
            event => event,
        };
        match &event {
            Event::Frame(Deliver {
                delta: Some(delta), ..
            }) => {
                if let Some(entry) = state.users.get_mut(&msg.user) {
                    entry.copy_delta(&msg.origin, delta);
                }
            }
            Event::Ended { conversation_id } => {
                if let Some(entry) = state.users.get_mut(&msg.user) {
                    entry.remote.remove(conversation_id);
                }
            }
            _ => {}
        }
        state.deliver_locally(&msg.user, event);
    }
}

/// An event for this instance's tabs of a user only (not shared with other instances).
#[derive(Message)]
#[rtype(result = "()")]
struct Local {
    user: String,
    event: Event,
}

impl Handler<Local> for SessionHub {
    type Result = ();

    fn handle(&mut self, msg: Local, _: &mut Context<Self>) {
        self.state.borrow().deliver_locally(&msg.user, msg.event);
    }
}

impl Handler<SessionCount> for SessionHub {
    type Result = usize;

    fn handle(&mut self, msg: SessionCount, _: &mut Context<Self>) -> usize {
        self.state
            .borrow()
            .users
            .get(&msg.user)
            .map_or(0, |entry| entry.tabs.len())
    }
}

/// The text so far of `user`'s answer in a conversation that another instance
/// (`origin`) runs, as this instance's tabs got it; None if there is no copy here. If
/// `origin` has not answered this instance's announcement yet, it waits for that answer
/// (which brings the text); it never resolves if none comes (the caller bounds the
/// wait). Asked through the hub's mailbox after the tab started holding its frames, so
/// the copy holds at least every delta the tab got before.
#[derive(Message)]
#[rtype(result = "Option<Snapshot>")]
pub struct RemoteSnapshot {
    pub user: String,
    pub conversation_id: String,
    pub origin: Arc<str>,
}

impl Handler<RemoteSnapshot> for SessionHub {
    type Result = ResponseFuture<Option<Snapshot>>;

    fn handle(&mut self, msg: RemoteSnapshot, _: &mut Context<Self>) -> Self::Result {
        let mut state = self.state.borrow_mut();
        let Some(entry) = state.users.get_mut(&msg.user) else {
            return Box::pin(async { None });
        };
        if entry.others.contains(&msg.origin) {
            let copy = entry.copy_of(&msg.conversation_id);
            return Box::pin(async move { copy });
        }
        // Waits that ran out are dropped here; the rest go when the user does.
        entry.waiting.retain(|waiting| !waiting.reply.is_closed());
        let (reply, copy) = oneshot::channel();
        entry.waiting.push(Waiting {
            origin: msg.origin,
            conversation_id: msg.conversation_id,
            reply,
        });
        Box::pin(async move { copy.await.ok().flatten() })
    }
}

/// The copy this hub keeps of the user's answer `message_id`, running on another
/// instance; with `take`, the hub lets go of it (that instance died, and this one ends
/// the answer with the copy's text).
#[derive(Message)]
#[rtype(result = "Option<Snapshot>")]
pub struct CopyOf {
    pub user: String,
    pub conversation_id: String,
    pub message_id: String,
    pub take: bool,
}

impl Handler<CopyOf> for SessionHub {
    type Result = Option<Snapshot>;

    fn handle(&mut self, msg: CopyOf, _: &mut Context<Self>) -> Option<Snapshot> {
        let mut state = self.state.borrow_mut();
        let remote = &mut state.users.get_mut(&msg.user)?.remote;
        let copy = remote
            .get(&msg.conversation_id)
            .filter(|answer| answer.text.message_id == msg.message_id)?
            .text
            .clone();
        if msg.take {
            remote.remove(&msg.conversation_id);
        }
        Some(copy)
    }
}

/// The copies of answers running elsewhere that have not grown for `idle`, as (user,
/// conversation, message): their ends may have been lost (Redis was away when they were
/// sent), and the caller finds out whether they ended.
#[derive(Message)]
#[rtype(result = "Vec<(String, String, String)>")]
pub struct IdleCopies {
    pub idle: Duration,
}

impl Handler<IdleCopies> for SessionHub {
    type Result = Vec<(String, String, String)>;

    fn handle(&mut self, msg: IdleCopies, _: &mut Context<Self>) -> Self::Result {
        let state = self.state.borrow();
        let mut idle = Vec::new();
        for (user, entry) in &state.users {
            for answer in entry.remote.values() {
                if answer.touched.elapsed() >= msg.idle {
                    let text = &answer.text;
                    idle.push((
                        user.clone(),
                        text.conversation_id.clone(),
                        text.message_id.clone(),
                    ));
                }
            }
        }
        idle
    }
}

/// The hubs of every shard: a user's tabs join the hub of the user's shard, and every
/// event of the user goes through it. A shard's hub starts with the first event for it
/// (the shards may be HTTP workers that start after the hubs are made).
#[derive(Clone)]
pub struct Hubs {
    shards: Shards,
    hubs: Arc<[OnceLock<Addr<SessionHub>>]>,
    setup: Arc<HubSetup>,
}

/// What every hub starts with.
struct HubSetup {
    fan_out: Option<Arc<dyn FanOut>>,
    max_tabs: usize,
    generations: Arc<OnceLock<CancelSink>>,
}

impl Hubs {
    /// The hubs of `shards`.
    pub fn start(shards: &Shards, fan_out: Option<Arc<dyn FanOut>>, max_tabs: usize) -> Hubs {
        Hubs {
            shards: shards.clone(),
            hubs: (0..shards.len()).map(|_| OnceLock::new()).collect(),
            setup: Arc::new(HubSetup {
                fan_out,
                max_tabs,
                generations: Arc::new(OnceLock::new()),
            }),
        }
    }

    /// The hub of `user`.
    pub fn of(&self, user: &str) -> &Addr<SessionHub> {
        let index = self.shards.index(user);
        self.hubs[index].get_or_init(|| {
            let setup = self.setup.clone();
            SessionHub::start_in_arbiter(&self.shards.arbiter_at(index), move |_| SessionHub::new(&setup))
        })
    }

    /// An event for every session of `user`, here and on other instances.
    pub fn publish(&self, user: &str, event: Event) {
        self.of(user).do_send(Publish {
            user: user.to_owned(),
            event,
        });
    }

    /// The hubs started so far (a shard's starts with its first event).
    pub fn started(&self) -> impl Iterator<Item = &Addr<SessionHub>> {
        self.hubs.iter().filter_map(OnceLock::get)
    }

    /// Sends `frame` to the tabs of `user` on this instance only.
    pub fn deliver_here(&self, user: &str, frame: &ServerFrame) {
        let event = Event::Frame(Deliver::frame(frame));
        self.of(user).do_send(Local {
            user: user.to_owned(),
            event,
        });
    }

    /// Sends `frame` to every tab of `user`, on every instance.
    pub fn publish_frame(&self, user: &str, frame: &ServerFrame) {
        self.of(user).do_send(Publish::frame(user, frame));
    }

    /// Tells every hub how to stop a local generation (once: the registry made with
    /// these hubs).
    pub(crate) fn cancel_with(&self, cancel: CancelSink) {
        let _ = self.setup.generations.set(cancel);
    }
}
