//! The users of a fault run: each has one tab on instance A and one on B, sends every few
//! seconds while the load is on, and writes down everything its tabs see in its [`Book`]:
//! its sends and their verdicts, and every answer with what each tab made of it.
//!
//! A tab behaves as the web client does where faults are concerned: when its socket
//! closes it reconnects with backoff and full jitter, authenticates with an `auth` frame,
//! and sends `conversation.open` for the answers it was following; a gap in an answer's
//! `seq` makes it open that conversation again for a snapshot.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use serde_json::Value;
use tokio::sync::{mpsc, watch};
use tokio_tungstenite::tungstenite::Message;

use crate::client::connect;
use crate::stats::SeqCheck;

/// What the users do now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Tabs stay connected; nobody sends.
    Quiet,
    Load,
    /// Close the tabs and end.
    Stop,
}

/// A send is unanswered when neither its `message.created` nor an `error` with its
/// `clientId` came within this.
pub const ANSWER_LIMIT: Duration = Duration::from_secs(10);

/// A small xorshift generator: the send times and the reconnect jitter need spread, not
/// quality, and the harness takes no dependency for it.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    pub fn between(&mut self, lo: Duration, hi: Duration) -> Duration {
        lo + hi.saturating_sub(lo).mul_f64(self.unit())
    }
}

/// One `chat.send` and what came of it.
#[derive(Clone, Debug)]
pub struct SendRec {
    pub client_id: String,
    /// The instance (0: A, 1: B) of the tab it went out on: the answer runs there.
    pub instance: usize,
    pub follow_up: bool,
    pub sent_at: Instant,
    /// The sending tab's connection (its count of `ready`s) when it went out.
    epoch: u64,
    /// The user message's `message.created`, on whichever tab came first.
    pub accepted_at: Option<Instant>,
    /// An `error` with the `clientId` before any `message.created`: its code.
    pub refused: Option<(Instant, String)>,
    /// An `error` with the `clientId` after the send was accepted (`model_error`, or a
    /// failure after counting).
    pub late_error: Option<String>,
    pub answer: Option<String>,
    /// The sending tab's socket closed before any verdict.
    pub socket_closed: bool,
}

impl SendRec {
    fn verdict_at(&self) -> Option<Instant> {
        self.accepted_at.or(self.refused.as_ref().map(|r| r.0))
    }
}

/// What one tab made of one answer.
#[derive(Clone, Debug, Default)]
pub struct TabView {
    /// The answer's `message.created`, a delta or a snapshot reached this tab.
    pub seen: bool,
    /// The client's view of the order: a delta past `seq + 1` is a gap and asks for a
    /// snapshot.
    pub check: SeqCheck,
    /// The `seq`s that came as deltas, and the highest one a snapshot (or joining the
    /// answer mid-stream) covered: what is in neither is a delta the tab never got,
    /// however many snapshots it asked for.
    received: BTreeSet<u64>,
    covered: u64,
    /// Deltas that came again, or at or below what a snapshot had covered.
    pub duplicates: u64,
    /// The tab reconnected after its last frame of the answer (or after the answer
    /// started) and heard of it next by a delta further on: it joined mid-stream and
    /// waits for a snapshot. What it missed while away is not a gap.
    pub joined: bool,
    /// When the tab last got a frame of this answer.
    last_contact: Option<Instant>,
    /// The text as the tab shows it: deltas appended in order, replaced by snapshots.
    pub text: String,
    pub deltas: u64,
    /// The `seq` of the first delta this tab got.
    pub first_seq: Option<u64>,
    /// A gap was seen: the text is wrong until the snapshot asked for comes.
    pub stale: bool,
    pub snapshots: u32,
    /// `conversation.open` sent for this answer after a gap.
    pub resyncs: u32,
    /// `message.completed`: finish reason and content.
    pub completed: Option<(String, String)>,
}

/// One answer (an assistant message id seen in a frame).
#[derive(Clone, Debug)]
pub struct AnswerRec {
    pub conversation: String,
    /// Index in the book's sends, when its `message.created` named the send.
    pub send: Option<usize>,
    pub first_seen: Instant,
    pub first_delta_at: Option<Instant>,
    last_activity: Instant,
    /// The first `message.completed`'s finish reason.
    pub finish: Option<String>,
    pub tabs: [TabView; 2],
}

