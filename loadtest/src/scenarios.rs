//! The load: virtual users, each with its tabs (websockets), doing one of
//! - `idle`: connect every tab, then hold it open;
//! - `churn`: connect, wait for `ready`, hold briefly, disconnect, again;
//! - `chat`: every `interval`, send a message from the first tab and follow the answer on
//!   every tab (delays, lost or repeated deltas, tabs apart); with `interval` 0 the next
//!   message goes as soon as the answer completed (back to back);
//!
//! and, beside any of them, a login flood over HTTP.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use std::sync::atomic::Ordering::Relaxed;

use futures_util::stream::{SelectAll, SplitSink};
use futures_util::{SinkExt, StreamExt};
use tokio::sync::{watch, Semaphore};
use tokio_tungstenite::tungstenite::Error as WsError;
use tokio_tungstenite::tungstenite::Message;

use crate::client::{connect, wall_us, Frame, Target, Ws};
use crate::metrics::{Counters, Delay, Metrics};
use crate::stats::SeqCheck;

/// A seeded user: e-mail and access token.
#[derive(Clone, Debug)]
pub struct User {
    pub email: String,
    pub token: String,
}

/// Reads `email<TAB>token` lines (`chat-server users seed --tokens FILE`).
pub fn read_users(path: &std::path::Path) -> anyhow::Result<Vec<User>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    parse_users(&text)
}

/// The first user's token in a tokens file (the one the search and stats benches call as).
pub fn first_token(path: &std::path::Path) -> anyhow::Result<String> {
    let users = read_users(path)?;
    Ok(users.into_iter().next().context("no token line")?.token)
}

fn parse_users(text: &str) -> anyhow::Result<Vec<User>> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let (email, token) = l.split_once('\t').context("a line without a tab")?;
            Ok(User {
                email: email.trim().to_owned(),
                token: token.trim().to_owned(),
            })
        })
        .collect()
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Idle,
    Churn,
    Chat,
    /// The model stub called directly, over HTTP (`direct.rs`), not through a server.
    Direct,
}

/// Everything the virtual users share.
#[derive(Clone)]
pub struct Load {
    pub kind: Kind,
    pub target: Target,
    pub tabs: usize,
    /// Connects in flight at once while ramping up.
    pub ramp: Arc<Semaphore>,
    pub metrics: Arc<Metrics>,
    /// Flips to true when every tab has connected and the measured phase begins.
    pub go: watch::Receiver<bool>,
    /// Flips to true when the measured phase ends.
    pub stop: watch::Receiver<bool>,
    /// chat: time between one user's messages (the next waits for the answer).
    pub interval: Duration,
    /// chat: every message starts a new conversation (`conversationId: null`).
    pub new_conversations: bool,
    /// chat: the server's batching window, taken off the delay beyond batching.
    pub batch: Duration,
    /// churn: how long a session stays open.
    pub hold: Duration,
}

/// Runs user `n` (the `n`-th of all users; its tabs are numbered from `n * tabs`).
pub async fn run_user(load: Load, n: usize, user: User, first_send: Duration) {
    match load.kind {
        Kind::Idle => {
            let tabs = (0..load.tabs).map(|t| hold_tab(load.clone(), n * load.tabs + t, user.token.clone()));
            futures_util::future::join_all(tabs).await;
        }
        Kind::Churn => {
            let tabs = (0..load.tabs).map(|t| churn_tab(load.clone(), n * load.tabs + t, user.token.clone()));
            futures_util::future::join_all(tabs).await;
        }
        Kind::Chat => chat_user(load, n, user, first_send).await,
        Kind::Direct => unreachable!("direct runs have no websocket users"),
    }
}

/// Connects tab `slot` and waits for `ready`; records the time it took, or the failure.
async fn open(load: &Load, slot: usize, token: &str) -> Option<Ws> {
    let _permit = load.ramp.acquire().await.ok()?;
    let (url, source) = load.target.pick(slot);
    let started = Instant::now();
    let opened = tokio::time::timeout(Duration::from_secs(30), async {
        let mut ws = connect(url, source, Some(token)).await?;
        while let Some(msg) = ws.next().await {
            if let Message::Text(text) = msg? {
                let frame: Frame = serde_json::from_str(&text)?;
                match frame.kind.as_ref() {
                    "ready" => return Ok(ws),
                    "error" => anyhow::bail!("error frame: {:?}", frame.code),
                    _ => {}
                }
            }
        }
        anyhow::bail!("closed before ready")
    })
    .await;
    let m = &load.metrics;
    match opened {
        Ok(Ok(ws)) => {
            m.record(Delay::Connect, started.elapsed().as_micros() as i64);
            m.c.session_opened();
            Some(ws)
        }
        Ok(Err(e)) => {
            Counters::inc(&m.c.connect_errors);
            if m.c.connect_errors.load(Relaxed) <= 3 {
                eprintln!("connect failed: {e:#}");
            }
            None
        }
        Err(_) => {
            Counters::inc(&m.c.connect_errors);
            None
        }
    }
}

