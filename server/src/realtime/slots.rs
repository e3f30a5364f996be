//! How many answers each user has streaming, capped by `chat.max_parallel_answers`: each
//! answer costs the server a model stream, so one account must not run dozens at once.
//! With Redis the count is shared by every instance; without it, it is this process's.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use anyhow::Context;

use crate::outage::redis_call;

/// A count that a crashed instance never gave back heals after this long (well past the
/// longest answer).
const REDIS_TTL_SECS: u64 = 3600;

/// KEYS: the user's counter. ARGV: the cap, the TTL. Returns 1 when a slot was taken.
const TAKE_LUA: &str = r"
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n >= tonumber(ARGV[1]) then return 0 end
redis.call('INCR', KEYS[1])
redis.call('EXPIRE', KEYS[1], ARGV[2])
return 1
";

/// Gives a slot back, never below zero.
const GIVE_BACK_LUA: &str = r"
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n > 1 then redis.call('DECR', KEYS[1]) else redis.call('DEL', KEYS[1]) end
return 1
";

pub struct AnswerSlots {
    max: usize,
    local: Mutex<HashMap<String, usize>>,
    redis: Option<(crate::redis_conn::Redis, String)>,
    /// The time limit of one Redis call.
    timeout: Duration,
}

impl AnswerSlots {
    pub fn new(max: usize, redis: Option<(crate::redis_conn::Redis, String)>, timeout: Duration) -> Self {
        AnswerSlots {
            max: max.max(1),
            local: Mutex::new(HashMap::new()),
            redis,
            timeout,
        }
    }

    pub fn max(&self) -> usize {
        self.max
    }

    /// Takes a slot for a new answer of `user`; `false` when all are in use.
    pub async fn take(&self, user: &str) -> anyhow::Result<bool> {
        if let Some((conn, prefix)) = &self.redis {
            let mut conn = conn.clone();
            let script = redis::Script::new(TAKE_LUA);
            let mut take = script.prepare_invoke();
            take.key(key(prefix, user)).arg(self.max).arg(REDIS_TTL_SECS);
            let taken = redis_call(self.timeout, take.invoke_async::<i64>(&mut conn)).await;
            if taken.is_err() {
                // A paused Redis still takes the slot when it resumes: give it back right
                // behind (in order on the same connection), or the user keeps one slot
                // fewer until the count expires. If the take was lost with its
                // connection, this frees a slot that was not taken (never below zero):
                // one answer more for a moment, never a unit more.
                self.give_back(user).await;
            }
            return Ok(taken.context("taking an answer slot in Redis")? == 1);
        }
        let mut local = self.local.lock().expect("slots lock");
        let used = local.entry(user.to_owned()).or_default();
        if *used >= self.max {
            return Ok(false);
        }
        *used += 1;
        Ok(true)
    }

    /// Gives back the slot of an answer that ended (or never started).
    pub async fn give_back(&self, user: &str) {
        if let Some((conn, prefix)) = &self.redis {
            // One `EVAL`, not a cached script: a give-back queued in a paused Redis
            // behind a take must not fail there for want of a loaded script.
            let mut conn = conn.clone();
            let mut give = redis::cmd("EVAL");
            give.arg(GIVE_BACK_LUA).arg(1).arg(key(prefix, user));
            let given = redis_call(self.timeout, give.query_async::<i64>(&mut conn)).await;
            if let Err(e) = given {
                tracing::warn!(error = %e, "giving back an answer slot in Redis (it heals by TTL)");
            }
            return;
        }
        let mut local = self.local.lock().expect("slots lock");
        if let Some(used) = local.get_mut(user) {
            *used -= 1;
            if *used == 0 {
                local.remove(user);
            }
        }
    }
}

/// The braces keep the key in the user's Redis Cluster slot, beside their quota keys.
fn key(prefix: &str, user: &str) -> String {
    format!("{prefix}answers:{{{user}}}")
}