impl TabView {
    /// Deltas up to the highest received that the tab got neither as a delta nor
    /// covered by a snapshot.
    pub fn missing(&self) -> u64 {
        let Some(&top) = self.received.last() else {
            return 0;
        };
        (self.covered + 1..=top)
            .filter(|s| !self.received.contains(s))
            .count() as u64
    }
}

impl AnswerRec {
    /// Whether a frame of it came within `within` before `now`.
    pub fn moving(&self, now: Instant, within: Duration) -> bool {
        now.duration_since(self.last_activity) < within
    }

    fn new(conversation: String, at: Instant) -> AnswerRec {
        AnswerRec {
            conversation,
            send: None,
            first_seen: at,
            first_delta_at: None,
            last_activity: at,
            finish: None,
            tabs: Default::default(),
        }
    }

    /// Whether any tab saw a delta of it (or a snapshot with text).
    pub fn any_text(&self) -> bool {
        self.tabs.iter().any(|t| t.deltas > 0 || !t.text.is_empty())
    }
}

/// Everything one user's tabs saw, in the order they saw it.
#[derive(Debug)]
pub struct Book {
    pub user: usize,
    pub sends: Vec<SendRec>,
    by_client: HashMap<String, usize>,
    pub answers: HashMap<String, AnswerRec>,
    /// Sends that were due while neither tab was connected.
    pub not_sent: Vec<Instant>,
    /// `error` frames without a `clientId` of ours (conversation.open, ready…): when, code.
    pub other_errors: Vec<(Instant, String)>,
    /// A tab's socket closed (not by us): when, tab, the close code and reason.
    pub drops: Vec<(Instant, usize, String)>,
    /// A tab got `ready` again after a drop.
    pub reconnects: Vec<(Instant, usize)>,
    /// Connects that failed (refused, no `ready`, an `error` instead of `ready`).
    pub connect_failures: Vec<(Instant, usize, String)>,
    pub connected: [bool; 2],
    epochs: [u64; 2],
    /// When each tab last got `ready`.
    up_since: [Option<Instant>; 2],
    /// The conversation a follow-up may go to: the last one whose answer ended.
    idle_conversation: Option<String>,
}

impl Book {
    pub fn new(user: usize) -> Book {
        Book {
            user,
            sends: Vec::new(),
            by_client: HashMap::new(),
            answers: HashMap::new(),
            not_sent: Vec::new(),
            other_errors: Vec::new(),
            drops: Vec::new(),
            reconnects: Vec::new(),
            connect_failures: Vec::new(),
            connected: [false; 2],
            epochs: [0; 2],
            up_since: [None; 2],
            idle_conversation: None,
        }
    }

    /// Whether something the user started may still change: a send younger than the
    /// answer limit without a verdict, or an accepted answer still moving (or started
    /// less than `quiet` ago and not ended).
    pub fn busy(&self, now: Instant, quiet: Duration) -> bool {
        let waiting = self.sends.iter().any(|s| {
            s.verdict_at().is_none() && !s.socket_closed && now.duration_since(s.sent_at) < ANSWER_LIMIT
        });
        let streaming = self
            .answers
            .values()
            .any(|a| a.finish.is_none() && now.duration_since(a.last_activity) < quiet);
        waiting || streaming
    }

    fn answer(&mut self, id: &str, conversation: Option<&str>, at: Instant) -> &mut AnswerRec {
        self.answers
            .entry(id.to_owned())
            .or_insert_with(|| AnswerRec::new(conversation.unwrap_or_default().to_owned(), at))
    }

