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

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use actix::Addr;
use chat_actors::generation::Snapshot;
use chat_actors::hub::{Deliver, DeltaMeta, Event, FanOut, FromRemote, SessionHub};
use futures_util::StreamExt;
use tokio::sync::mpsc;

/// Running text and claims kept this long at most (no answer runs that long).
const LIVE_TTL_SECS: u64 = 3600;

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
    writer: mpsc::UnboundedSender<Command>,
    writer_rx: Mutex<Option<mpsc::UnboundedReceiver<Command>>>,
    watch: mpsc::UnboundedSender<Watch>,
    watch_rx: Mutex<Option<mpsc::UnboundedReceiver<Watch>>>,
    hub: OnceLock<Addr<SessionHub>>,
}

impl RedisRelay {
    pub fn new(client: redis::Client, conn: redis::aio::ConnectionManager, prefix: String) -> Self {
        let (writer, writer_rx) = mpsc::unbounded_channel();
        let (watch, watch_rx) = mpsc::unbounded_channel();
        RedisRelay {
            prefix,
            origin: crate::auth::codes::new_token(),
            conn,
            client,
            writer,
            writer_rx: Mutex::new(Some(writer_rx)),
            watch,
            watch_rx: Mutex::new(Some(watch_rx)),
            hub: OnceLock::new(),
        }
    }

    /// Starts the writer and the subscriber; events from other instances go to `hub`.
    pub fn attach(&self, hub: Addr<SessionHub>) {
        let _ = self.hub.set(hub.clone());
        if let Some(rx) = self.writer_rx.lock().unwrap().take() {
            tokio::spawn(write_loop(self.conn.clone(), rx));
        }
        if let Some(rx) = self.watch_rx.lock().unwrap().take() {
            let channels = Channels {
                user_prefix: self.channel(""),
                control: self.control_channel(),
            };
            tokio::spawn(subscribe_loop(
                self.client.clone(),
                rx,
                hub,
                channels,
                self.origin.clone(),
            ));
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
        let mut conn = self.conn.clone();
        let claimed: Option<String> = redis::cmd("SET")
            .arg(owner)
            .arg(&self.origin)
            .arg("NX")
            .arg("EX")
            .arg(LIVE_TTL_SECS)
            .query_async(&mut conn)
            .await?;
        Ok(claimed.is_some())
    }

    /// Marks a conversation's answer as running (seq 0, no text yet), so another
    /// instance's tab that opens it before the first delta learns it is streaming.
    pub async fn start_live(&self, conversation_id: &str, message_id: &str) -> anyhow::Result<()> {
        let [text_key, meta_key, _] = self.live_keys(conversation_id);
        let mut conn = self.conn.clone();
        redis::pipe()
            .atomic()
            .del(&text_key)
            .ignore()
            .hset_multiple(&meta_key, &[("message", message_id), ("seq", "0")])
            .ignore()
            .expire(&meta_key, LIVE_TTL_SECS as i64)
            .ignore()
            .query_async::<()>(&mut conn)
            .await?;
        Ok(())
    }

    /// Gives up a claim whose answer never started.
    pub async fn release(&self, conversation_id: &str) {
        let [_, _, owner] = self.live_keys(conversation_id);
        let mut conn = self.conn.clone();
        let released: redis::RedisResult<()> = redis::cmd("DEL").arg(owner).query_async(&mut conn).await;
        if let Err(e) = released {
            tracing::warn!(error = %e, "releasing an answer claim (it expires by itself)");
        }
    }

    /// The running answer of a conversation, whichever instance runs it.
    pub async fn snapshot(&self, conversation_id: &str) -> anyhow::Result<Option<Snapshot>> {
        let [text_key, meta_key, _] = self.live_keys(conversation_id);
        let mut conn = self.conn.clone();
        let (message_id, seq, text): (Option<String>, Option<u64>, Option<String>) = redis::pipe()
            .atomic()
            .hget(&meta_key, "message")
            .hget(&meta_key, "seq")
            .get(&text_key)
            .query_async(&mut conn)
            .await?;
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
        let _ = self.writer.send(command);
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
async fn write_loop(mut conn: redis::aio::ConnectionManager, mut rx: mpsc::UnboundedReceiver<Command>) {
    let mut batch = Vec::with_capacity(256);
    while rx.recv_many(&mut batch, 256).await > 0 {
        let mut pipe = redis::pipe();
        pipe.atomic();
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
                    pipe.append(&text_key, delta)
                        .ignore()
                        .hset_multiple(&meta_key, &[("message", message_id), ("seq", seq.to_string())])
                        .ignore()
                        .expire(&text_key, LIVE_TTL_SECS as i64)
                        .ignore()
                        .expire(&meta_key, LIVE_TTL_SECS as i64)
                        .ignore()
                        .publish(channel, payload)
                        .ignore();
                }
                Command::Forget { keys } => {
                    pipe.del(&keys).ignore();
                }
            }
        }
        if let Err(e) = pipe.query_async::<()>(&mut conn).await {
            tracing::error!(error = %e, "relaying events through Redis");
        }
    }
}

struct Channels {
    /// `{prefix}user:`, followed by a user id.
    user_prefix: String,
    control: String,
}

/// Keeps one subscriber connection with the control channel and the channels of the
/// users this instance serves, reconnecting (and subscribing again) when it drops.
async fn subscribe_loop(
    client: redis::Client,
    mut watch: mpsc::UnboundedReceiver<Watch>,
    hub: Addr<SessionHub>,
    channels: Channels,
    origin: String,
) {
    let mut watched: HashSet<String> = HashSet::from([channels.control.clone()]);
    loop {
        let pubsub = match client.get_async_pubsub().await {
            Ok(p) => p,
            Err(e) => {
                tracing::error!(error = %e, "connecting the Redis subscriber; retrying");
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
        };
        let (mut sink, mut stream) = pubsub.split();
        for channel in &watched {
            let _ = sink.subscribe(channel).await;
        }
        loop {
            tokio::select! {
                change = watch.recv() => {
                    let result = match change {
                        Some(Watch::Add(channel)) => {
                            let r = sink.subscribe(&channel).await;
                            watched.insert(channel);
                            r
                        }
                        Some(Watch::Remove(channel)) => {
                            watched.remove(&channel);
                            sink.unsubscribe(&channel).await
                        }
                        None => return,
                    };
                    if result.is_err() {
                        break;
                    }
                }
                message = stream.next() => {
                    let Some(message) = message else { break };
                    let name = message.get_channel_name();
                    // Cancels come on the control channel, for no user in particular.
                    let user = if name == channels.control {
                        String::new()
                    } else {
                        match name.strip_prefix(&channels.user_prefix) {
                            Some(user) => user.to_owned(),
                            None => continue,
                        }
                    };
                    let Ok(payload) = message.get_payload::<String>() else { continue };
                    if let Some((from, event)) = decode(&payload) {
                        if from != origin {
                            hub.do_send(FromRemote { user, event });
                        }
                    }
                }
            }
        }
        tracing::warn!("Redis subscriber connection lost; reconnecting");
        tokio::time::sleep(Duration::from_millis(200)).await;
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
