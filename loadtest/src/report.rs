//! The report: a progress line every second while running, then the figures as text and
//! as JSON (what `make bench` turns into docs/performance.md).

use std::time::Instant;

use serde::Serialize;

use crate::metrics::{Counts, Delay, Tally};
use crate::procfs;
use crate::quota::QuotaRun;
use crate::scenarios::Kind;
use crate::stats::{bytes_per_session, rate, Summary};

const MB: f64 = 1024.0 * 1024.0;

/// The counters when the measured window began and ended. The window starts once every
/// tab has connected and (chat, direct) every user has started sending, so neither the
/// connect ramp nor the ramp of first sends is in it; every rate of the report is taken
/// over it, and the delay histograms hold only what happened in it.
pub struct Phase {
    /// Connecting every tab.
    pub ramp_secs: f64,
    /// From `go` until every user had started (its first message sent).
    pub warmup_secs: f64,
    pub secs: f64,
    pub at_go: Counts,
    pub at_end: Counts,
}

impl Phase {
    /// How much a counter grew in the window.
    fn grew(&self, counter: impl Fn(&Counts) -> u64) -> u64 {
        counter(&self.at_end).saturating_sub(counter(&self.at_go))
    }
}

/// What ran: the report's heading.
pub struct Shape {
    pub label: String,
    pub users: usize,
    pub tabs: usize,
    pub servers: usize,
    pub procs: usize,
}

#[derive(Debug, Default, Serialize)]
pub struct ServerFigures {
    pub rss_before_mb: Option<f64>,
    pub rss_peak_mb: Option<f64>,
    /// The growth of RSS over the idle server, per session held at the end.
    pub rss_per_session_bytes: Option<u64>,
    /// CPU seconds (user + system) the server spent in the measured phase.
    pub cpu_secs: Option<f64>,
    /// The same per server, in the order of `--server-pid` (runs on several instances).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_secs_each: Option<Vec<f64>>,
}

impl ServerFigures {
    pub fn measure(
        pids: &[u32],
        rss_before: Option<u64>,
        rss_peak: Option<u64>,
        cpu_go: Option<Vec<f64>>,
        held: u64,
    ) -> ServerFigures {
        if pids.is_empty() {
            return ServerFigures::default();
        }
        let spent: Option<Vec<f64>> = match (cpu_go, procfs::cpu_secs_each(pids)) {
            (Some(go), Some(end)) => Some(end.iter().zip(&go).map(|(e, g)| e - g).collect()),
            _ => None,
        };
        ServerFigures {
            rss_before_mb: rss_before.map(|b| b as f64 / MB),
            rss_peak_mb: rss_peak.map(|b| b as f64 / MB),
            rss_per_session_bytes: match (rss_before, rss_peak) {
                (Some(before), Some(peak)) => bytes_per_session(before, peak, held),
                _ => None,
            },
            cpu_secs: spent.as_ref().map(|each| each.iter().sum()),
            cpu_secs_each: spent.filter(|each| each.len() > 1),
        }
    }
}

#[derive(Debug, Serialize)]
pub struct Report {
    /// The command line that produced this report.
    pub command: String,
    pub scenario: Kind,
    pub label: String,
    pub users: usize,
    pub tabs: usize,
    pub servers: usize,
    pub procs: usize,
    pub ramp_secs: f64,
    pub warmup_secs: f64,
    pub measured_secs: f64,
    /// Sessions open at the end of the measured phase.
    pub sessions_held: u64,
    pub connects: u64,
    /// Connects per second while ramping (idle, chat) or while measuring (churn).
    pub connects_per_sec: f64,
    pub connect_errors: u64,
    pub dropped: u64,
    pub error_frames: u64,
    pub frames_per_sec: f64,
    pub bytes_per_sec: f64,
    /// Totals of the whole run, the drain included (for the integrity checks).
    pub sends: u64,
    pub answers: u64,
    pub bad_answers: u64,
    pub deltas: u64,
    /// Rates in the measured window (the same window as `frames_per_sec`).
    pub sends_per_sec: f64,
    pub answers_per_sec: f64,
    pub deltas_per_sec: f64,
    /// Sends still waiting a second after they were due (the previous answer streaming).
    pub late_sends: u64,
    pub lost_deltas: u64,
    pub duplicated_deltas: u64,
    pub mismatched_answers: u64,
    pub logins_ok: u64,
    pub logins_429: u64,
    pub logins_other: u64,
    pub connect: Summary,
    pub first_delta: Summary,
    pub pre_stream: Summary,
    pub chunk_to_tab: Summary,
    pub beyond_batch: Summary,
    pub inter_tab: Summary,
    pub login: Summary,
    pub server: ServerFigures,
    /// Server CPU microseconds per frame received by the tabs.
    pub server_cpu_us_per_frame: Option<f64>,
    /// CPU seconds the model stub spent in the window (runs through the stub).
    pub stub_cpu_secs: Option<f64>,
}

