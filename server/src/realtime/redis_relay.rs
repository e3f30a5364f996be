//! Events between instances over Redis.
//!
//! - Every user has a channel (`{prefix}user:<id>`); an instance subscribes to the
//!   channels of the users it watches (has tabs or running answers of). Cancels go on one
//!   control channel that every instance watches, since the instance running an answer
//!   may have no tab of its user left.
//! - Presence: once subscribed, an instance announces itself on the user's channel
//!   (`W`); those already there write the text of the user's running answers, then
//!   answer (`H`); one that stops watching says so (`L`). A hub publishes a user's frames
//!   only while another instance watches them (see `chat_actors::hub`), so a user whose
//!   tabs are all on one instance costs Redis nothing per delta. A tab opening a
//!   conversation whose answer runs on an instance that has not answered yet waits for
//!   that answer (at most `redis.timeout_ms`) before it reads the snapshot.
//! - Everything this instance sends comes from the hub, in the order things happened,
//!   and goes through one writer task batched into MULTI/EXEC transactions: a delta is
//!   appended to its answer's stored text, its seq recorded and the delta published in
//!   one step, so another instance that has seen delta N finds a snapshot with at least
//!   N; `Ended` drops the text after the last delta.
//! - A conversation's answer is claimed (`SET NX`), so two instances never write one at
//!   the same time.
//! - Redis may pause or go away: every call has a time limit (`redis.timeout_ms`), the
//!   writer's queue is bounded (`redis.relay_queue`; past it events are dropped, and
//!   local tabs still get them), and both the writer and the subscriber carry on once
//!   Redis is back. The ends of answers (which give up their claims) that could not be
//!   written are tried again, so no claim outlives an outage.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use chat_actors::generation::Snapshot;
use chat_actors::hub::{AwaitInstance, Deliver, DeltaMeta, Event, FanOut, FromRemote, Hubs, Presence};
use futures_util::StreamExt;
use tokio::sync::{mpsc, oneshot};

use crate::chat::cache::Accounts;
use crate::outage::redis_call;

/// Running text and claims kept this long at most (no answer runs that long).
const LIVE_TTL_SECS: u64 = 3600;

/// KEYS: a claim. ARGV: the value it was claimed with. Deletes it if it still has it.
const RELEASE_OWN_CLAIM: &str =
    "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";

enum Command {
    Publish {
        channel: String,
        payload: String,
    },
    Append {
        text_key: String,
        meta_key: String,
        message_id: String,
        seq: u64,
        delta: String,
        channel: String,
        payload: String,
    },
    Forget {
        keys: [String; 3],
    },
    /// Writes running answers' text for an instance that joined their user, then
    /// answers it: one command, so the answer never goes without the text.
    Welcome {
        answers: Vec<Mirror>,
        channel: String,
        payload: String,
    },
    /// Answers once everything queued before it was tried.
    Flush(oneshot::Sender<()>),
}

/// A running answer's text, written whole.
struct Mirror {
    text_key: String,
    meta_key: String,
    message_id: String,
    seq: u64,
    content: String,
}

enum Watch {
    Add(String),
    Remove(String),
}

pub struct RedisRelay {
    prefix: String,
    /// Tells this instance's own publications apart from other instances'.
    origin: String,
    conn: redis::aio::ConnectionManager,
    client: redis::Client,
    timeout: Duration,
    writer: mpsc::Sender<Command>,
    writer_rx: Mutex<Option<mpsc::Receiver<Command>>>,
    /// Set while events are being dropped (logged once per episode).
    overflowing: Arc<AtomicBool>,
    /// Ends of answers not yet written (the queue was full, or Redis failed): each
    /// releases a claim, so they are kept and tried again rather than dropped.
    forgets: Arc<Mutex<Vec<[String; 3]>>>,
    watch: mpsc::UnboundedSender<Watch>,
    watch_rx: Mutex<Option<mpsc::UnboundedReceiver<Watch>>>,
    hubs: OnceLock<Hubs>,
}

impl RedisRelay {
    pub fn new(
        client: redis::Client,
        conn: redis::aio::ConnectionManager,
        prefix: String,
        timeout: Duration,
        queue: usize,
    ) -> Self {
        let (writer, writer_rx) = mpsc::channel(queue.max(1));
        // Unbounded, but the subscriber folds it into its set of channels even while
        // Redis is away, so it holds at most one change per user.
        let (watch, watch_rx) = mpsc::unbounded_channel();
        RedisRelay {
            prefix,
            origin: crate::auth::codes::new_token(),
            conn,
            client,
            timeout,
            writer,
            writer_rx: Mutex::new(Some(writer_rx)),
            overflowing: Arc::new(AtomicBool::new(false)),
            forgets: Arc::new(Mutex::new(Vec::new())),
            watch,
            watch_rx: Mutex::new(Some(watch_rx)),
            hubs: OnceLock::new(),
        }
    }

