//! The realtime side as the server wires it: the shards, their session hubs, the running
//! generations, the model provider, and (with Redis) the relay between instances. The
//! chat rules themselves live in `crate::chat`; HTTP handlers publish events through
//! [`Realtime`].

pub mod openai;
pub mod redis_relay;
pub mod service;
pub mod slots;

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chat_actors::generation::Generations;
use chat_actors::hub::{FanOut, Hubs};
use chat_actors::messages::SessionConfig;
use chat_actors::model::{DemoProvider, ModelProvider};
use chat_actors::shard::Shards;
use chat_contract::frames::ServerFrame;

use crate::chat::cache::Accounts;
use crate::config::{is_set, Settings};
use crate::redis_conn::Redis;
use redis_relay::RedisRelay;
use slots::AnswerSlots;

pub struct Realtime {
    pub shards: Shards,
    pub hubs: Hubs,
    pub generations: Arc<Generations>,
    /// Users and plans of the users with tabs here, for the chat's checks.
    pub accounts: Arc<Accounts>,
    pub provider: Arc<dyn ModelProvider>,
    pub relay: Option<Arc<RedisRelay>>,
    pub session: Arc<SessionConfig>,
    /// Answers streaming per user, capped.
    pub answers: AnswerSlots,
    /// Open websockets per client address.
    pub sockets: Arc<SocketCounts>,
    /// Set on shutdown: new sends are refused while running answers finish.
    draining: AtomicBool,
}

impl Realtime {
    /// Starts `shards` arbiters (one per HTTP worker) with a hub on each.
    pub fn start(settings: &Settings, redis: Option<Redis>, shards: Shards) -> Realtime {
        let chat = &settings.chat;
        let answers = AnswerSlots::new(
            chat.max_parallel_answers,
            redis
                .as_ref()
                .map(|conn| (conn.clone(), settings.redis.prefix.clone())),
            settings.redis_timeout(),
        );
        let relay = redis.map(|conn| {
            Arc::new(RedisRelay::new(
                conn,
                settings.redis.prefix.clone(),
                settings.redis_timeout(),
                settings.redis.relay_queue,
                Duration::from_millis(settings.redis.answer_lease_ms.max(100)),
            ))
        });
        let fan_out = relay.clone().map(|r| r as Arc<dyn FanOut>);
        let hubs = Hubs::start(&shards, fan_out, chat.max_tabs_per_user);
        // The registry tells the hubs how to stop its answers on a cancel from elsewhere.
        let generations = Generations::new(shards.clone(), hubs.clone());
        let accounts = Arc::new(Accounts::new(Duration::from_secs(chat.token_recheck_secs.max(1))));
        Realtime {
            shards,
            hubs,
            generations,
            accounts,
            provider: provider(settings),
            relay,
            session: Arc::new(SessionConfig {
                heartbeat: Duration::from_secs(chat.heartbeat_secs.max(1)),
                idle_timeout: Duration::from_secs(chat.idle_timeout_secs.max(1)),
                auth_timeout: Duration::from_millis((chat.auth_timeout_secs * 1000).max(100)),
                queue: chat.session_queue,
                write_timeout: write_timeout(settings),
                max_frames_per_sec: chat.max_frames_per_sec.max(1),
                max_in_flight: chat.max_requests_in_flight.max(1),
                token_recheck: Duration::from_secs(chat.token_recheck_secs.max(1)),
            }),
            answers,
            sockets: Arc::new(SocketCounts::new(chat.max_sockets_per_address)),
            draining: AtomicBool::new(false),
        }
    }

    /// Starts relaying events between instances (once the shards have started: what
    /// other instances send goes to the hubs on them).
    pub fn attach_relay(&self) {
        if let Some(relay) = &self.relay {
            relay.attach(&self.shards, self.hubs.clone(), self.accounts.clone());
        }
    }

    pub fn start_draining(&self) {
        self.draining.store(true, Ordering::SeqCst);
    }

    pub fn is_draining(&self) -> bool {
        self.draining.load(Ordering::SeqCst)
    }

    /// Sends `frame` to every tab of the user, on every instance.
    pub fn publish(&self, user_id: &str, frame: &ServerFrame) {
        // A change to the user or their plan: the chat reads them afresh (other instances
        // do the same when the frame reaches them).
        if Accounts::changes_account(frame) {
            self.accounts.forget(user_id);
        }
        self.hubs.publish_frame(user_id, frame);
    }
}

impl Drop for Realtime {
    /// The shards' threads end with the server (tests build many servers in a process).
    fn drop(&mut self) {
        self.shards.stop();
    }
}

/// How long a tab may take no data before it is closed.
pub fn write_timeout(settings: &Settings) -> Duration {
    Duration::from_secs(settings.chat.write_timeout_secs.max(1))
}

/// Open websockets per client address on this instance, so one address cannot hold
/// thousands of sockets (each costs an actor, buffers and a file descriptor).
pub struct SocketCounts {
    max: usize,
    open: Mutex<HashMap<IpAddr, usize>>,
}

/// One open socket; it counts until dropped.
pub struct SocketGuard {
    counts: Arc<SocketCounts>,
    address: IpAddr,
}

impl SocketCounts {
    pub fn new(max: usize) -> Self {
        SocketCounts {
            max: max.max(1),
            open: Mutex::new(HashMap::new()),
        }
    }

    /// Counts a socket from `address`; `None` when it already has as many as allowed.
    pub fn open(self: &Arc<Self>, address: IpAddr) -> Option<SocketGuard> {
        let mut open = self.open.lock().expect("socket counts lock");
        let count = open.entry(address).or_default();
        if *count >= self.max {
            return None;
        }
        *count += 1;
        Some(SocketGuard {
            counts: self.clone(),
            address,
        })
    }

    /// Sockets open from `address`.
    pub fn count(&self, address: IpAddr) -> usize {
        let open = self.open.lock().expect("socket counts lock");
        open.get(&address).copied().unwrap_or(0)
    }
}

impl Drop for SocketGuard {
    fn drop(&mut self) {
        let mut open = self.counts.open.lock().expect("socket counts lock");
        if let Some(count) = open.get_mut(&self.address) {
            *count -= 1;
            if *count == 0 {
                open.remove(&self.address);
            }
        }
    }
}

fn provider(settings: &Settings) -> Arc<dyn ModelProvider> {
    let m = &settings.model;
    if is_set(&m.openai_api_key) {
        Arc::new(openai::OpenAiProvider::new(
            &m.openai_api_key,
            &m.openai_base_url,
            m.embeddings,
        ))
    } else {
        Arc::new(DemoProvider {
            tokens_per_sec: m.demo_tokens_per_sec,
            reply_tokens: m.demo_reply_tokens,
        })
    }
}
