//! Events between instances over Redis.
//!
//! - Every user has a channel (`{prefix}user:<id>`); an instance subscribes to the
//!   channels of the users it watches (has tabs or running answers of). Cancels go on one
//!   control channel that every instance watches, since the instance running an answer
//!   may have no tab of its user left.
//! - Presence: once subscribed, an instance announces itself on the user's channel
//!   (`W`); those already there answer (`H`) with the text of the user's answers they
//!   run; one that stops watching says so (`L`). A hub publishes a user's frames only
//!   while another instance watches them (see `chat_actors::hub`), so a user whose tabs
//!   are all on one instance costs Redis nothing per delta.
//! - Everything this instance sends comes from the hub, in the order things happened,
//!   and goes through one writer task, as many commands as wait in one pipeline. A delta
//!   is one `PUBLISH`, its text beside the frame: the hubs of the instances watching the
//!   user keep a copy of each answer from the `H` and the deltas after it, and a tab
//!   there that opens the conversation mid-answer catches up from that copy (waiting at
//!   most `redis.timeout_ms` for the `H` if it has not come yet). Redis keeps only who
//!   answers where and the answer's id (`live:{conversation}:owner` and `:answer`),
//!   until the end (`E`).
//! - A conversation's answer is claimed (`SET NX`), so two instances never write one at
//!   the same time.
//! - Redis may pause or go away: every call has a time limit (`redis.timeout_ms`), the
//!   writer's queue is bounded (`redis.relay_queue`; past it events are dropped, and
//!   local tabs still get them), and both the writer and the subscriber carry on once
//!   Redis is back. The ends of answers (which give up their claims) that could not be
//!   written are tried again, so no claim outlives an outage.
//! - Leases: a running answer is in the running set (`{prefix}running`, scored by when
//!   its lease lapses) until its end is stored; its instance renews the leases of its
//!   answers every quarter lease (and puts back its claims if Redis lost them). A lapsed
//!   lease means the instance died: another takes the answer over (see
//!   `crate::chat::orphans`), first one that kept a copy of its text.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use chat_actors::hub::{Event, FanOut, FromRemote, Hubs, Presence, RemoteSnapshot};
use chat_actors::messages::{Deliver, DeltaMeta};
use chat_actors::shard::Shards;
use chat_contract::frames::Snapshot;
use futures_util::StreamExt;
use tokio::sync::{mpsc, oneshot};

use crate::chat::cache::Accounts;
use crate::outage::redis_call;
use crate::redis_conn::Redis;

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
    /// An answer's end: its keys go, and the instances watching its user hear it (the
    /// channel and payload), if any.
    Forget {
        keys: LiveKeys,
        tell: Option<(String, String)>,
    },
    /// An answer's end is stored: its lease goes.
    Settled {
        member: String,
    },
    /// Answers once everything queued before it was tried.
    Flush(oneshot::Sender<()>),
}

/// A running answer's keys: its message id (written as it starts) and who runs it (the
/// claim).
type LiveKeys = [String; 2];

/// A running answer of this instance, leased until its end is stored.
struct Lease {
    /// Its member in the running set (see [`Lapsed`]).
    member: String,
    message_id: String,
    /// Its claim's value until the answer ends (and the claim is released).
    claim: Option<String>,
}

/// A running answer of another instance whose lease lapsed.
#[derive(Debug, Clone)]
pub struct Lapsed {
    /// Its member in the running set: `origin\nuser\nconversation\nmessage`.
    pub member: String,
    pub origin: String,
    pub user: String,
    pub conversation_id: String,
    pub message_id: String,
    /// How long ago the lease lapsed.
    pub overdue: Duration,
}