    /// Starts the writer and the subscriber; events from other instances go to the hub
    /// of their user, and those that change a user or plan drop it from `accounts`.
    pub fn attach(&self, hubs: Hubs, accounts: Arc<Accounts>) {
        let _ = self.hubs.set(hubs.clone());
        if let Some(rx) = self.writer_rx.lock().unwrap().take() {
            let writer = Writer {
                conn: self.conn.clone(),
                timeout: self.timeout,
                overflowing: self.overflowing.clone(),
                forgets: self.forgets.clone(),
                queue: self.writer.max_capacity(),
            };
            tokio::spawn(writer.run(rx));
        }
        if let Some(rx) = self.watch_rx.lock().unwrap().take() {
            let channels = Channels {
                user_prefix: self.channel(""),
                control: self.control_channel(),
            };
            let subscriber = Subscriber {
                client: self.client.clone(),
                timeout: self.timeout,
                hubs,
                accounts,
                channels,
                origin: self.origin.clone(),
                writer: self.writer.clone(),
            };
            tokio::spawn(subscriber.run(rx));
        }
    }

    /// Events waiting for the writer.
    pub fn backlog(&self) -> usize {
        self.writer.max_capacity() - self.writer.capacity()
    }

    /// Waits until what was queued before has been tried (at most the Redis time limit
    /// for what is in flight, then the same for the rest).
    pub async fn flush(&self) {
        let (done, wait) = oneshot::channel();
        if self.writer.send(Command::Flush(done)).await.is_ok() {
            let _ = wait.await;
        }
    }

    fn channel(&self, user: &str) -> String {
        format!("{}user:{user}", self.prefix)
    }

    fn control_channel(&self) -> String {
        format!("{}control", self.prefix)
    }

    /// Text, metadata and owner of a conversation's running answer; the braces keep
    /// them in one Redis Cluster slot.
    fn live_keys(&self, conversation_id: &str) -> [String; 3] {
        let base = format!("{}live:{{{conversation_id}}}", self.prefix);
        [
            format!("{base}:text"),
            format!("{base}:meta"),
            format!("{base}:owner"),
        ]
    }

    /// Claims the right to answer in a conversation; false if another answer holds it.
    pub async fn claim(&self, conversation_id: &str) -> anyhow::Result<bool> {
        let [_, _, owner] = self.live_keys(conversation_id);
        let token = format!("{}:{}", self.origin, crate::auth::codes::new_token());
        let mut conn = self.conn.clone();
        let mut set = redis::cmd("SET");
        set.arg(&owner).arg(&token).arg("NX").arg("EX").arg(LIVE_TTL_SECS);
        match redis_call(self.timeout, set.query_async::<Option<String>>(&mut conn)).await {
            Ok(claimed) => Ok(claimed.is_some()),
            Err(e) => {
                // A paused Redis still runs the SET when it resumes: queue the removal of
                // exactly this claim behind it (one command, so it is not lost to a
                // script cache miss), or the conversation stays blocked for an hour.
                let mut undo = redis::cmd("EVAL");
                undo.arg(RELEASE_OWN_CLAIM).arg(1).arg(&owner).arg(&token);
                let _ = redis_call(self.timeout, undo.query_async::<i64>(&mut conn)).await;
                Err(e)
            }
        }
    }

    /// Marks a conversation's answer as running (seq 0, no text yet), so another
    /// instance's tab that opens it before the first delta learns it is streaming.
    pub async fn start_live(&self, conversation_id: &str, message_id: &str) -> anyhow::Result<()> {
        let [text_key, meta_key, _] = self.live_keys(conversation_id);
        let mut conn = self.conn.clone();
        let mut pipe = redis::pipe();
        pipe.atomic()
            .del(&text_key)
            .ignore()
            .hset_multiple(&meta_key, &[("message", message_id), ("seq", "0")])
            .ignore()
            .expire(&meta_key, LIVE_TTL_SECS as i64)
            .ignore();
        redis_call(self.timeout, pipe.query_async::<()>(&mut conn)).await
    }

