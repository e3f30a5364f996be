//! Time as the server sees it. Tests inject a clock they can move forward, so expiry and
//! (later) quota rollover are tested without waiting.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

pub trait Clock: Send + Sync + std::fmt::Debug {
    /// Unix time in milliseconds.
    fn now_ms(&self) -> i64;
}

#[derive(Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        chrono::Utc::now().timestamp_millis()
    }
}

/// A clock that stands still until moved.
#[derive(Debug)]
pub struct ManualClock(AtomicI64);

impl ManualClock {
    pub fn starting_now() -> Arc<Self> {
        Arc::new(ManualClock(AtomicI64::new(SystemClock.now_ms())))
    }

    pub fn advance_ms(&self, ms: i64) {
        self.0.fetch_add(ms, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
}

pub type SharedClock = Arc<dyn Clock>;

pub const MINUTE_MS: i64 = 60_000;
pub const HOUR_MS: i64 = 60 * MINUTE_MS;
pub const DAY_MS: i64 = 24 * HOUR_MS;

/// A stored time (ms) as the API writes times (RFC 3339). Here, at the bottom, so
/// modules below the quotas (billing's VIES checks) can write times too.
pub fn iso(ms: i64) -> String {
    // Every stored time is in range; the epoch stands in for one that is not.
    chrono::DateTime::<chrono::Utc>::from_timestamp_millis(ms)
        .unwrap_or_default()
        .to_rfc3339()
}