impl Lapsed {
    fn parse(member: String, overdue: Duration) -> Option<Lapsed> {
        let mut parts = member.split('\n');
        let (origin, user, conversation_id, message_id) =
            (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
        Some(Lapsed {
            origin: origin.to_owned(),
            user: user.to_owned(),
            conversation_id: conversation_id.to_owned(),
            message_id: message_id.to_owned(),
            overdue,
            member,
        })
    }
}

/// The Unix time in milliseconds: lease times are compared across instances.
fn unix_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

enum Watch {
    Add(String),
    Remove(String),
}

pub struct RedisRelay {
    prefix: String,
    /// Tells this instance's own publications apart from other instances'.
    origin: String,
    conn: Redis,
    client: redis::Client,
    timeout: Duration,
    writer: mpsc::Sender<Command>,
    writer_rx: Mutex<Option<mpsc::Receiver<Command>>>,
    /// Set while events are being dropped (logged once per episode).
    overflowing: Arc<AtomicBool>,
    /// Ends of answers not yet written (the queue was full, or Redis failed): each
    /// releases a claim, so they are kept and tried again rather than dropped.
    forgets: Arc<Mutex<Vec<LiveKeys>>>,
    watch: mpsc::UnboundedSender<Watch>,
    watch_rx: Mutex<Option<mpsc::UnboundedReceiver<Watch>>>,
    hubs: OnceLock<Hubs>,
    /// How long a lease lasts unrenewed.
    lease: Duration,
    /// The claims this instance holds, by conversation, until their answers end.
    claims: Mutex<HashMap<String, String>>,
    /// The leases of this instance's running answers, by conversation.
    leases: Mutex<HashMap<String, Lease>>,
}

impl RedisRelay {
    pub fn new(conn: Redis, prefix: String, timeout: Duration, queue: usize, lease: Duration) -> Self {
        let (writer, writer_rx) = mpsc::channel(queue.max(1));
        // Unbounded, but the subscriber folds it into its set of channels even while
        // Redis is away, so it holds at most one change per user.
        let (watch, watch_rx) = mpsc::unbounded_channel();
        RedisRelay {
            prefix,
            origin: crate::accounts::codes::new_token(),
            client: conn.client().clone(),
            conn,
            timeout,
            writer,
            writer_rx: Mutex::new(Some(writer_rx)),
            overflowing: Arc::new(AtomicBool::new(false)),
            forgets: Arc::new(Mutex::new(Vec::new())),
            watch,
            watch_rx: Mutex::new(Some(watch_rx)),
            hubs: OnceLock::new(),
            lease,
            claims: Mutex::new(HashMap::new()),
            leases: Mutex::new(HashMap::new()),
        }
    }