    /// Applies one frame tab `tab` received at `at`; returns frames the tab must send
    /// (a `conversation.open` after a gap).
    pub fn on_frame(&mut self, tab: usize, at: Instant, f: &Value) -> Vec<String> {
        let s = |key: &str| f.get(key).and_then(Value::as_str);
        let mut replies = Vec::new();
        let send = s("clientId").and_then(|c| self.by_client.get(c).copied());
        match s("type").unwrap_or_default() {
            "conversation.created" => {}
            "message.created" => {
                let Some(m) = f.get("message") else { return replies };
                let id = m.get("_id").and_then(Value::as_str).unwrap_or_default();
                let role = m.get("role").and_then(Value::as_str).unwrap_or_default();
                let conversation = s("conversationId");
                if role == "user" {
                    if let Some(i) = send {
                        let rec = &mut self.sends[i];
                        if rec.accepted_at.is_none() {
                            rec.accepted_at = Some(at);
                        }
                    }
                } else if role == "assistant" && !id.is_empty() {
                    let a = self.answer(id, conversation, at);
                    a.last_activity = at;
                    if a.send.is_none() {
                        a.send = send;
                    }
                    a.tabs[tab].seen = true;
                    a.tabs[tab].last_contact = Some(at);
                    if let Some(i) = send {
                        self.sends[i].answer = Some(id.to_owned());
                    }
                }
            }
            "message.delta" => {
                let (Some(id), Some(seq)) = (s("messageId"), f.get("seq").and_then(Value::as_u64)) else {
                    return replies;
                };
                let conversation = s("conversationId").map(str::to_owned);
                let up_since = self.up_since[tab];
                let a = self.answer(id, conversation.as_deref(), at);
                a.last_activity = at;
                a.first_delta_at.get_or_insert(at);
                let first_seen = a.first_seen;
                let view = &mut a.tabs[tab];
                let first_contact = !view.seen;
                let came_back = up_since.is_some_and(|up| up > view.last_contact.unwrap_or(first_seen));
                view.last_contact = Some(at);
                view.seen = true;
                view.deltas += 1;
                view.first_seq.get_or_insert(seq);
                if view.completed.is_some() {
                    return replies;
                }
                if view.received.contains(&seq) || seq <= view.covered {
                    view.duplicates += 1;
                } else {
                    view.received.insert(seq);
                }
                // A tab that came back while the answer streamed hears of it mid-stream:
                // what it missed while away is not a gap. It waits for the snapshot of
                // the conversation: one it followed was reopened when it reconnected
                // (`on_up`); a new one is opened now, as the web client opens the one it
                // shows.
                if came_back && seq > view.check.last() + 1 {
                    view.joined = true;
                    view.covered = view.covered.max(seq - 1);
                    view.check.resume_at(seq);
                    view.stale = true;
                    if let (true, Some(c)) = (first_contact, conversation) {
                        replies.push(open_frame(&c));
                    }
                    return replies;
                }
                let (lost, dup) = (view.check.lost, view.check.duplicated);
                view.check.see(seq);
                if view.check.duplicated > dup {
                    return replies;
                }
                if view.check.lost > lost {
                    // A gap: the client's rule is to ask for a snapshot rather than show
                    // a text with a hole in it.
                    if !view.stale {
                        view.stale = true;
                        view.resyncs += 1;
                        if let Some(c) = conversation {
                            replies.push(open_frame(&c));
                        }
                    }
                    return replies;
                }
                if !view.stale {
                    view.text.push_str(s("delta").unwrap_or_default());
                }
            }
            "message.snapshot" => {
                let (Some(id), Some(seq)) = (s("messageId"), f.get("seq").and_then(Value::as_u64)) else {
                    return replies;
                };
                let a = self.answer(id, s("conversationId"), at);
                a.last_activity = at;
                let view = &mut a.tabs[tab];
                view.last_contact = Some(at);
                if view.completed.is_none() {
                    view.seen = true;
                    view.snapshots += 1;
                    view.stale = false;
                    view.text = s("content").unwrap_or_default().to_owned();
                    view.check.resume_at(seq);
                    view.covered = view.covered.max(seq);
                }
            }
            "message.completed" => {
                let Some(m) = f.get("message") else { return replies };
                let Some(id) = m.get("_id").and_then(Value::as_str) else {
                    return replies;
                };
                let content = m
                    .get("content")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                let finish = s("finishReason").unwrap_or("?").to_owned();
                let a = self.answer(id, s("conversationId"), at);
                a.last_activity = at;
                if a.finish.is_none() {
                    a.finish = Some(finish.clone());
                }
                let view = &mut a.tabs[tab];
                view.seen = true;
                view.last_contact = Some(at);
                if view.completed.is_none() {
                    view.completed = Some((finish, content));
                }
                let conversation = a.conversation.clone();
                if !conversation.is_empty() {
                    self.idle_conversation = Some(conversation);
                }
            }
            "error" => {
                let code = s("code").unwrap_or("?").to_owned();
                match send {
                    Some(i) => {
                        let rec = &mut self.sends[i];
                        if rec.accepted_at.is_none() && rec.refused.is_none() {
                            rec.refused = Some((at, code));
                        } else if rec.late_error.is_none() {
                            rec.late_error = Some(code);
                        }
                    }
                    None => self.other_errors.push((at, code)),
                }
            }
            _ => {}
        }
        replies
    }

