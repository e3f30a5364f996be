//! Events between instances over Redis.
//!
//! - Every user has a channel (`{prefix}user:<id>`); an instance subscribes to the
//!   channels of the users it has sessions for. Cancels go on one control channel that
//!   every instance watches, since the instance running an answer may have no tab of
//!   its user left.
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
use chat_actors::hub::{Deliver, DeltaMeta, Event, FanOut, FromRemote, Hubs};
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
    /// Answers once everything queued before it was tried.
    Flush(oneshot::Sender<()>),
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

    /// The running answer of a conversation, whichever instance runs it.
    pub async fn snapshot(&self, conversation_id: &str) -> anyhow::Result<Option<Snapshot>> {
        let [text_key, meta_key, _] = self.live_keys(conversation_id);
        let mut conn = self.conn.clone();
        let mut pipe = redis::pipe();
        pipe.atomic()
            .hget(&meta_key, "message")
            .hget(&meta_key, "seq")
            .get(&text_key);
        let (message_id, seq, text): (Option<String>, Option<u64>, Option<String>) =
            redis_call(self.timeout, pipe.query_async(&mut conn)).await?;
        Ok(match (message_id, seq) {
            (Some(message_id), Some(seq)) => Some(Snapshot {
                conversation_id: conversation_id.to_owned(),
                message_id,
                seq,
                content: text.unwrap_or_default(),
            }),
            _ => None,
        })
    }
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
            Event::Ended { conversation_id } => Command::Forget {
                keys: self.live_keys(conversation_id),
            },
        };
        match self.writer.try_send(command) {
            Ok(()) => {}
            Err(mpsc::error::TrySendError::Full(Command::Forget { keys })) => {
                keep_forgets(&self.forgets, [keys], self.writer.max_capacity());
            }
            Err(mpsc::error::TrySendError::Full(_)) => {
                if !self.overflowing.swap(true, Ordering::Relaxed) {
                    tracing::warn!(
                        queue = self.writer.max_capacity(),
                        "the Redis relay queue is full: events for other instances are dropped until Redis keeps up"
                    );
                }
            }
            Err(mpsc::error::TrySendError::Closed(_)) => {}
        }
    }

    fn watch(&self, user: &str, watching: bool) {
        let channel = self.channel(user);
        let _ = self.watch.send(if watching {
            Watch::Add(channel)
        } else {
            Watch::Remove(channel)
        });
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
                }
                message = stream.next() => {
                    let Some(message) = message else { return true };
                    self.deliver(&message);
                }
            }
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
        if let Some((from, event)) = decode(&payload) {
            if from != self.origin {
                if let Event::Frame(deliver) = &event {
                    if Accounts::changes_account_text(&deliver.text) {
                        self.accounts.forget(&user);
                    }
                }
                self.hubs.of(&user).do_send(FromRemote { user, event });
            }
        }
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