    /// Gives up a claim whose answer never started (nor its live text, if it was begun).
    pub async fn release(&self, conversation_id: &str) {
        let keys = self.live_keys(conversation_id);
        let mut conn = self.conn.clone();
        let mut del = redis::cmd("DEL");
        del.arg(&keys);
        let released: anyhow::Result<()> = redis_call(self.timeout, del.query_async(&mut conn)).await;
        if let Err(e) = released {
            tracing::warn!(error = %e, "releasing an answer claim (it expires by itself)");
        }
    }

    /// The running answer of a conversation, whichever instance runs it. If another
    /// instance runs it and has not answered this one's announcement for `user` yet, its
    /// text here may be stale: wait for that answer (it comes after the text is written),
    /// then read again.
    pub async fn snapshot(&self, user: &str, conversation_id: &str) -> anyhow::Result<Option<Snapshot>> {
        let (snapshot, owner) = self.read_live(conversation_id).await?;
        let (Some(hubs), Some(owner)) = (self.hubs.get(), owner) else {
            return Ok(snapshot);
        };
        // The claim holds `origin:token`.
        let origin = owner.split(':').next().unwrap_or_default();
        if snapshot.is_none() || origin == self.origin {
            return Ok(snapshot);
        }
        let known = AwaitInstance {
            user: user.to_owned(),
            origin: origin.into(),
        };
        match tokio::time::timeout(self.timeout, hubs.of(user).send(known)).await {
            Ok(Ok(true)) => Ok(snapshot),
            _ => Ok(self.read_live(conversation_id).await?.0),
        }
    }

    /// A running answer's text and who claimed it, as stored.
    async fn read_live(&self, conversation_id: &str) -> anyhow::Result<(Option<Snapshot>, Option<String>)> {
        let [text_key, meta_key, owner_key] = self.live_keys(conversation_id);
        let mut conn = self.conn.clone();
        let mut pipe = redis::pipe();
        pipe.atomic()
            .hget(&meta_key, "message")
            .hget(&meta_key, "seq")
            .get(&text_key)
            .get(&owner_key);
        let (message_id, seq, text, owner): (Option<String>, Option<u64>, Option<String>, Option<String>) =
            redis_call(self.timeout, pipe.query_async(&mut conn)).await?;
        let snapshot = match (message_id, seq) {
            (Some(message_id), Some(seq)) => Some(Snapshot {
                conversation_id: conversation_id.to_owned(),
                message_id,
                seq,
                content: text.unwrap_or_default(),
            }),
            _ => None,
        };
        Ok((snapshot, owner))
    }

    /// Queues a command; false if the queue is full (or the writer gone).
    fn queue(&self, command: Command) -> bool {
        queue(&self.writer, &self.overflowing, command)
    }
}

/// Queues a command for the writer; false if its queue is full (logged once per
/// episode) or it is gone.
fn queue(writer: &mpsc::Sender<Command>, overflowing: &AtomicBool, command: Command) -> bool {
    match writer.try_send(command) {
        Ok(()) => true,
        Err(mpsc::error::TrySendError::Full(_)) => {
            if !overflowing.swap(true, Ordering::Relaxed) {
                tracing::warn!(
                    queue = writer.max_capacity(),
                    "the Redis relay queue is full: events for other instances are dropped until Redis keeps up"
                );
            }
            false
        }
        Err(mpsc::error::TrySendError::Closed(_)) => false,
    }
}

/// A presence message (`W`, `H` or `L`) from `origin`.
fn presence(kind: char, origin: &str) -> String {
    format!("{kind}\n{origin}")
}

// The wire format of an event: `F` (frame) or `C` (cancel), the origin, then fields.
fn encode(origin: &str, event: &Event) -> String {
    match event {
        Event::Frame(d) => {
            let (conv, msg, seq) = match &d.delta {
                Some(m) => (&*m.conversation_id, &*m.message_id, m.seq.to_string()),
                None => ("", "", String::new()),
            };
            format!(
                "F\n{origin}\n{}\n{conv}\n{msg}\n{seq}\n{}",
                u8::from(d.close),
                &*d.text
            )
        }
        Event::Cancel { conversation_id } => format!("C\n{origin}\n{conversation_id}"),
        Event::Ended { conversation_id } => format!("E\n{origin}\n{conversation_id}"),
        // This instance's own announcement is a `W` like anyone's.
        Event::Presence(Presence::Announced) => presence('W', origin),
        Event::Presence(Presence::Joined(from)) => presence('W', from),
        Event::Presence(Presence::Here(from)) => presence('H', from),
        Event::Presence(Presence::Left(from)) => presence('L', from),
    }
}