    /// Tab `tab` got `ready`; returns what it sends then: a `conversation.open` for each
    /// conversation whose answer it was following (seen, not completed), as the web
    /// client reopens the conversation it shows.
    pub fn on_up(&mut self, tab: usize, at: Instant) -> Vec<String> {
        self.connected[tab] = true;
        self.epochs[tab] += 1;
        self.up_since[tab] = Some(at);
        if self.epochs[tab] == 1 {
            return Vec::new();
        }
        self.reconnects.push((at, tab));
        let mut conversations: Vec<&str> = self
            .answers
            .values()
            .filter(|a| a.tabs[tab].seen && a.tabs[tab].completed.is_none() && !a.conversation.is_empty())
            .map(|a| a.conversation.as_str())
            .collect();
        conversations.sort_unstable();
        conversations.dedup();
        // A user has at most 3 answers running; more would be old ones from a dead
        // instance, and the server allows 8 requests in flight.
        conversations.into_iter().take(3).map(open_frame).collect()
    }

    pub fn on_down(&mut self, tab: usize, at: Instant, closed: Option<String>) {
        self.connected[tab] = false;
        if let Some(why) = closed {
            self.drops.push((at, tab, why));
        }
        let epoch = self.epochs[tab];
        for s in &mut self.sends {
            if s.instance == tab && s.epoch == epoch && s.verdict_at().is_none() {
                s.socket_closed = true;
            }
        }
    }

    /// The next send of this user, if a tab is connected: (tab, frame). New conversations
    /// and follow-ups alternate, and so do the instances, every second send, so that
    /// both instances see both kinds.
    pub fn next_send(&mut self, at: Instant) -> Option<(usize, String)> {
        let k = self.sends.len();
        let preferred = (k / 2 + self.user) % 2;
        let tab = [preferred, 1 - preferred]
            .into_iter()
            .find(|&t| self.connected[t]);
        let Some(tab) = tab else {
            self.not_sent.push(at);
            return None;
        };
        // A follow-up goes to a conversation whose answer ended (else it would be refused
        // with generation_in_progress, which says nothing about faults): without one, it
        // starts a new conversation.
        let follow_up = k % 2 == 1;
        let conversation = if follow_up {
            self.idle_conversation.take()
        } else {
            None
        };
        let client_id = format!("f{}-{k}", self.user);
        let frame = serde_json::json!({
            "type": "chat.send",
            "clientId": client_id,
            "conversationId": conversation,
            "content": format!("Fault test message {k} from user {}.", self.user),
        });
        self.by_client.insert(client_id.clone(), k);
        self.sends.push(SendRec {
            client_id,
            instance: tab,
            follow_up: conversation.is_some(),
            sent_at: at,
            epoch: self.epochs[tab],
            accepted_at: None,
            refused: None,
            late_error: None,
            answer: None,
            socket_closed: false,
        });
        Some((tab, frame.to_string()))
    }
}

fn open_frame(conversation: &str) -> String {
    serde_json::json!({ "type": "conversation.open", "conversationId": conversation }).to_string()
}

/// What a tab tells its user.
enum Event {
    Up(usize),
    /// The socket closed; how, unless the harness closed it.
    Down(usize, Option<String>),
    Failed(usize, String),
    Frame(usize, Instant, Value),
}

