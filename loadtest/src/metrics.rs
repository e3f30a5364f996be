//! What a run counts, live (atomics and locked histograms the tabs write into) and as a
//! [`Tally`]: a plain snapshot that worker processes print and a parent merges.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::stats::Hist;

macro_rules! counters {
    ($($name:ident: $doc:literal,)*) => {
        /// The live counters of a run.
        #[derive(Default)]
        pub struct Counters { $(#[doc = $doc] pub $name: AtomicU64,)* }

        /// The counters at one moment.
        #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
        pub struct Counts { $(#[doc = $doc] pub $name: u64,)* }

        impl Counters {
            pub fn read(&self) -> Counts {
                Counts { $($name: self.$name.load(Relaxed),)* }
            }
        }

        impl Counts {
            pub fn add(&mut self, other: &Counts) {
                $(self.$name += other.$name;)*
            }
        }
    };
}

counters! {
    held: "Sessions open now (got `ready`).",
    peak_held: "Most sessions open at once (per process; summed across workers).",
    connects: "Sessions that got `ready`.",
    connect_errors: "Connects that failed (refused, handshake, or no `ready`).",
    dropped: "Sessions the server closed or lost that the harness did not close.",
    frames: "Frames received.",
    bytes: "Bytes of frame text received.",
    error_frames: "`error` frames received.",
    sends: "`chat.send` frames sent (direct: requests sent).",
    started: "Users past their start: first message sent (direct: first token in), or no tab connected.",
    streaming: "Answers streaming now.",
    answers: "Answers completed on every tab.",
    late_sends: "Sends still waiting a second after they were due, because the user's previous answer had not completed (a send backlog).",
    bad_answers: "Answers that ended other than `stop`.",
    deltas: "Deltas received (all tabs).",
    lost: "Deltas a tab never got (a gap in `seq`).",
    duplicated: "Deltas a tab got twice or out of order.",
    mismatched: "Answers whose deltas did not add up to the completed text.",
    logins_ok: "Logins answered 200.",
    logins_429: "Logins answered 429 (hashing at capacity).",
    logins_other: "Logins answered anything else.",
}

impl Counters {
    pub fn inc(counter: &AtomicU64) {
        counter.fetch_add(1, Relaxed);
    }

    pub fn session_opened(&self) {
        let now = self.held.fetch_add(1, Relaxed) + 1;
        self.peak_held.fetch_max(now, Relaxed);
        self.connects.fetch_add(1, Relaxed);
    }
}

/// The delay histograms of a run. All but [`Delay::Connect`] and [`Delay::QuotaCheck`]
/// are recorded only inside the measured window (see [`Metrics::set_recording`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Delay {
    /// Socket open to `ready`.
    Connect,
    /// `chat.send` to the first delta on the sending tab.
    FirstDelta,
    /// `chat.send` to the model's first chunk (auth, quota, storage, dispatch).
    PreStream,
    /// The model emitting a delta's first chunk to a tab receiving it.
    ChunkToTab,
    /// The same, less the batching window.
    BeyondBatch,
    /// Between the tabs of one user receiving the same delta.
    InterTab,
    /// A login's answer.
    Login,
    /// One quota check (plan, quota actor, Redis).
    QuotaCheck,
}

#[derive(Default)]
pub struct Metrics {
    pub c: Counters,
    hists: Mutex<BTreeMap<Delay, Hist>>,
    /// On inside the measured window: delays of the ramp, the warm-up and the drain would
    /// otherwise mix into figures whose rates are taken over the window alone.
    recording: AtomicBool,
}

impl Metrics {
    pub fn set_recording(&self, on: bool) {
        self.recording.store(on, Relaxed);
    }

    pub fn record(&self, delay: Delay, us: i64) {
        // Connecting is the ramp's own figure, and quota runs have no ramp.
        let always = matches!(delay, Delay::Connect | Delay::QuotaCheck);
        if !always && !self.recording.load(Relaxed) {
            return;
        }
        self.hists
            .lock()
            .expect("histograms lock")
            .entry(delay)
            .or_default()
            .record_us(us);
    }

    /// Forgets the delays recorded so far: each step of a capacity search has its own.
    pub fn clear_delays(&self) {
        self.hists.lock().expect("histograms lock").clear();
    }

    pub fn tally(&self) -> Tally {
        let hists = self.hists.lock().expect("histograms lock");
        Tally {
            counts: self.c.read(),
            hists: hists.iter().map(|(k, h)| (*k, h.to_pairs())).collect(),
        }
    }
}

/// Counters and histograms at one moment, mergeable across worker processes.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Tally {
    pub counts: Counts,
    pub hists: BTreeMap<Delay, Vec<(u64, u64)>>,
}

impl Tally {
    pub fn merge(&mut self, other: &Tally) {
        self.counts.add(&other.counts);
        for (k, pairs) in &other.hists {
            let mut h = self.hist(*k);
            h.merge(&Hist::from_pairs(pairs));
            self.hists.insert(*k, h.to_pairs());
        }
    }

    pub fn hist(&self, delay: Delay) -> Hist {
        self.hists
            .get(&delay)
            .map(|p| Hist::from_pairs(p))
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tallies_merge_counts_and_histograms() {
        let a = Metrics::default();
        a.c.session_opened();
        a.c.session_opened();
        a.record(Delay::Connect, 1_000);
        let b = Metrics::default();
        b.c.session_opened();
        b.record(Delay::Connect, 3_000);
        b.record(Delay::InterTab, 99); // outside the window: not kept
        b.set_recording(true);
        b.record(Delay::InterTab, 10);
        b.set_recording(false);
        b.record(Delay::InterTab, 99);
        let mut t = a.tally();
        // Through JSON, as a worker hands it to its parent.
        let wire = serde_json::to_string(&b.tally()).unwrap();
        t.merge(&serde_json::from_str(&wire).unwrap());
        assert_eq!((t.counts.connects, t.counts.held, t.counts.peak_held), (3, 3, 3));
        let connect = t.hist(Delay::Connect).summary();
        assert_eq!(connect.count, 2);
        assert!((connect.max_ms - 3.0).abs() < 0.01);
        assert_eq!(t.hist(Delay::InterTab).len(), 1);
        assert_eq!(t.hist(Delay::Login).len(), 0);
    }
}