fn closed(m: &Metrics, by_us: bool) {
    m.c.held.fetch_sub(1, Relaxed);
    if !by_us {
        Counters::inc(&m.c.dropped);
    }
}

async fn hold_tab(load: Load, slot: usize, token: String) {
    let Some(mut ws) = open(&load, slot, &token).await else {
        return;
    };
    let stop = load.stop.clone();
    loop {
        tokio::select! {
            msg = ws.next() => match msg {
                Some(Ok(Message::Text(text))) => count_frame(&load.metrics, text.len()),
                Some(Ok(_)) => {}
                _ => return closed(&load.metrics, false),
            },
            _ = switched(&stop) => break,
        }
    }
    let _ = ws.close(None).await;
    closed(&load.metrics, true);
}

async fn churn_tab(load: Load, slot: usize, token: String) {
    let stop = load.stop.clone();
    while !*stop.borrow() {
        let Some(mut ws) = open(&load, slot, &token).await else {
            // Back off a little so a refusing server is not hammered in a tight loop.
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        let _ = tokio::time::timeout(load.hold, async {
            while let Some(Ok(msg)) = ws.next().await {
                if let Message::Text(text) = msg {
                    count_frame(&load.metrics, text.len());
                }
            }
        })
        .await;
        let _ = ws.close(None).await;
        closed(&load.metrics, true);
    }
}

/// Resolves once the switch is on (or its sender is gone). A plain `wait_for` would hold
/// a lock guard in `select!`'s output, which makes the task not `Send`.
async fn switched(switch: &watch::Receiver<bool>) {
    let _ = switch.clone().wait_for(|on| *on).await;
}

fn count_frame(m: &Metrics, len: usize) {
    Counters::inc(&m.c.frames);
    m.c.bytes.fetch_add(len as u64, Relaxed);
}

/// The answer a user is waiting for.
struct Pending {
    client_id: String,
    sent_wall_us: i64,
    sent_at: Instant,
    message_id: Option<String>,
    /// Per tab: the deltas' sequence and text, and whether the answer completed there.
    tabs: Vec<(SeqCheck, String, bool)>,
    got_first: bool,
    /// By `seq`: when the first tab got that delta, and how many tabs have.
    arrivals: HashMap<u64, (Instant, usize)>,
}

/// How long after its due time a send may still wait for the previous answer before it
/// counts as late. Answers that are as long as the interval (the bench's 20 s at 20 s)
/// end a few milliseconds after the next send is due; that is the model's pace, not a
/// backlog. A second is: the user would see its answers fall behind.
const LATE_GRACE: Duration = Duration::from_secs(1);

type Sink = SplitSink<Ws, Message>;
type Incoming = futures_util::stream::BoxStream<'static, (usize, Result<Message, WsError>)>;

/// What a frame meant for the answer a user waits for.
#[derive(PartialEq, Eq)]
enum Step {
    Waiting,
    /// Completed on every tab.
    Completed,
    /// The send was refused: nothing will stream.
    Refused,
}

async fn chat_user(load: Load, n: usize, user: User, first_send: Duration) {
    let mut sinks: Vec<Option<Sink>> = Vec::new();
    let mut streams: SelectAll<Incoming> = SelectAll::new();
    for t in 0..load.tabs {
        let Some(ws) = open(&load, n * load.tabs + t, &user.token).await else {
            continue;
        };
        let (sink, stream) = ws.split();
        let tab = sinks.len();
        sinks.push(Some(sink));
        streams.push(stream.map(move |m| (tab, m)).boxed());
    }
    let tabs = sinks.len();
    let m = &load.metrics;
    if tabs == 0 {
        // Nothing will be sent: the warm-up must not wait for this user.
        Counters::inc(&m.c.started);
        return;
    }
    let go = load.go.clone();
    let stop = load.stop.clone();
    let mut conversation: Option<String> = None;
    let mut pending: Option<Pending> = None;
    let mut sent = 0u64;
    let mut stopping = false;
    // Whether the send now due was already counted as late.
    let mut counted_late = false;
    // Sends start together once every tab of the run has connected.
    tokio::select! {
        _ = switched(&go) => {}
        _ = switched(&stop) => stopping = true,
    }
    let mut next_send = tokio::time::Instant::now() + first_send;
    while !stopping || pending.is_some() {
        let may_send = pending.is_none() && !stopping;
        tokio::select! {
            item = streams.next() => {
                let Some((tab, msg)) = item else { break };
                let text = match msg {
                    Ok(Message::Text(text)) => text,
                    Ok(Message::Close(_)) | Err(_) => {
                        if sinks[tab].take().is_some() {
                            closed(m, false);
                        }
                        continue;
                    }
                    Ok(_) => continue,
                };
                count_frame(m, text.len());
                let Ok(frame) = serde_json::from_str::<Frame>(&text) else { continue };
                let step = on_frame(&load, tab, &frame, &mut pending, &mut conversation);
                if load.new_conversations {
                    conversation = None;
                }
                if step != Step::Waiting {
                    pending = None;
                    m.c.streaming.fetch_sub(1, Relaxed);
                    if step == Step::Completed {
                        Counters::inc(&m.c.answers);
                    }
                }
            }
            _ = tokio::time::sleep_until(next_send), if may_send => {
                let Some(sink) = sinks[0].as_mut() else { break };
                sent += 1;
                let client_id = format!("u{n}-{sent}");
                let frame = serde_json::json!({
                    "type": "chat.send",
                    "clientId": client_id,
                    "conversationId": conversation,
                    "content": format!("Load test message {sent} from user {n}."),
                });
                pending = Some(Pending {
                    client_id,
                    sent_wall_us: wall_us(),
                    sent_at: Instant::now(),
                    message_id: None,
                    tabs: vec![(SeqCheck::default(), String::new(), false); tabs],
                    got_first: false,
                    arrivals: HashMap::new(),
                });
                if sink.send(Message::text(frame.to_string())).await.is_err() {
                    break;
                }
                Counters::inc(&m.c.sends);
                counted_late = false;
                if sent == 1 {
                    Counters::inc(&m.c.started);
                }
                m.c.streaming.fetch_add(1, Relaxed);
                // The next message is due an interval after this one, or as soon as this
                // answer completes if it takes longer.
                next_send = (next_send + load.interval).max(tokio::time::Instant::now());
            }
            _ = tokio::time::sleep_until(next_send + LATE_GRACE),
                if pending.is_some() && !counted_late && !stopping =>
            {
                counted_late = true;
                Counters::inc(&m.c.late_sends);
            }
            _ = switched(&stop), if !stopping => stopping = true,
        }
    }
    if pending.is_some() {
        m.c.streaming.fetch_sub(1, Relaxed);
    }
    for mut sink in sinks.into_iter().flatten() {
        let _ = sink.close().await;
        closed(m, true);
    }
}

/// Follows one frame of tab `tab` for the answer the user waits for.
fn on_frame(
    load: &Load,
    tab: usize,
    frame: &Frame,
    pending: &mut Option<Pending>,
    conversation: &mut Option<String>,
) -> Step {
    let m = &load.metrics;
    let Some(p) = pending.as_mut() else {
        if frame.kind == "error" {
            Counters::inc(&m.c.error_frames);
        }
        return Step::Waiting;
    };
    let ours = frame.client_id.as_deref() == Some(p.client_id.as_str());
    match frame.kind.as_ref() {
        "conversation.created" if ours && tab == 0 => {
            *conversation = frame.conversation.as_ref().map(|c| c.id.to_string());
        }
        "message.created" if ours => {
            if let Some(msg) = frame.message.as_ref().filter(|msg| msg.role == "assistant") {
                p.message_id = Some(msg.id.to_string());
            }
        }
        "message.delta"
            if p.message_id.is_some() && frame.message_id.as_deref() == p.message_id.as_deref() =>
        {
            let now_wall = wall_us();
            let now = Instant::now();
            Counters::inc(&m.c.deltas);
            let seq = frame.seq.unwrap_or(0);
            let (check, text, _) = &mut p.tabs[tab];
            check.see(seq);
            text.push_str(frame.delta.as_deref().unwrap_or(""));
            if let Some(emitted) = frame.emitted_at {
                let delay = now_wall - emitted;
                m.record(Delay::ChunkToTab, delay);
                m.record(Delay::BeyondBatch, delay - load.batch.as_micros() as i64);
                if tab == 0 && !p.got_first {
                    m.record(Delay::PreStream, emitted - p.sent_wall_us);
                }
            }
            if tab == 0 && !p.got_first {
                p.got_first = true;
                m.record(Delay::FirstDelta, p.sent_at.elapsed().as_micros() as i64);
            }
            if p.tabs.len() > 1 {
                let entry = p.arrivals.entry(seq).or_insert((now, 0));
                entry.1 += 1;
                if entry.1 > 1 {
                    m.record(Delay::InterTab, now.duration_since(entry.0).as_micros() as i64);
                }
                if entry.1 == p.tabs.len() {
                    p.arrivals.remove(&seq);
                }
            }
        }
        "message.completed" => {
            let Some(msg) = frame.message.as_ref() else {
                return Step::Waiting;
            };
            if Some(msg.id.as_ref()) != p.message_id.as_deref() {
                return Step::Waiting;
            }
            let (check, text, done) = &mut p.tabs[tab];
            *done = true;
            m.c.lost.fetch_add(check.lost, Relaxed);
            m.c.duplicated.fetch_add(check.duplicated, Relaxed);
            if text != msg.content.as_ref() {
                Counters::inc(&m.c.mismatched);
            }
            if frame.finish_reason.as_deref() != Some("stop") && tab == 0 {
                Counters::inc(&m.c.bad_answers);
            }
            if p.tabs.iter().all(|t| t.2) {
                return Step::Completed;
            }
        }
        "error" => {
            Counters::inc(&m.c.error_frames);
            if ours && tab == 0 {
                return Step::Refused;
            }
        }
        _ => {}
    }
    Step::Waiting
}

/// Logs in as the seeded users, `concurrency` at a time, until the run stops.
pub async fn login_flood(
    base_url: String,
    users: Arc<Vec<User>>,
    password: String,
    concurrency: usize,
    metrics: Arc<Metrics>,
    mut go: watch::Receiver<bool>,
    stop: watch::Receiver<bool>,
) {
    if go.wait_for(|g| *g).await.is_err() {
        return;
    }
    let client = reqwest::Client::new();
    let url = format!("{base_url}/api/auth/login");
    let workers = (0..concurrency).map(|w| {
        let (client, url, users, password, metrics, stop) = (
            client.clone(),
            url.clone(),
            users.clone(),
            password.clone(),
            metrics.clone(),
            stop.clone(),
        );
        async move {
            let mut i = w;
            while !*stop.borrow() {
                let user = &users[i % users.len()];
                i += concurrency;
                let started = Instant::now();
                let body = serde_json::json!({ "email": user.email, "password": password });
                let status = client
                    .post(&url)
                    .json(&body)
                    .send()
                    .await
                    .map(|r| r.status().as_u16());
                metrics.record(Delay::Login, started.elapsed().as_micros() as i64);
                let c = &metrics.c;
                match status {
                    Ok(200) => Counters::inc(&c.logins_ok),
                    Ok(429) => Counters::inc(&c.logins_429),
                    _ => Counters::inc(&c.logins_other),
                }
            }
        }
    });
    futures_util::future::join_all(workers).await;
}

/// When user `n` of `users` sends first: spread evenly over `spread` (one interval, or
/// about one answer's length back to back), so the sends do not all land at once and
/// answers complete evenly over the measured window rather than in waves.
pub fn first_send(n: usize, users: usize, spread: Duration) -> Duration {
    spread.mul_f64(n as f64 / users.max(1) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_files_are_email_tab_token() {
        let users = parse_users("a@x.com\ttok1\n\nb@x.com\ttok2\n").unwrap();
        assert_eq!(users.len(), 2);
        assert_eq!(
            (users[1].email.as_str(), users[1].token.as_str()),
            ("b@x.com", "tok2")
        );
        assert!(parse_users("no tab here").is_err());
    }

    #[test]
    fn first_sends_spread_over_the_interval() {
        let i = Duration::from_secs(10);
        assert_eq!(first_send(0, 4, i), Duration::ZERO);
        assert_eq!(first_send(2, 4, i), Duration::from_secs(5));
        assert!(first_send(3, 4, i) < i);
    }
}