/// One user: its two tabs (tab `t` on instance `t`) and its sends.
pub struct User {
    pub n: usize,
    pub token: String,
    pub urls: [String; 2],
    pub book: Arc<Mutex<Book>>,
    pub mode: watch::Receiver<Mode>,
    /// Seconds between one user's sends: uniform in this range.
    pub interval: (Duration, Duration),
}

fn lock(book: &Mutex<Book>) -> std::sync::MutexGuard<'_, Book> {
    // A panic elsewhere must not hide what was recorded: take the book as it is.
    book.lock().unwrap_or_else(|e| e.into_inner())
}

pub async fn run_user(user: User) {
    let (events_tx, mut events) = mpsc::unbounded_channel();
    let mut outs = Vec::new();
    let mut tabs = Vec::new();
    for t in 0..2 {
        let (out_tx, out_rx) = mpsc::unbounded_channel();
        outs.push(out_tx);
        tabs.push(tokio::spawn(run_tab(
            user.urls[t].clone(),
            user.token.clone(),
            t,
            events_tx.clone(),
            out_rx,
            user.mode.clone(),
            Rng::new((user.n * 2 + t) as u64 + 1),
        )));
    }
    drop(events_tx);
    let mut rng = Rng::new(user.n as u64 + 1_000_003);
    let mut mode = user.mode.clone();
    let mut next_send: Option<tokio::time::Instant> = None;
    loop {
        let load = *mode.borrow() == Mode::Load;
        tokio::select! {
            event = events.recv() => {
                let Some(event) = event else { break };
                let mut book = lock(&user.book);
                match event {
                    Event::Up(tab) => {
                        let frames = book.on_up(tab, Instant::now());
                        deliver(&outs[tab], frames);
                    }
                    Event::Down(tab, closed) => book.on_down(tab, Instant::now(), closed),
                    Event::Failed(tab, why) => book.connect_failures.push((Instant::now(), tab, why)),
                    Event::Frame(tab, at, frame) => {
                        let frames = book.on_frame(tab, at, &frame);
                        deliver(&outs[tab], frames);
                    }
                }
            }
            _ = tokio::time::sleep_until(next_send.unwrap_or_else(tokio::time::Instant::now)),
                if load && next_send.is_some() =>
            {
                let sent = lock(&user.book).next_send(Instant::now());
                if let Some((tab, frame)) = sent {
                    let _ = outs[tab].send(frame);
                }
                next_send = Some(tokio::time::Instant::now() + rng.between(user.interval.0, user.interval.1));
            }
            changed = mode.changed() => {
                if changed.is_err() {
                    break;
                }
                let now = *mode.borrow();
                match now {
                    // The users' first sends spread over one interval, so they do not all
                    // land at once when the load resumes.
                    Mode::Load => {
                        if next_send.is_none() {
                            next_send = Some(tokio::time::Instant::now() + rng.between(Duration::ZERO, user.interval.1));
                        }
                    }
                    Mode::Quiet => next_send = None,
                    Mode::Stop => break,
                }
            }
        }
    }
    drop(outs);
    for t in tabs {
        let _ = tokio::time::timeout(Duration::from_secs(5), t).await;
    }
}

fn deliver(out: &mpsc::UnboundedSender<String>, frames: Vec<String>) {
    for f in frames {
        // A tab that is gone drops them: it reopens what it follows when it is back.
        let _ = out.send(f);
    }
}

/// Resolves once the run stops. The `Ref` that `wait_for` gives is dropped here, not
/// held in a `select!` (which would make the task not `Send`).
async fn until_stop(mode: &watch::Receiver<Mode>) {
    let _ = mode.clone().wait_for(|m| *m == Mode::Stop).await;
}

/// Connects, authenticates with an `auth` frame, and waits for `ready`.
async fn open(url: &str, token: &str) -> anyhow::Result<crate::client::Ws> {
    let source = std::net::IpAddr::from([127, 0, 0, 1]);
    let mut ws = connect(url, source, None).await?;
    let auth = serde_json::json!({ "type": "auth", "token": token });
    ws.send(Message::text(auth.to_string())).await?;
    while let Some(msg) = ws.next().await {
        match msg? {
            Message::Text(text) => {
                let frame: Value = serde_json::from_str(&text)?;
                match frame.get("type").and_then(Value::as_str) {
                    Some("ready") => return Ok(ws),
                    Some("error") => anyhow::bail!(
                        "error instead of ready: {}",
                        frame.get("code").and_then(Value::as_str).unwrap_or("?")
                    ),
                    _ => {}
                }
            }
            Message::Close(close) => {
                anyhow::bail!(
                    "closed before ready: {}",
                    close.map_or("no code".into(), |c| c.to_string())
                )
            }
            _ => {}
        }
    }
    anyhow::bail!("closed before ready")
}