fn decode(payload: &str) -> Option<(&str, Event)> {
    let mut parts = payload.splitn(7, '\n');
    match parts.next()? {
        "F" => {
            let origin = parts.next()?;
            let close = parts.next()? == "1";
            let (conv, msg, seq) = (parts.next()?, parts.next()?, parts.next()?);
            let text = parts.next()?;
            // Receivers need the ids and seq; the delta's text is inside the frame.
            let delta = (!conv.is_empty()).then(|| DeltaMeta {
                conversation_id: conv.into(),
                message_id: msg.into(),
                seq: seq.parse().unwrap_or(0),
                text: "".into(),
            });
            Some((
                origin,
                Event::Frame(Deliver {
                    text: text.to_owned().into(),
                    delta,
                    close,
                }),
            ))
        }
        "C" => {
            let origin = parts.next()?;
            Some((
                origin,
                Event::Cancel {
                    conversation_id: parts.next()?.to_owned(),
                },
            ))
        }
        kind @ ("W" | "H" | "L") => {
            let origin = parts.next()?;
            let from: Arc<str> = origin.into();
            let presence = match kind {
                "W" => Presence::Joined(from),
                "H" => Presence::Here(from),
                _ => Presence::Left(from),
            };
            Some((origin, Event::Presence(presence)))
        }
        _ => None,
    }
}

impl FanOut for RedisRelay {
    fn publish(&self, user: &str, event: &Event) {
        let command = match event {
            Event::Frame(Deliver {
                delta: Some(meta), ..
            }) => {
                let [text_key, meta_key, _] = self.live_keys(&meta.conversation_id);
                Command::Append {
                    text_key,
                    meta_key,
                    message_id: meta.message_id.to_string(),
                    seq: meta.seq,
                    delta: meta.text.to_string(),
                    channel: self.channel(user),
                    payload: encode(&self.origin, event),
                }
            }
            Event::Frame(_) => Command::Publish {
                channel: self.channel(user),
                payload: encode(&self.origin, event),
            },
            Event::Cancel { .. } => Command::Publish {
                channel: self.control_channel(),
                payload: encode(&self.origin, event),
            },
            Event::Ended { conversation_id } => {
                let keys = self.live_keys(conversation_id);
                if let Err(mpsc::error::TrySendError::Full(_)) =
                    self.writer.try_send(Command::Forget { keys: keys.clone() })
                {
                    keep_forgets(&self.forgets, [keys], self.writer.max_capacity());
                }
                return;
            }
            // Presence is the relay's own business (see `watch` and `welcome`).
            Event::Presence(_) => return,
        };
        self.queue(command);
    }

    fn watch(&self, user: &str, watching: bool) {
        let channel = self.channel(user);
        if watching {
            // The subscriber announces this instance once it listens.
            let _ = self.watch.send(Watch::Add(channel));
        } else {
            self.queue(Command::Publish {
                channel: channel.clone(),
                payload: presence('L', &self.origin),
            });
            let _ = self.watch.send(Watch::Remove(channel));
        }
    }

    fn welcome(&self, user: &str, answers: &[Snapshot]) {
        let answers = answers
            .iter()
            .map(|answer| {
                let [text_key, meta_key, _] = self.live_keys(&answer.conversation_id);
                Mirror {
                    text_key,
                    meta_key,
                    message_id: answer.message_id.clone(),
                    seq: answer.seq,
                    content: answer.content.clone(),
                }
            })
            .collect();
        self.queue(Command::Welcome {
            answers,
            channel: self.channel(user),
            payload: presence('H', &self.origin),
        });
    }

    fn settle(&self) -> Duration {
        self.timeout
    }
}

/// Sends commands in order, as many as are waiting in one transaction.
struct Writer {
    conn: redis::aio::ConnectionManager,
    timeout: Duration,
    overflowing: Arc<AtomicBool>,
    forgets: Arc<Mutex<Vec<[String; 3]>>>,
    queue: usize,
}

/// Keeps ends of answers for the writer to try again; as many as the queue holds (past
/// that, claims expire by themselves).
fn keep_forgets(forgets: &Mutex<Vec<[String; 3]>>, keys: impl IntoIterator<Item = [String; 3]>, max: usize) {
    let mut forgets = forgets.lock().unwrap();
    forgets.extend(keys);
    forgets.truncate(max);
}

