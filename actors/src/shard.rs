//! Shards: one arbiter (thread) per core, each running the realtime work of the users
//! that hash to it: their hub entries, their generations with their timers and model
//! streams, and their quota actors. A user's events are then handled on one thread, in
//! order, with no lock between them, and users spread over every core. Nothing runs on
//! the System arbiter.

use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
use std::sync::Arc;

use actix::{Arbiter, ArbiterHandle};

#[derive(Clone)]
pub struct Shards {
    arbiters: Arc<Vec<ArbiterHandle>>,
}

impl Shards {
    /// Starts `count` arbiters (at least one).
    pub fn start(count: usize) -> Shards {
        let arbiters = (0..count.max(1)).map(|_| Arbiter::new().handle()).collect();
        Shards {
            arbiters: Arc::new(arbiters),
        }
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
        self.arbiters[self.index(user)].clone()
    }

    pub fn arbiter_at(&self, index: usize) -> ArbiterHandle {
        self.arbiters[index].clone()
    }

    /// Stops every shard's arbiter (at shutdown, after the work on them is done).
    pub fn stop(&self) {
        for arbiter in self.arbiters.iter() {
            arbiter.stop();
        }
    }
}