/// One tab: connects, forwards its frames to the user, writes the user's frames, and
/// reconnects whenever its socket closes, until the run stops.
async fn run_tab(
    url: String,
    token: String,
    tab: usize,
    events: mpsc::UnboundedSender<Event>,
    mut out: mpsc::UnboundedReceiver<String>,
    mode: watch::Receiver<Mode>,
    mut rng: Rng,
) {
    // The web client's backoff: full jitter, from 1 s doubling to 30 s, reset once a
    // connection has stayed up for 10 s.
    const FIRST: Duration = Duration::from_secs(1);
    const CAP: Duration = Duration::from_secs(30);
    let mut backoff = FIRST;
    let mut retry = false;
    let stopped = |m: &watch::Receiver<Mode>| *m.borrow() == Mode::Stop;
    loop {
        if stopped(&mode) {
            return;
        }
        if retry {
            let wait = rng.between(Duration::ZERO, backoff);
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                _ = until_stop(&mode) => return,
            }
        }
        retry = true;
        let ws = match tokio::time::timeout(Duration::from_secs(10), open(&url, &token)).await {
            Ok(Ok(ws)) => ws,
            Ok(Err(e)) => {
                let _ = events.send(Event::Failed(tab, format!("{e:#}")));
                backoff = (backoff * 2).min(CAP);
                continue;
            }
            Err(_) => {
                let _ = events.send(Event::Failed(tab, "no ready within 10 s".into()));
                backoff = (backoff * 2).min(CAP);
                continue;
            }
        };
        // Frames meant for the connection that closed are not sent on this one.
        while out.try_recv().is_ok() {}
        let up = Instant::now();
        if events.send(Event::Up(tab)).is_err() {
            return;
        }
        let (mut sink, mut stream) = ws.split();
        // How the socket closed: none when the harness closed it.
        let closed = loop {
            tokio::select! {
                msg = stream.next() => match msg {
                    Some(Ok(Message::Text(text))) => {
                        let at = Instant::now();
                        if let Ok(frame) = serde_json::from_str::<Value>(&text) {
                            let _ = events.send(Event::Frame(tab, at, frame));
                        }
                    }
                    Some(Ok(Message::Close(frame))) => {
                        break Some(frame.map_or("close without a code".into(), |f| format!("{} {}", u16::from(f.code), f.reason)));
                    }
                    Some(Err(e)) => break Some(format!("socket error: {e}")),
                    None => break Some("socket ended".into()),
                    Some(Ok(_)) => {}
                },
                frame = out.recv() => match frame {
                    Some(text) => {
                        if let Err(e) = sink.send(Message::text(text)).await {
                            break Some(format!("socket error: {e}"));
                        }
                    }
                    None => break None,
                },
                _ = until_stop(&mode) => break None,
            }
        };
        let by_us = closed.is_none();
        if by_us {
            let _ = sink.close().await;
        }
        let _ = events.send(Event::Down(tab, closed));
        if by_us {
            return;
        }
        backoff = if up.elapsed() >= Duration::from_secs(10) {
            FIRST
        } else {
            (backoff * 2).min(CAP)
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn connected_book() -> Book {
        let mut b = Book::new(3);
        let now = Instant::now();
        b.on_up(0, now);
        b.on_up(1, now);
        b
    }

    #[test]
    fn sends_alternate_conversations_and_instances() {
        let mut b = connected_book();
        let now = Instant::now();
        let (tab0, f0) = b.next_send(now).unwrap();
        let f0: Value = serde_json::from_str(&f0).unwrap();
        assert_eq!(f0["clientId"], "f3-0");
        assert!(f0["conversationId"].is_null());
        // No answer has ended yet: the follow-up starts a conversation too.
        let (tab1, _) = b.next_send(now).unwrap();
        assert_eq!(tab0, tab1);
        assert!(!b.sends[1].follow_up);
        let (tab2, _) = b.next_send(now).unwrap();
        assert_ne!(tab2, tab0);
        // One tab down: the other sends; both down: nothing goes out.
        b.on_down(0, now, Some("1001 idle timeout".into()));
        assert_eq!(b.next_send(now).unwrap().0, 1);
        b.on_down(1, now, Some("socket ended".into()));
        assert!(b.next_send(now).is_none());
        assert_eq!(b.not_sent.len(), 1);
    }

    #[test]
    fn a_send_is_accepted_answered_and_followed_up() {
        let mut b = connected_book();
        let t = Instant::now();
        let (tab, _) = b.next_send(t).unwrap();
        let created = |role: &str, id: &str| {
            json!({"type":"message.created","conversationId":"c1","clientId":"f3-0",
                   "message":{"_id":id,"role":role,"content":"","status":"complete"}})
        };
        for t2 in 0..2 {
            b.on_frame(t2, t, &created("user", "q1"));
            b.on_frame(t2, t, &created("assistant", "a1"));
        }
        assert!(b.sends[0].accepted_at.is_some());
        assert_eq!(b.sends[0].answer.as_deref(), Some("a1"));
        for (seq, d) in [(1, "Hel"), (2, "lo")] {
            let f =
                json!({"type":"message.delta","conversationId":"c1","messageId":"a1","seq":seq,"delta":d});
            b.on_frame(0, t, &f);
            b.on_frame(1, t, &f);
        }
        let done = json!({"type":"message.completed","conversationId":"c1","finishReason":"stop",
                          "message":{"_id":"a1","role":"assistant","content":"Hello","status":"complete"}});
        b.on_frame(0, t, &done);
        b.on_frame(1, t, &done);
        let a = &b.answers["a1"];
        assert_eq!(a.finish.as_deref(), Some("stop"));
        assert_eq!(
            (a.tabs[0].text.as_str(), a.tabs[1].text.as_str()),
            ("Hello", "Hello")
        );
        assert!(!b.busy(t, Duration::from_secs(3)));
        let _ = tab;
        let (_, f) = b.next_send(t).unwrap();
        let f: Value = serde_json::from_str(&f).unwrap();
        assert_eq!(f["conversationId"], "c1");
        assert!(b.sends[1].follow_up);
    }

    #[test]
    fn a_gap_asks_for_a_snapshot_and_the_snapshot_repairs_the_text() {
        let mut b = connected_book();
        let t = Instant::now();
        let delta = |seq: u64, d: &str| json!({"type":"message.delta","conversationId":"c9","messageId":"a9","seq":seq,"delta":d});
        assert!(b.on_frame(1, t, &delta(1, "a")).is_empty());
        let replies = b.on_frame(1, t, &delta(3, "c"));
        assert_eq!(replies.len(), 1);
        assert!(replies[0].contains("conversation.open") && replies[0].contains("c9"));
        // A second gap before the snapshot does not ask again.
        assert!(b.on_frame(1, t, &delta(5, "e")).is_empty());
        let snap = json!({"type":"message.snapshot","conversationId":"c9","messageId":"a9","seq":5,"content":"abcde"});
        b.on_frame(1, t, &snap);
        b.on_frame(1, t, &delta(6, "f"));
        b.on_frame(1, t, &delta(6, "f"));
        let v = &b.answers["a9"].tabs[1];
        assert_eq!(v.text, "abcdef");
        assert_eq!((v.check.lost, v.check.duplicated, v.resyncs), (2, 1, 1));
        // 2 and 4 came neither as deltas nor in a snapshot before 5; the snapshot covered
        // them, so nothing is missing; the repeated 6 is a duplicate.
        assert_eq!((v.missing(), v.duplicates), (0, 1));
        // A snapshot that covers nothing (an instance that dropped its copy) leaves the
        // hole: 2 to 9 never came.
        let mut b = connected_book();
        let t = Instant::now();
        b.on_frame(
            0,
            t,
            &json!({"type":"message.delta","conversationId":"c8","messageId":"a8","seq":1,"delta":"a"}),
        );
        b.on_frame(
            0,
            t,
            &json!({"type":"message.snapshot","conversationId":"c8","messageId":"a8","seq":0,"content":""}),
        );
        b.on_frame(
            0,
            t,
            &json!({"type":"message.delta","conversationId":"c8","messageId":"a8","seq":10,"delta":"j"}),
        );
        assert_eq!(b.answers["a8"].tabs[0].missing(), 8);
    }

    #[test]
    fn a_tab_back_after_an_answer_started_joins_it_without_a_gap() {
        let mut b = connected_book();
        let t0 = Instant::now();
        let delta = |seq: u64| json!({"type":"message.delta","conversationId":"c7","messageId":"a7","seq":seq,"delta":"x"});
        b.on_frame(0, t0, &delta(1));
        b.on_down(1, t0, Some("socket ended".into()));
        let t1 = t0 + Duration::from_millis(10);
        b.on_up(1, t1);
        let replies = b.on_frame(1, t1, &delta(5));
        assert!(replies[0].contains("conversation.open"));
        let v = &b.answers["a7"].tabs[1];
        assert!(v.joined && v.stale);
        assert_eq!((v.missing(), v.check.lost, v.resyncs), (0, 0, 0));
        // Tab 0 followed the answer, lost its socket, and came back: the answer is
        // reopened on reconnecting, and the deltas it missed meanwhile are no gap.
        b.on_frame(0, t1, &delta(2));
        b.on_down(0, t1, Some("socket ended".into()));
        let t2 = t1 + Duration::from_millis(10);
        let reopened = b.on_up(0, t2);
        assert!(reopened.iter().any(|f| f.contains("c7")));
        assert!(b.on_frame(0, t2, &delta(9)).is_empty());
        let v = &b.answers["a7"].tabs[0];
        assert!(v.joined && v.stale);
        assert_eq!((v.missing(), v.resyncs), (0, 0));
        // A connected tab that skips deltas has a gap.
        b.on_frame(1, t2, &delta(6));
        assert_eq!(b.answers["a7"].tabs[1].missing(), 0);
        b.on_frame(0, t2, &delta(12));
        assert_eq!(b.answers["a7"].tabs[0].missing(), 2);
    }

    #[test]
    fn refusals_closed_sockets_and_reopens_after_a_reconnect() {
        let mut b = connected_book();
        let t = Instant::now();
        let (tab, _) = b.next_send(t).unwrap();
        let err = json!({"type":"error","clientId":"f3-0","code":"service_unavailable","message":"Service unavailable."});
        b.on_frame(tab, t, &err);
        assert_eq!(b.sends[0].refused.as_ref().unwrap().1, "service_unavailable");
        let (tab, _) = b.next_send(t).unwrap();
        // An answer this tab follows, then its socket drops before the next send's verdict.
        let f = json!({"type":"message.delta","conversationId":"c2","messageId":"a2","seq":1,"delta":"x"});
        b.on_frame(tab, t, &f);
        b.on_down(tab, t, Some("1008 too many requests in flight".into()));
        assert!(b.sends[1].socket_closed);
        let frames = b.on_up(tab, t);
        assert_eq!(frames.len(), 1);
        assert!(frames[0].contains("c2"));
        assert_eq!((b.drops.len(), b.reconnects.len()), (1, 1));
        assert_eq!(b.drops[0].2, "1008 too many requests in flight");
        // Errors about other frames are kept apart.
        b.on_frame(
            tab,
            t,
            &json!({"type":"error","code":"not_found","message":"Not found"}),
        );
        assert_eq!(b.other_errors.len(), 1);
    }

    #[test]
    fn the_generator_spreads_over_its_range() {
        let mut r = Rng::new(7);
        let (lo, hi) = (Duration::from_secs(3), Duration::from_secs(5));
        let xs: Vec<Duration> = (0..1000).map(|_| r.between(lo, hi)).collect();
        assert!(xs.iter().all(|x| *x >= lo && *x < hi));
        let mean = xs.iter().map(Duration::as_secs_f64).sum::<f64>() / 1000.0;
        assert!((mean - 4.0).abs() < 0.1, "{mean}");
    }
}