impl Writer {
    async fn run(mut self, mut rx: mpsc::Receiver<Command>) {
        let mut batch = Vec::with_capacity(256);
        loop {
            // Kept ends of answers are tried again without waiting for new events.
            let waiting = tokio::time::timeout(Duration::from_secs(1), rx.recv_many(&mut batch, 256)).await;
            if waiting == Ok(0) {
                return;
            }
            // Only once what was queued before them is written: a delta written after
            // its answer's end would bring the answer's live text back.
            let retried = if rx.is_empty() {
                std::mem::take(&mut *self.forgets.lock().unwrap())
            } else {
                Vec::new()
            };
            if batch.is_empty() && retried.is_empty() {
                continue;
            }
            let mut pipe = redis::pipe();
            pipe.atomic();
            let mut flushed = Vec::new();
            let mut ended = Vec::new();
            for command in batch.drain(..) {
                match command {
                    Command::Publish { channel, payload } => {
                        pipe.publish(channel, payload).ignore();
                    }
                    Command::Append {
                        text_key,
                        meta_key,
                        message_id,
                        seq,
                        delta,
                        channel,
                        payload,
                    } => {
                        // Three commands a delta: the keys' time limits (and the message
                        // id) are set once, with the answer's first delta.
                        pipe.append(&text_key, delta).ignore();
                        if seq <= 1 {
                            pipe.hset_multiple(
                                &meta_key,
                                &[("message", message_id), ("seq", seq.to_string())],
                            )
                            .ignore()
                            .expire(&text_key, LIVE_TTL_SECS as i64)
                            .ignore()
                            .expire(&meta_key, LIVE_TTL_SECS as i64)
                            .ignore();
                        } else {
                            pipe.hset(&meta_key, "seq", seq).ignore();
                        }
                        pipe.publish(channel, payload).ignore();
                    }
                    Command::Forget { keys } => {
                        pipe.del(&keys).ignore();
                        ended.push(keys);
                    }
                    Command::Welcome {
                        answers,
                        channel,
                        payload,
                    } => {
                        for answer in answers {
                            pipe.set_ex(&answer.text_key, answer.content, LIVE_TTL_SECS)
                                .ignore()
                                .hset_multiple(
                                    &answer.meta_key,
                                    &[("message", answer.message_id), ("seq", answer.seq.to_string())],
                                )
                                .ignore()
                                .expire(&answer.meta_key, LIVE_TTL_SECS as i64)
                                .ignore();
                        }
                        pipe.publish(channel, payload).ignore();
                    }
                    Command::Flush(done) => flushed.push(done),
                }
            }
            for keys in &retried {
                pipe.del(keys).ignore();
            }
            match redis_call(self.timeout, pipe.query_async::<()>(&mut self.conn)).await {
                Ok(()) => {
                    if self.overflowing.swap(false, Ordering::Relaxed) {
                        tracing::info!("the Redis relay keeps up again");
                    }
                }
                Err(e) => {
                    tracing::error!(error = %e, "relaying events through Redis");
                    keep_forgets(&self.forgets, retried.into_iter().chain(ended), self.queue);
                }
            }
            for done in flushed {
                let _ = done.send(());
            }
        }
    }
}

struct Channels {
    /// `{prefix}user:`, followed by a user id.
    user_prefix: String,
    control: String,
}

/// Keeps one subscriber connection with the control channel and the channels of the
/// users this instance serves, reconnecting (and subscribing again) when it drops or
/// stops answering.
struct Subscriber {
    client: redis::Client,
    timeout: Duration,
    hubs: Hubs,
    accounts: Arc<Accounts>,
    channels: Channels,
    origin: String,
    /// Announcements go out through the writer, behind what was queued before.
    writer: mpsc::Sender<Command>,
}

/// Applies a change to the set of watched channels.
fn apply(watched: &mut HashSet<String>, change: Watch) -> String {
    match change {
        Watch::Add(channel) => {
            watched.insert(channel.clone());
            channel
        }
        Watch::Remove(channel) => {
            watched.remove(&channel);
            channel
        }
    }
}