impl Report {
    pub fn new(
        kind: Kind,
        shape: Shape,
        phase: Phase,
        tally: Tally,
        server: ServerFigures,
        stub_cpu_secs: Option<f64>,
    ) -> Report {
        let c = &tally.counts;
        let frames = phase.grew(|c| c.frames);
        let bytes = phase.grew(|c| c.bytes);
        let connects_per_sec = match kind {
            Kind::Churn => rate(phase.grew(|c| c.connects), phase.secs),
            _ => rate(phase.at_go.connects, phase.ramp_secs),
        };
        let server_cpu_us_per_frame = server
            .cpu_secs
            .filter(|_| frames > 0)
            .map(|cpu| cpu * 1e6 / frames as f64);
        Report {
            command: command_line(),
            scenario: kind,
            label: shape.label,
            users: shape.users,
            tabs: shape.tabs,
            servers: shape.servers,
            procs: shape.procs,
            ramp_secs: phase.ramp_secs,
            warmup_secs: phase.warmup_secs,
            measured_secs: phase.secs,
            sessions_held: phase.at_end.held,
            connects: c.connects,
            connects_per_sec,
            connect_errors: c.connect_errors,
            dropped: c.dropped,
            error_frames: c.error_frames,
            frames_per_sec: rate(frames, phase.secs),
            bytes_per_sec: rate(bytes, phase.secs),
            sends: c.sends,
            answers: c.answers,
            bad_answers: c.bad_answers,
            deltas: c.deltas,
            sends_per_sec: rate(phase.grew(|c| c.sends), phase.secs),
            answers_per_sec: rate(phase.grew(|c| c.answers), phase.secs),
            deltas_per_sec: rate(phase.grew(|c| c.deltas), phase.secs),
            late_sends: c.late_sends,
            lost_deltas: c.lost,
            duplicated_deltas: c.duplicated,
            mismatched_answers: c.mismatched,
            logins_ok: c.logins_ok,
            logins_429: c.logins_429,
            logins_other: c.logins_other,
            connect: tally.hist(Delay::Connect).summary(),
            first_delta: tally.hist(Delay::FirstDelta).summary(),
            pre_stream: tally.hist(Delay::PreStream).summary(),
            chunk_to_tab: tally.hist(Delay::ChunkToTab).summary(),
            beyond_batch: tally.hist(Delay::BeyondBatch).summary(),
            inter_tab: tally.hist(Delay::InterTab).summary(),
            login: tally.hist(Delay::Login).summary(),
            server,
            server_cpu_us_per_frame,
            stub_cpu_secs,
        }
    }

    pub fn text(&self) -> String {
        let mut out = format!(
            "== {:?} {} — {} users × {} tabs, {} server(s), {} process(es)\n",
            self.scenario, self.label, self.users, self.tabs, self.servers, self.procs
        );
        let mut line = |name: &str, value: String| out.push_str(&format!("  {name:<26} {value}\n"));
        let direct = self.scenario == Kind::Direct;
        line(
            "ramp / warm-up / measured",
            format!(
                "{:.1} s / {:.1} s / {:.1} s",
                self.ramp_secs, self.warmup_secs, self.measured_secs
            ),
        );
        if !direct {
            line("sessions held", self.sessions_held.to_string());
            line(
                "connects",
                format!(
                    "{} ({:.0}/s), {} failed, {} dropped",
                    self.connects, self.connects_per_sec, self.connect_errors, self.dropped
                ),
            );
        } else if self.connect_errors > 0 {
            line("failed requests", self.connect_errors.to_string());
        }
        line(
            if direct { "SSE events" } else { "frames" },
            format!(
                "{:.0}/s ({:.2} MB/s)",
                self.frames_per_sec,
                self.bytes_per_sec / MB
            ),
        );
        line("error frames", self.error_frames.to_string());
        if !direct {
            line("connect → ready", self.connect.line());
        }
        if self.sends > 0 {
            line(
                "answers",
                format!(
                    "{} sent, {} completed, {} not 'stop', {} sent late; in the window {:.2} sent/s, {:.2} completed/s",
                    self.sends,
                    self.answers,
                    self.bad_answers,
                    self.late_sends,
                    self.sends_per_sec,
                    self.answers_per_sec
                ),
            );
            line(
                "deltas",
                format!(
                    "{} received ({:.0}/s in the window), {} lost, {} duplicated, {} answers mismatched",
                    self.deltas,
                    self.deltas_per_sec,
                    self.lost_deltas,
                    self.duplicated_deltas,
                    self.mismatched_answers
                ),
            );
            if direct {
                line("request → first token", self.first_delta.line());
            } else {
                line("send → first delta", self.first_delta.line());
                line("pre-stream (send → chunk)", self.pre_stream.line());
                line("chunk → tab", self.chunk_to_tab.line());
                line("beyond batching", self.beyond_batch.line());
                line("tab ↔ tab", self.inter_tab.line());
            }
        }
        if self.logins_ok + self.logins_429 + self.logins_other > 0 {
            line(
                "logins",
                format!(
                    "{} ok, {} × 429, {} other; {}",
                    self.logins_ok,
                    self.logins_429,
                    self.logins_other,
                    self.login.line()
                ),
            );
        }
        let s = &self.server;
        if let (Some(before), Some(peak)) = (s.rss_before_mb, s.rss_peak_mb) {
            line("server RSS", format!("{before:.1} MB idle → {peak:.1} MB peak"));
        }
        if let Some(per) = s.rss_per_session_bytes {
            line("server RSS / session", format!("{:.1} KB", per as f64 / 1024.0));
        }
        if let Some(cpu) = s.cpu_secs {
            let per_frame = self
                .server_cpu_us_per_frame
                .map_or(String::new(), |us| format!(", {us:.1} µs/frame"));
            let pct = |secs: f64| 100.0 * secs / self.measured_secs.max(0.001);
            let each = s.cpu_secs_each.as_ref().map_or(String::new(), |each| {
                let list: Vec<String> = each.iter().map(|c| format!("{:.0}%", pct(*c))).collect();
                format!("; each server {}", list.join(", "))
            });
            line(
                "server CPU",
                format!("{cpu:.1} s ({:.0}%){per_frame}{each}", pct(cpu)),
            );
        }
        if let Some(cpu) = self.stub_cpu_secs {
            line(
                "model stub CPU",
                format!("{cpu:.1} s ({:.0}%)", 100.0 * cpu / self.measured_secs.max(0.001)),
            );
        }
        out
    }
}