    /// Starts the writer and the subscriber, on the first and the last shard (nothing
    /// runs on the System thread); events from other instances go to the hub of their
    /// user, and those that change a user or plan drop it from `accounts`.
    pub fn attach(&self, shards: &Shards, hubs: Hubs, accounts: Arc<Accounts>) {
        let _ = self.hubs.set(hubs.clone());
        if let Some(rx) = self.writer_rx.lock().unwrap().take() {
            let writer = Writer {
                conn: self.conn.clone(),
                timeout: self.timeout,
                running_key: self.running_key(),
                overflowing: self.overflowing.clone(),
                forgets: self.forgets.clone(),
                queue: self.writer.max_capacity(),
            };
            shards.arbiter_at(0).spawn(writer.run(rx));
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
            shards.arbiter_at(shards.len() - 1).spawn(subscriber.run(rx));
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

    /// Metadata and owner of a conversation's running answer; the braces keep them in
    /// one Redis Cluster slot.
    fn live_keys(&self, conversation_id: &str) -> LiveKeys {
        let base = format!("{}live:{{{conversation_id}}}", self.prefix);
        // `:answer`, not the `:meta` hash of instances before copies were kept.
        [format!("{base}:answer"), format!("{base}:owner")]
    }

    /// Claims the right to answer in a conversation; false if another answer holds it.
    pub async fn claim(&self, conversation_id: &str) -> anyhow::Result<bool> {
        let [_, owner] = self.live_keys(conversation_id);
        let token = format!("{}:{}", self.origin, crate::accounts::codes::new_token());
        let mut conn = self.conn.clone();
        let mut set = redis::cmd("SET");
        set.arg(&owner).arg(&token).arg("NX").arg("EX").arg(LIVE_TTL_SECS);
        match redis_call(self.timeout, set.query_async::<Option<String>>(&mut conn)).await {
            Ok(claimed) => {
                if claimed.is_some() {
                    self.claims
                        .lock()
                        .unwrap()
                        .insert(conversation_id.to_owned(), token);
                }
                Ok(claimed.is_some())
            }
            Err(e) => {
                // A paused Redis still runs the SET when it resumes: queue the removal of
                // exactly this claim behind it (one command, so it is not lost to a
                // script cache miss), or the conversation stays blocked for an hour.
                // Not waited for: the user hears of the failure at once.
                let mut undo = redis::cmd("EVAL");
                undo.arg(RELEASE_OWN_CLAIM).arg(1).arg(&owner).arg(&token);
                let timeout = self.timeout;
                tokio::spawn(async move {
                    let _ = redis_call(timeout, undo.query_async::<i64>(&mut conn)).await;
                });
                Err(e)
            }
        }
    }

    /// Marks a conversation's answer as running, so another instance's tab that opens it
    /// learns it is streaming and its id (its text comes from the instance running it).
    /// The answer is leased from here on, until [`RedisRelay::settled`].
    pub async fn start_live(
        &self,
        user: &str,
        conversation_id: &str,
        message_id: &str,
    ) -> anyhow::Result<()> {
        let [meta_key, _] = self.live_keys(conversation_id);
        let member = format!("{}\n{user}\n{conversation_id}\n{message_id}", self.origin);
        let lease = Lease {
            member: member.clone(),
            message_id: message_id.to_owned(),
            claim: self.claims.lock().unwrap().get(conversation_id).cloned(),
        };
        self.leases
            .lock()
            .unwrap()
            .insert(conversation_id.to_owned(), lease);
        let mut conn = self.conn.clone();
        let mut pipe = redis::pipe();
        pipe.cmd("SET")
            .arg(&meta_key)
            .arg(message_id)
            .arg("EX")
            .arg(LIVE_TTL_SECS)
            .ignore()
            .zadd(
                self.running_key(),
                &member,
                unix_ms() + self.lease.as_millis() as i64,
            )
            .ignore();
        redis_call(self.timeout, pipe.query_async::<()>(&mut conn)).await
    }

    /// The answer's end is stored: its lease goes (after its end, in order).
    pub fn settled(&self, conversation_id: &str) {
        let lease = self.leases.lock().unwrap().remove(conversation_id);
        if let Some(lease) = lease {
            let settled = Command::Settled { member: lease.member };
            if let Err(mpsc::error::TrySendError::Full(_)) = self.writer.try_send(settled) {
                // A lapsed lease of an answer already stored is taken over for nothing
                // (the answer is not streaming any more): harmless.
                tracing::warn!("the Redis relay queue is full: a stored answer's lease lapses by itself");
            }
        }
    }

    fn running_key(&self) -> String {
        format!("{}running", self.prefix)
    }

    /// Renews this instance's leases (putting back claims and marks that Redis lost),
    /// then answers the running answers of other instances whose leases lapsed.
    pub async fn tend_leases(&self) -> anyhow::Result<Vec<Lapsed>> {
        let now = unix_ms();
        let until = now + self.lease.as_millis() as i64;
        let running = self.running_key();
        let mut pipe = redis::pipe();
        for (conversation_id, lease) in self.leases.lock().unwrap().iter() {
            pipe.zadd(&running, &lease.member, until).ignore();
            if let Some(claim) = &lease.claim {
                let [meta_key, owner_key] = self.live_keys(conversation_id);
                let set_if_lost = |pipe: &mut redis::Pipeline, key: &str, value: &str| {
                    pipe.cmd("SET")
                        .arg(key)
                        .arg(value)
                        .arg("NX")
                        .arg("EX")
                        .arg(LIVE_TTL_SECS)
                        .ignore();
                };
                set_if_lost(&mut pipe, &owner_key, claim);
                set_if_lost(&mut pipe, &meta_key, &lease.message_id);
            }
        }
        pipe.cmd("ZRANGEBYSCORE")
            .arg(&running)
            .arg("-inf")
            .arg(now)
            .arg("WITHSCORES")
            .arg("LIMIT")
            .arg(0)
            .arg(100);
        let mut conn = self.conn.clone();
        let (lapsed,): (Vec<(String, i64)>,) = redis_call(self.timeout, pipe.query_async(&mut conn)).await?;
        Ok(lapsed
            .into_iter()
            .filter_map(|(member, at)| {
                let overdue = Duration::from_millis((now - at).max(0) as u64);
                Lapsed::parse(member, overdue)
            })
            .filter(|lapsed| lapsed.origin != self.origin)
            .collect())
    }

    /// Takes over a lapsed answer: true for the one instance that does.
    pub async fn take_over(&self, lapsed: &Lapsed) -> anyhow::Result<bool> {
        let mut conn = self.conn.clone();
        let mut zrem = redis::cmd("ZREM");
        zrem.arg(self.running_key()).arg(&lapsed.member);
        Ok(redis_call(self.timeout, zrem.query_async::<i64>(&mut conn)).await? == 1)
    }

    /// Of these running answers (conversation, message), which Redis still has as
    /// running; an answer's end clears its mark.
    pub async fn still_running(&self, answers: &[(String, String)]) -> anyhow::Result<Vec<bool>> {
        if answers.is_empty() {
            return Ok(Vec::new());
        }
        let mut get = redis::cmd("MGET");
        for (conversation_id, _) in answers {
            let [meta_key, _] = self.live_keys(conversation_id);
            get.arg(meta_key);
        }
        let mut conn = self.conn.clone();
        let marks: Vec<Option<String>> = redis_call(self.timeout, get.query_async(&mut conn)).await?;
        Ok(answers
            .iter()
            .zip(marks)
            .map(|((_, message_id), mark)| mark.as_deref() == Some(message_id.as_str()))
            .collect())
    }

    /// How often leases are renewed and lapsed ones looked for.
    pub fn lease_tick(&self) -> Duration {
        (self.lease / 4).max(Duration::from_millis(100))
    }

    /// How long a lapsed answer waits for an instance that kept its text to take it over
    /// before any instance does.
    pub fn lease(&self) -> Duration {
        self.lease
    }

    /// Gives up a claim whose answer never started (nor its mark, if it was made).
    pub async fn release(&self, conversation_id: &str) {
        self.claims.lock().unwrap().remove(conversation_id);
        let lease = self.leases.lock().unwrap().remove(conversation_id);
        let keys = self.live_keys(conversation_id);
        let mut conn = self.conn.clone();
        let mut pipe = redis::pipe();
        pipe.del(&keys).ignore();
        if let Some(lease) = lease {
            pipe.zrem(self.running_key(), lease.member).ignore();
        }
        let released: anyhow::Result<()> = redis_call(self.timeout, pipe.query_async(&mut conn)).await;
        if let Err(e) = released {
            tracing::warn!(error = %e, "releasing an answer claim (it expires by itself)");
        }
    }

    /// The running answer of a conversation that this instance does not run (it may
    /// have ended here and not yet been forgotten): the copy this instance's hub keeps
    /// of an answer running elsewhere, waiting at most `redis.timeout_ms` for the
    /// running instance to answer this one's announcement if it has not yet. With no
    /// copy (no delta yet, or the answer did not come), the answer is streaming with no
    /// text so far.
    pub async fn snapshot(&self, user: &str, conversation_id: &str) -> anyhow::Result<Option<Snapshot>> {
        let [meta_key, owner_key] = self.live_keys(conversation_id);
        let mut conn = self.conn.clone();
        let mut pipe = redis::pipe();
        pipe.get(&meta_key).get(&owner_key);
        let (message_id, owner): (Option<String>, Option<String>) =
            redis_call(self.timeout, pipe.query_async(&mut conn)).await?;
        let (Some(message_id), Some(owner)) = (message_id, owner) else {
            return Ok(None);
        };
        // The claim holds `origin:token`.
        let origin = owner.split(':').next().unwrap_or_default();
        let copy = match self.hubs.get() {
            Some(hubs) if origin != self.origin => {
                let ask = RemoteSnapshot {
                    user: user.to_owned(),
                    conversation_id: conversation_id.to_owned(),
                    origin: origin.into(),
                };
                tokio::time::timeout(self.timeout, hubs.of(user).send(ask))
                    .await
                    .ok()
                    .and_then(Result::ok)
                    .flatten()
            }
            _ => None,
        };
        Ok(Some(match copy {
            Some(copy) if copy.message_id == message_id => copy,
            _ => Snapshot {
                conversation_id: conversation_id.to_owned(),
                message_id,
                seq: 0,
                content: String::new(),
            },
        }))
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

/// A presence message (`W` or `L`) from `origin`.
fn presence(kind: char, origin: &str) -> String {
    format!("{kind}\n{origin}")
}

/// The answer to an announcement: `origin` runs these answers of the user.
fn here(origin: &str, answers: &[Snapshot]) -> String {
    format!("H\n{origin}\n{}", encode_answers(answers))
}

/// Running answers' text on the wire, each `conversation\nmessage\nseq\nlength\ntext`.
fn encode_answers(answers: &[Snapshot]) -> String {
    let mut out = String::new();
    for a in answers {
        let content = &a.content;
        out += &format!(
            "{}\n{}\n{}\n{}\n{content}",
            a.conversation_id,
            a.message_id,
            a.seq,
            content.len()
        );
    }
    out
}

fn decode_answers(mut rest: &str) -> Option<Vec<Snapshot>> {
    let mut answers = Vec::new();
    while !rest.is_empty() {
        let mut parts = rest.splitn(5, '\n');
        let (conversation_id, message_id, seq, length) =
            (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
        let tail = parts.next()?;
        let length: usize = length.parse().ok()?;
        let content = tail.get(..length)?;
        answers.push(Snapshot {
            conversation_id: conversation_id.to_owned(),
            message_id: message_id.to_owned(),
            seq: seq.parse().ok()?,
            content: content.to_owned(),
        });
        rest = &tail[length..];
    }
    Some(answers)
}

// The wire format of an event: its kind (`F` frame, `C` cancel, `E` end, `W` `H` `L`
// presence), the origin, then its fields. A delta's frame carries the delta's length,
// then the delta and the frame's text.
fn encode(origin: &str, event: &Event) -> String {
    match event {
        Event::Frame(d) => {
            let (conv, msg, seq, delta) = match &d.delta {
                Some(m) => (&*m.conversation_id, &*m.message_id, m.seq.to_string(), &*m.text),
                None => ("", "", String::new(), ""),
            };
            format!(
                "F\n{origin}\n{}\n{conv}\n{msg}\n{seq}\n{}\n{delta}{}",
                u8::from(d.close),
                delta.len(),
                &*d.text
            )
        }
        Event::Cancel { conversation_id } => format!("C\n{origin}\n{conversation_id}"),
        Event::Ended { conversation_id } => format!("E\n{origin}\n{conversation_id}"),
        // This instance's own announcement is a `W` like anyone's.
        Event::Presence(Presence::Announced) => presence('W', origin),
        Event::Presence(Presence::Joined(from)) => presence('W', from),
        Event::Presence(Presence::Here(from, answers)) => here(from, answers),
        Event::Presence(Presence::Left(from)) => presence('L', from),
    }
}

fn decode(payload: &str) -> Option<(&str, Event)> {
    let (kind, rest) = payload.split_once('\n')?;
    // `W` and `L` are the origin alone.
    let (origin, rest) = rest.split_once('\n').unwrap_or((rest, ""));
    let event = match kind {
        "F" => {
            let mut parts = rest.splitn(6, '\n');
            let close = parts.next()? == "1";
            let (conv, msg, seq, length) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
            let tail = parts.next()?;
            let length: usize = length.parse().ok()?;
            let (delta, text) = (tail.get(..length)?, tail.get(length..)?);
            let delta = (!conv.is_empty()).then(|| DeltaMeta {
                conversation_id: conv.into(),
                message_id: msg.into(),
                seq: seq.parse().unwrap_or(0),
                text: delta.into(),
            });
            Event::Frame(Deliver {
                text: text.to_owned().into(),
                delta,
                close,
            })
        }
        "C" => Event::Cancel {
            conversation_id: rest.to_owned(),
        },
        "E" => Event::Ended {
            conversation_id: rest.to_owned(),
        },
        "W" => Event::Presence(Presence::Joined(origin.into())),
        "H" => Event::Presence(Presence::Here(origin.into(), decode_answers(rest)?)),
        "L" => Event::Presence(Presence::Left(origin.into())),
        _ => return None,
    };
    Some((origin, event))
}

impl FanOut for RedisRelay {
    fn publish(&self, user: &str, event: &Event) {
        let command = match event {
            Event::Frame(_) => Command::Publish {
                channel: self.channel(user),
                payload: encode(&self.origin, event),
            },
            Event::Cancel { .. } => Command::Publish {
                channel: self.control_channel(),
                payload: encode(&self.origin, event),
            },
            // Presence is the relay's own business (see `watch` and `welcome`), and
            // ends come through `ended`.
            Event::Presence(_) | Event::Ended { .. } => return,
        };
        self.queue(command);
    }

    fn ended(&self, user: &str, conversation_id: &str, heard: bool) {
        // The claim goes now; the lease stays until the answer is stored.
        self.claims.lock().unwrap().remove(conversation_id);
        if let Some(lease) = self.leases.lock().unwrap().get_mut(conversation_id) {
            lease.claim = None;
        }
        let keys = self.live_keys(conversation_id);
        let end = Event::Ended {
            conversation_id: conversation_id.to_owned(),
        };
        let forget = Command::Forget {
            keys: keys.clone(),
            tell: heard.then(|| (self.channel(user), encode(&self.origin, &end))),
        };
        if let Err(mpsc::error::TrySendError::Full(_)) = self.writer.try_send(forget) {
            keep_forgets(&self.forgets, [keys], self.writer.max_capacity());
        }
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
        self.queue(Command::Publish {
            channel: self.channel(user),
            payload: here(&self.origin, answers),
        });
    }

    fn settle(&self) -> Duration {
        self.timeout
    }
}

/// Sends commands in order, as many as are waiting in one pipeline.
struct Writer {
    conn: Redis,
    timeout: Duration,
    running_key: String,
    overflowing: Arc<AtomicBool>,
    forgets: Arc<Mutex<Vec<LiveKeys>>>,
    queue: usize,
}

/// Keeps ends of answers for the writer to try again; as many as the queue holds (past
/// that, claims expire by themselves).
fn keep_forgets(forgets: &Mutex<Vec<LiveKeys>>, keys: impl IntoIterator<Item = LiveKeys>, max: usize) {
    let mut forgets = forgets.lock().unwrap();
    forgets.extend(keys);
    forgets.truncate(max);
}

impl Writer {
    async fn run(mut self, mut rx: mpsc::Receiver<Command>) {
        let mut batch = Vec::with_capacity(256);
        let mut failing = false;
        loop {
            // Kept ends of answers are tried again without waiting for new events.
            let waiting = tokio::time::timeout(Duration::from_secs(1), rx.recv_many(&mut batch, 256)).await;
            if waiting == Ok(0) {
                return;
            }
            // Only once what was queued before them is written: an answer's end goes
            // after everything of the answer.
            let retried = if rx.is_empty() {
                std::mem::take(&mut *self.forgets.lock().unwrap())
            } else {
                Vec::new()
            };
            if batch.is_empty() && retried.is_empty() {
                continue;
            }
            // In order on one connection; not a transaction (nothing here needs two
            // commands seen together).
            let mut pipe = redis::pipe();
            let mut flushed = Vec::new();
            let mut ended = Vec::new();
            for command in batch.drain(..) {
                match command {
                    Command::Publish { channel, payload } => {
                        pipe.publish(channel, payload).ignore();
                    }
                    Command::Forget { keys, tell } => {
                        pipe.del(&keys).ignore();
                        if let Some((channel, payload)) = tell {
                            pipe.publish(channel, payload).ignore();
                        }
                        ended.push(keys);
                    }
                    Command::Settled { member } => {
                        pipe.zrem(self.running_key.as_str(), member).ignore();
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
                    if std::mem::take(&mut failing) {
                        tracing::info!("events reach Redis again");
                    }
                }
                Err(e) => {
                    // One line per outage, not one per batch.
                    if !std::mem::replace(&mut failing, true) {
                        tracing::warn!(error = %format!("{e:#}"), "events cannot reach Redis; the ends of answers are kept and tried again");
                    }
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
        // Set while reconnecting: one line per outage, not one per attempt.
        let mut away = false;
        loop {
            match redis_call(self.timeout, self.client.get_async_pubsub()).await {
                Ok(pubsub) => {
                    if std::mem::take(&mut away) {
                        tracing::info!("the Redis subscriber is connected again");
                    }
                    if !self.listen(pubsub, &mut watch, &mut watched).await {
                        return;
                    }
                    tracing::warn!("Redis subscriber connection lost; reconnecting every 0.5 s");
                    away = true;
                }
                Err(e) => {
                    if !std::mem::replace(&mut away, true) {
                        tracing::warn!(error = %format!("{e:#}"), "connecting the Redis subscriber; retrying every 0.5 s");
                    }
                }
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
        let origin = from.into();
        self.hubs.of(&user).do_send(FromRemote { user, origin, event });
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
                text: "a\nb é".into(),
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
        let answers = vec![
            Snapshot {
                conversation_id: "c1".into(),
                message_id: "m1".into(),
                seq: 3,
                content: "two\nlines ő".into(),
            },
            Snapshot {
                conversation_id: "c2".into(),
                message_id: "m2".into(),
                seq: 0,
                content: String::new(),
            },
        ];
        for answers in [Vec::new(), answers] {
            let here = Event::Presence(Presence::Here("you".into(), answers.clone()));
            match decode(&encode("me", &here)) {
                Some(("you", Event::Presence(Presence::Here(from, got)))) => {
                    assert_eq!(&*from, "you");
                    assert_eq!(got, answers);
                }
                other => panic!("{other:?}"),
            }
        }
        for (kind, event) in [
            ('W', Event::Presence(Presence::Announced)),
            ('L', Event::Presence(Presence::Left("me".into()))),
        ] {
            let payload = encode("me", &event);
            assert_eq!(payload, format!("{kind}\nme"));
            assert!(matches!(decode(&payload), Some(("me", Event::Presence(_)))));
        }
        match decode(&encode(
            "x",
            &Event::Ended {
                conversation_id: "c9".into(),
            },
        )) {
            Some(("x", Event::Ended { conversation_id })) => assert_eq!(conversation_id, "c9"),
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