impl Subscriber {
    async fn run(self, mut watch: mpsc::UnboundedReceiver<Watch>) {
        let mut watched: HashSet<String> = HashSet::from([self.channels.control.clone()]);
        loop {
            match redis_call(self.timeout, self.client.get_async_pubsub()).await {
                Ok(pubsub) => {
                    if !self.listen(pubsub, &mut watch, &mut watched).await {
                        return;
                    }
                    tracing::warn!("Redis subscriber connection lost; reconnecting");
                }
                Err(e) => tracing::error!(error = %e, "connecting the Redis subscriber; retrying"),
            }
            // Meanwhile sessions come and go: keep the set of channels current.
            let pause = tokio::time::sleep(Duration::from_millis(500));
            tokio::pin!(pause);
            loop {
                tokio::select! {
                    _ = &mut pause => break,
                    change = watch.recv() => match change {
                        Some(change) => { apply(&mut watched, change); }
                        None => return,
                    },
                }
            }
        }
    }

    /// Subscribes and hands on messages until the connection fails; false once the
    /// relay is gone.
    async fn listen(
        &self,
        pubsub: redis::aio::PubSub,
        watch: &mut mpsc::UnboundedReceiver<Watch>,
        watched: &mut HashSet<String>,
    ) -> bool {
        let (mut sink, mut stream) = pubsub.split();
        for channel in watched.iter() {
            if redis_call(self.timeout, sink.subscribe(channel)).await.is_err() {
                return true;
            }
        }
        // Announcements made while the connection was down may have been missed either
        // way: announce again, and those watching answer again.
        for channel in watched.iter() {
            self.announce(channel);
        }
        loop {
            tokio::select! {
                change = watch.recv() => {
                    let Some(change) = change else { return false };
                    let adding = matches!(change, Watch::Add(_));
                    let channel = apply(watched, change);
                    let result = if adding {
                        redis_call(self.timeout, sink.subscribe(&channel)).await
                    } else {
                        redis_call(self.timeout, sink.unsubscribe(&channel)).await
                    };
                    if result.is_err() {
                        return true;
                    }
                    if adding {
                        self.announce(&channel);
                    }
                }
                message = stream.next() => {
                    let Some(message) = message else { return true };
                    self.deliver(&message);
                }
            }
        }
    }

    /// Tells the instances watching a user's channel that this one listens there now
    /// (only after subscribing, so it hears their answers and what they publish next).
    fn announce(&self, channel: &str) {
        if channel != self.channels.control {
            let announcement = Command::Publish {
                channel: channel.to_owned(),
                payload: presence('W', &self.origin),
            };
            // Dropped with a full queue, as every event then: the hub of the user shares
            // everything until its announcement comes back.
            let _ = self.writer.try_send(announcement);
        }
    }

    fn deliver(&self, message: &redis::Msg) {
        let name = message.get_channel_name();
        // Cancels come on the control channel, for no user in particular.
        let user = if name == self.channels.control {
            String::new()
        } else {
            match name.strip_prefix(&self.channels.user_prefix) {
                Some(user) => user.to_owned(),
                None => return,
            }
        };
        let Ok(payload) = message.get_payload::<String>() else {
            return;
        };
        let Some((from, event)) = decode(&payload) else {
            return;
        };
        let event = match event {
            // This instance's own announcement, back: every instance that watched the
            // user before it went out has heard it.
            Event::Presence(Presence::Joined(_)) if from == self.origin => {
                Event::Presence(Presence::Announced)
            }
            _ if from == self.origin => return,
            Event::Frame(deliver) => {
                if Accounts::changes_account_text(&deliver.text) {
                    self.accounts.forget(&user);
                }
                Event::Frame(deliver)
            }
            event => event,
        };
        self.hubs.of(&user).do_send(FromRemote { user, event });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_survive_the_wire_format() {
        let frame = Deliver {
            text: "{\"type\":\"message.delta\",\"delta\":\"a\\nb\"}"
                .to_owned()
                .into(),
            delta: Some(DeltaMeta {
                conversation_id: "c1".into(),
                message_id: "m1".into(),
                seq: 7,
                text: "".into(),
            }),
            close: false,
        };
        let payload = encode("me", &Event::Frame(frame.clone()));
        match decode(&payload) {
            Some(("me", Event::Frame(d))) => {
                assert_eq!(d.text, frame.text);
                assert_eq!(d.delta, frame.delta);
            }
            other => panic!("{other:?}"),
        }
        match decode(&encode(
            "x",
            &Event::Cancel {
                conversation_id: "c9".into(),
            },
        )) {
            Some(("x", Event::Cancel { conversation_id })) => assert_eq!(conversation_id, "c9"),
            other => panic!("{other:?}"),
        }
    }
}