/// How this process was started, with the binary's name alone.
pub fn command_line() -> String {
    let mut args: Vec<String> = std::env::args().collect();
    if let Some(first) = args.first_mut() {
        *first = "loadtest".into();
    }
    args.join(" ")
}

/// `[ramp 12s] held 18000 connects 18000 failed 0 dropped 0 rss 210 MB`
pub fn progress_line(phase: &str, started: Instant, c: &Counts, pids: &[u32]) -> String {
    format!(
        "[{phase} {:>4}s] held {} connects {} failed {} dropped {}{}",
        started.elapsed().as_secs(),
        c.held,
        c.connects,
        c.connect_errors,
        c.dropped,
        rss_part(pids)
    )
}

/// `[run 5s] held 5000 streaming 4800 frames/s 150000 answers 300 errors 0 rss 300 MB`
pub fn progress_rate_line(started: Instant, last: &Counts, now: &Counts, pids: &[u32]) -> String {
    format!(
        "[run {:>4}s] held {} streaming {} frames/s {} answers {} lost {} errors {} logins {}/{}×429{}",
        started.elapsed().as_secs(),
        now.held,
        now.streaming,
        now.frames.saturating_sub(last.frames),
        now.answers,
        now.lost,
        now.error_frames + now.dropped + now.connect_errors,
        now.logins_ok,
        now.logins_429,
        rss_part(pids)
    )
}

fn rss_part(pids: &[u32]) -> String {
    procfs::rss_bytes(pids)
        .filter(|_| !pids.is_empty())
        .map_or(String::new(), |b| format!(" rss {:.0} MB", b as f64 / MB))
}

#[derive(Debug, Serialize)]
pub struct QuotaReport {
    pub command: String,
    pub concurrency: usize,
    pub checks: u64,
    pub failures: u64,
    pub secs: f64,
    pub checks_per_sec: f64,
    pub check: Summary,
    /// `redis-benchmark` running the same script on the same Redis, calls a second.
    pub redis_benchmark_per_sec: Option<f64>,
}

impl QuotaReport {
    pub fn new(
        run: &QuotaRun,
        concurrency: usize,
        tally: &Tally,
        redis_benchmark: Option<f64>,
    ) -> QuotaReport {
        QuotaReport {
            command: command_line(),
            concurrency,
            checks: run.checks,
            failures: run.failures,
            secs: run.secs,
            checks_per_sec: rate(run.checks, run.secs),
            check: tally.hist(Delay::QuotaCheck).summary(),
            redis_benchmark_per_sec: redis_benchmark,
        }
    }

    pub fn text(&self) -> String {
        let ceiling = self
            .redis_benchmark_per_sec
            .map_or("not installed".into(), |rps| {
                format!(
                    "{rps:.0}/s (the server's path: {:.2}×)",
                    self.checks_per_sec / rps
                )
            });
        format!(
            "== quota — {} in flight\n  checks                     {} in {:.1} s = {:.0}/s, {} failed\n  one check                  {}\n  redis-benchmark, same script {ceiling}\n",
            self.concurrency,
            self.checks,
            self.secs,
            self.checks_per_sec,
            self.failures,
            self.check.line()
        )
    }
}
