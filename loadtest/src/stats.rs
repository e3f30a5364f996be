//! The harness's statistics: delay histograms (HDR, microseconds), their summaries, and
//! the arithmetic of the report (rates, per-session memory). Histograms travel between
//! worker processes as `(value, count)` pairs, so a parent can merge its workers' figures.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Highest delay recorded, in microseconds (a minute); longer ones count as this.
const MAX_US: u64 = 60_000_000;

/// A delay histogram in microseconds, 3 significant digits.
#[derive(Clone, Debug)]
pub struct Hist(Histogram<u64>);

impl Default for Hist {
    fn default() -> Self {
        Hist(Histogram::new_with_bounds(1, MAX_US, 3).expect("valid histogram bounds"))
    }
}

impl Hist {
    /// Records one delay; a negative one (clocks a hair apart) counts as zero.
    pub fn record_us(&mut self, us: i64) {
        self.0.saturating_record(us.clamp(0, MAX_US as i64) as u64);
    }

    pub fn merge(&mut self, other: &Hist) {
        self.0.add(&other.0).expect("histograms share their bounds");
    }

    #[cfg(test)]
    pub fn len(&self) -> u64 {
        self.0.len()
    }

    pub fn summary(&self) -> Summary {
        let h = &self.0;
        let ms = |us: u64| us as f64 / 1000.0;
        if h.is_empty() {
            return Summary::default();
        }
        Summary {
            count: h.len(),
            mean_ms: h.mean() / 1000.0,
            p50_ms: ms(h.value_at_quantile(0.50)),
            p95_ms: ms(h.value_at_quantile(0.95)),
            p99_ms: ms(h.value_at_quantile(0.99)),
            max_ms: ms(h.max()),
        }
    }

    /// The recorded values as `(value, count)` pairs.
    pub fn to_pairs(&self) -> Vec<(u64, u64)> {
        self.0
            .iter_recorded()
            .map(|v| (v.value_iterated_to(), v.count_at_value()))
            .collect()
    }

    pub fn from_pairs(pairs: &[(u64, u64)]) -> Hist {
        let mut h = Hist::default();
        for &(value, count) in pairs {
            h.0.saturating_record_n(value.min(MAX_US), count);
        }
        h
    }
}

/// A histogram as the report shows it, in milliseconds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub count: u64,
    pub mean_ms: f64,
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

impl Summary {
    /// `p50/p95/p99/max` in ms, or `-` when nothing was recorded.
    pub fn line(&self) -> String {
        if self.count == 0 {
            return "-".into();
        }
        format!(
            "{:.2} / {:.2} / {:.2} / {:.2} ms (n={})",
            self.p50_ms, self.p95_ms, self.p99_ms, self.max_ms, self.count
        )
    }
}

/// Events per second over `secs`; zero for an empty interval.
pub fn rate(count: u64, secs: f64) -> f64 {
    if secs > 0.0 {
        count as f64 / secs
    } else {
        0.0
    }
}

/// Server memory per held session: the growth over the idle server's RSS, divided out.
pub fn bytes_per_session(rss_before: u64, rss_after: u64, sessions: u64) -> Option<u64> {
    (sessions > 0).then(|| rss_after.saturating_sub(rss_before) / sessions)
}

/// What a tab's stream of `seq` numbers says about one answer: deltas that never came and
/// deltas that came twice (or out of order).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct SeqCheck {
    last: u64,
    pub lost: u64,
    pub duplicated: u64,
}

impl SeqCheck {
    pub fn see(&mut self, seq: u64) {
        if seq <= self.last {
            self.duplicated += 1;
        } else {
            self.lost += seq - self.last - 1;
            self.last = seq;
        }
    }

    /// A snapshot covered the answer up to `seq`: the next delta expected is `seq + 1`,
    /// and what the snapshot covers is neither lost nor repeated.
    pub fn resume_at(&mut self, seq: u64) {
        self.last = seq;
    }

    /// The last `seq` in order so far.
    pub fn last(&self) -> u64 {
        self.last
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_report_percentiles_in_milliseconds() {
        let mut h = Hist::default();
        for us in 1..=1000 {
            h.record_us(us * 10); // 10 µs .. 10 ms, evenly
        }
        let s = h.summary();
        assert_eq!(s.count, 1000);
        // Three significant digits: within 0.1% of the exact value.
        assert!((s.p50_ms - 5.0).abs() < 0.01, "{s:?}");
        assert!((s.p99_ms - 9.9).abs() < 0.01, "{s:?}");
        assert!((s.max_ms - 10.0).abs() < 0.01, "{s:?}");
        assert!((s.mean_ms - 5.005).abs() < 0.01, "{s:?}");
        assert_eq!(Hist::default().summary(), Summary::default());
        assert_eq!(Hist::default().summary().line(), "-");
    }

    #[test]
    fn negative_and_huge_delays_are_clamped() {
        let mut h = Hist::default();
        h.record_us(-5);
        h.record_us(i64::MAX);
        let s = h.summary();
        assert_eq!(s.count, 2);
        assert_eq!(s.p50_ms, 0.0);
        assert!(s.max_ms >= 59_000.0, "{s:?}");
    }

    #[test]
    fn histograms_survive_the_trip_between_processes_and_merge() {
        let mut a = Hist::default();
        let mut b = Hist::default();
        for us in [100, 200, 300] {
            a.record_us(us);
        }
        for us in [400, 500_000] {
            b.record_us(us);
        }
        let a2 = Hist::from_pairs(&a.to_pairs());
        assert_eq!(a2.summary(), a.summary());
        let mut merged = a2;
        merged.merge(&Hist::from_pairs(&b.to_pairs()));
        let s = merged.summary();
        assert_eq!(s.count, 5);
        assert!((s.max_ms - 500.0).abs() < 0.5, "{s:?}");
        assert!((s.p50_ms - 0.3).abs() < 0.001, "{s:?}");
    }

    #[test]
    fn rates_and_memory_per_session() {
        assert_eq!(rate(500, 2.0), 250.0);
        assert_eq!(rate(5, 0.0), 0.0);
        assert_eq!(bytes_per_session(10_000, 170_000, 10), Some(16_000));
        assert_eq!(bytes_per_session(10_000, 9_000, 10), Some(0));
        assert_eq!(bytes_per_session(10_000, 20_000, 0), None);
    }

    #[test]
    fn sequence_checks_count_gaps_and_repeats() {
        let mut c = SeqCheck::default();
        for seq in [1, 2, 3, 3, 5, 4, 6] {
            c.see(seq);
        }
        // 4 was missing when 5 came (lost), then came late (counted as out of order).
        assert_eq!((c.lost, c.duplicated, c.last()), (1, 2, 6));
        let mut clean = SeqCheck::default();
        (1..=50).for_each(|s| clean.see(s));
        assert_eq!((clean.lost, clean.duplicated), (0, 0));
        // A tab that reconnected resumes from its snapshot: 7 and 8 are covered by it.
        let mut resumed = SeqCheck::default();
        resumed.see(1);
        resumed.resume_at(8);
        resumed.see(9);
        assert_eq!((resumed.lost, resumed.duplicated, resumed.last()), (0, 0, 9));
    }
}
