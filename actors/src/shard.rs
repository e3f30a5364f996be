//! Shards: one thread per core, each running the realtime work of the users that hash
//! to it: their hub entries, their generations with their timers and model streams, and
//! their quota actors. A user's events are then handled on one thread, in order, with no
//! lock between them, and users spread over every core. Nothing runs on the System
//! arbiter.
//!
//! In the server the shards are the HTTP workers' own threads ([`Shards::on_workers`]):
//! a tab whose connection its user's worker accepted gets its frames with no wake of
//! another thread, and the process runs one busy thread per core instead of two. Tests
//! and tools without an HTTP server start arbiters of their own ([`Shards::start`]).

use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use actix::{Arbiter, ArbiterHandle};

#[derive(Clone)]
pub struct Shards {
    arbiters: Arc<[OnceLock<ArbiterHandle>]>,
    /// The next slot a starting HTTP worker takes.
    next: Arc<AtomicUsize>,
    /// Whether the arbiters are this value's own (stopped by [`Shards::stop`]); an HTTP
    /// worker's ends with the server.
    own: bool,
}

impl Shards {
    /// Starts `count` arbiters of its own (at least one).
    pub fn start(count: usize) -> Shards {
        let arbiters = (0..count.max(1))
            .map(|_| OnceLock::from(Arbiter::new().handle()))
            .collect();
        Shards {
            arbiters,
            next: Arc::new(AtomicUsize::new(count.max(1))),
            own: true,
        }
    }

    /// `count` shards that are the threads of the HTTP server's `count` workers: each
    /// worker takes one with [`Shards::adopt_current`] as it starts. The server's owner
    /// waits for [`Shards::started`] before anything may use a shard.
    pub fn on_workers(count: usize) -> Shards {
        Shards {
            arbiters: (0..count.max(1)).map(|_| OnceLock::new()).collect(),
            next: Arc::new(AtomicUsize::new(0)),
            own: false,
        }
    }

    /// Makes this thread's arbiter the next shard without one (called on each HTTP
    /// worker's thread as it builds its app; past the last shard, nothing).
    pub fn adopt_current(&self) {
        let index = self.next.fetch_add(1, Ordering::SeqCst);
        if let Some(slot) = self.arbiters.get(index) {
            let _ = slot.set(Arbiter::current());
        }
    }

    /// Resolves once every shard has its arbiter (at once for arbiters of its own; for
    /// HTTP workers', once the server runs and each worker has started), false if that
    /// takes longer than `limit`. Nothing may ask for a shard before: the wait in
    /// [`Shards::arbiter_at`] would block its thread.
    pub async fn started(&self, limit: std::time::Duration) -> bool {
        let deadline = tokio::time::Instant::now() + limit;
        while self.arbiters.iter().any(|slot| slot.get().is_none()) {
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        true
    }

    pub fn len(&self) -> usize {
        self.arbiters.len()
    }

    pub fn is_empty(&self) -> bool {
        self.arbiters.is_empty()
    }

    /// The shard of `user`: the same on every call and in every process of one build.
    pub fn index(&self, user: &str) -> usize {
        // A fixed-key hasher, so the choice does not change between calls.
        let hash = BuildHasherDefault::<DefaultHasher>::default().hash_one(user);
        (hash % self.arbiters.len() as u64) as usize
    }

    pub fn arbiter(&self, user: &str) -> ArbiterHandle {
        self.arbiter_at(self.index(user))
    }

    pub fn arbiter_at(&self, index: usize) -> ArbiterHandle {
        self.arbiters[index].wait().clone()
    }

    /// Stops the shards' arbiters if they are its own (at shutdown, after the work on
    /// them is done); HTTP workers' stop with the server.
    pub fn stop(&self) {
        if self.own {
            for arbiter in self.arbiters.iter().filter_map(OnceLock::get) {
                arbiter.stop();
            }
        }
    }
}
