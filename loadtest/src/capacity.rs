//! `loadtest capacity`: a stepped ramp that finds how many streaming users one server
//! holds. The users are the chat scenario's (one tab each by default, a message every
//! `--interval`, the answer streaming all the while); each step adds users, lets their
//! first sends spread over `--settle` seconds, then measures a window of `--duration`
//! seconds. The search stops at the first step that does not hold:
//! - the delay beyond the batching window (`Delay::BeyondBatch`) has a p99 over the limit;
//! - a send is late: a user's previous answer had not completed a second after the next
//!   send was due (answers fall behind sends);
//! - a delta was lost, repeated or mismatched, or a tab saw an error, a drop or a failed
//!   connect.
//!
//! A step that misses on the delay alone is measured for a second window and judged on
//! both together (see [`measure`]).
//!
//! Steps only go up: stepping down would need the extra users' answers (20 s long in the
//! bench) to run out first, so a geometric step (`--growth`) from a low `--start` is the
//! resolution of the answer. Users already in keep streaming; a step's window holds only
//! its own delays.

use std::time::{Duration, Instant};

use clap::Args;
use serde::Serialize;

use crate::metrics::{Counts, Delay};
use crate::report::command_line;
use crate::scenarios::{self, first_send, Kind};
use crate::stats::{rate, Summary};
use crate::{procfs, Fleet, RunArgs};

#[derive(Args)]
pub struct CapacityArgs {
    /// The chat scenario's options; `--users` is the most users tried (also capped by the
    /// users of `--tokens` and the open-files limit), `--duration` each step's window.
    #[command(flatten)]
    run: RunArgs,
    /// Users of the first step.
    #[arg(long, default_value_t = 500)]
    start: usize,
    /// Each step has this many times the users of the one before (rounded up to 50).
    #[arg(long, default_value_t = 1.25)]
    growth: f64,
    /// Seconds a step's new users' first sends are spread over before its window opens.
    #[arg(long, default_value_t = 5.0)]
    settle: f64,
    /// A step holds while the beyond-batching p99 is at most this many milliseconds.
    #[arg(long, default_value_t = 5.0)]
    limit_ms: f64,
}

/// One step's figures, from its measured window.
#[derive(Debug, Serialize)]
pub struct Step {
    pub users: usize,
    /// Tabs open at the end of the window.
    pub held: u64,
    pub secs: f64,
    pub beyond_batch: Summary,
    pub pre_stream: Summary,
    pub sends_per_sec: f64,
    pub answers_per_sec: f64,
    pub frames_per_sec: f64,
    /// Sends that became late in the window.
    pub late_sends: u64,
    /// Deltas lost, duplicated, and answers mismatched, of answers completed in the window.
    pub lost: u64,
    pub duplicated: u64,
    pub mismatched: u64,
    /// Error frames, drops, failed connects and answers that ended other than `stop`.
    pub faults: u64,
    /// CPU of the server(s) and of the harness in the window, in % of one core.
    pub server_cpu_pct: Option<f64>,
    pub harness_cpu_pct: Option<f64>,
    /// Why the step did not hold (none: it held).
    pub failed: Option<String>,
}

impl Step {
    /// Why a step with these figures does not hold, if it does not.
    fn judge(&self, tabs: usize, limit_ms: f64) -> Option<String> {
        let mut why = Vec::new();
        if self.beyond_batch.count == 0 {
            why.push("no deltas in the window".to_owned());
        } else if self.beyond_batch.p99_ms > limit_ms {
            why.push(format!(
                "beyond-batching p99 {:.2} ms > {limit_ms} ms",
                self.beyond_batch.p99_ms
            ));
        }
        if self.late_sends > 0 {
            why.push(format!("{} sends late", self.late_sends));
        }
        if self.lost + self.duplicated + self.mismatched > 0 {
            why.push(format!(
                "{} lost, {} duplicated, {} mismatched",
                self.lost, self.duplicated, self.mismatched
            ));
        }
        if self.faults > 0 {
            why.push(format!("{} errors, drops or failed connects", self.faults));
        }
        if self.held < (self.users * tabs) as u64 {
            why.push(format!("{} of {} tabs open", self.held, self.users * tabs));
        }
        (!why.is_empty()).then(|| why.join("; "))
    }

    fn line(&self) -> String {
        let pct = |p: Option<f64>| p.map_or("-".into(), |p| format!("{p:.0}%"));
        let faults = format!("{}/{}/{}", self.lost, self.duplicated, self.mismatched);
        format!(
            "{:>6} {:>4.0} {:>10.2} {:>10.2} {:>14.2} {:>8.1} {:>9.1} {:>5} {:>13} {:>7} {:>8}  {}",
            self.users,
            self.secs,
            self.beyond_batch.p50_ms,
            self.beyond_batch.p99_ms,
            self.pre_stream.p99_ms,
            self.sends_per_sec,
            self.answers_per_sec,
            self.late_sends,
            faults,
            pct(self.server_cpu_pct),
            pct(self.harness_cpu_pct),
            self.failed.as_deref().unwrap_or("held"),
        )
    }
}

/// The column heads of [`Step::line`]; delays in ms, CPU in % of one core.
fn header() -> String {
    format!(
        "{:>6} {:>4} {:>10} {:>10} {:>14} {:>8} {:>9} {:>5} {:>13} {:>7} {:>8}  {}",
        "users",
        "s",
        "beyond p50",
        "beyond p99",
        "pre-stream p99",
        "sends/s",
        "answers/s",
        "late",
        "lost/dup/mism",
        "server",
        "harness",
        "step"
    )
}

#[derive(Debug, Serialize)]
pub struct CapacityReport {
    /// The command line that produced this report.
    pub command: String,
    pub label: String,
    pub urls: Vec<String>,
    pub tabs: usize,
    pub interval_secs: f64,
    pub settle_secs: f64,
    pub window_secs: u64,
    pub limit_ms: f64,
    pub steps: Vec<Step>,
    /// The most users a step held with (none: not even the first step held).
    pub capacity: Option<usize>,
    /// The users of the first step that did not hold.
    pub failed_at: Option<usize>,
    /// Every step held, up to the most users there were to try.
    pub capped: bool,
    pub total_secs: f64,
}

impl CapacityReport {
    pub fn text(&self) -> String {
        let mut out = format!(
            "== Capacity {} — {}, {} tab(s) per user, a send every {} s; steps of {} s after {} s settling\n",
            self.label,
            self.urls.join(" "),
            self.tabs,
            self.interval_secs,
            self.window_secs,
            self.settle_secs
        );
        out.push_str(&format!(
            "  a step holds with beyond-batching p99 ≤ {} ms, no late send, nothing lost or failed\n\n",
            self.limit_ms
        ));
        out.push_str(&header());
        out.push('\n');
        for step in &self.steps {
            out.push_str(&step.line());
            out.push('\n');
        }
        let verdict = match (self.capacity, self.failed_at) {
            (Some(n), Some(bad)) => format!("{n} users held; {bad} did not"),
            (Some(n), None) if self.capped => {
                format!("at least {n} users: every step held, no more users to try")
            }
            (Some(n), None) => format!("{n} users held"),
            (None, Some(bad)) => format!("fewer than {bad} users: the first step did not hold"),
            (None, None) => "no step ran".into(),
        };
        out.push_str(&format!(
            "\n  capacity                   {verdict} ({:.0} s in all)\n",
            self.total_secs
        ));
        out
    }
}

/// The users of the step after one with `users`: `growth` times as many, rounded up to a
/// multiple of 50 (readable figures), and at least one more.
fn next_step(users: usize, growth: f64) -> usize {
    let grown = ((users as f64 * growth).ceil() as usize).max(users + 1);
    grown.div_ceil(50) * 50
}

pub fn run(args: CapacityArgs) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(args.run.threads.max(1))
        .enable_all()
        .build()?;
    let report = runtime.block_on(search(&args))?;
    println!("{}", report.text());
    if let Some(path) = &args.run.json {
        std::fs::write(path, serde_json::to_string_pretty(&report)?)?;
    }
    Ok(())
}

async fn search(args: &CapacityArgs) -> anyhow::Result<CapacityReport> {
    let run = &args.run;
    anyhow::ensure!(run.procs <= 1, "a capacity search runs in one process");
    let started = Instant::now();
    let tabs = run.tabs.max(1);
    let all = scenarios::read_users(&run.tokens)?;
    // Every tab is a socket of this process; leave a few files for everything else.
    let files = procfs::open_files_limit().unwrap_or(1024) as usize;
    let most = run.users.min(all.len()).min(files.saturating_sub(100) / tabs);
    anyhow::ensure!(most > 0, "no users to run (--users, --tokens, ulimit -n)");
    let settle = Duration::from_secs_f64(args.settle.max(0.0));
    let mut fleet = Fleet::new(Kind::Chat, run, most * tabs);
    // New users start as soon as their tabs are open.
    let _ = fleet.go.send(true);
    let mut waiting = all.into_iter().enumerate().take(most);
    let mut steps: Vec<Step> = Vec::new();
    let mut users = args.start.clamp(1, most);
    let mut running = 0;
    loop {
        let newcomers: Vec<_> = waiting.by_ref().take(users - running).collect();
        let count = newcomers.len();
        fleet.add(
            newcomers
                .into_iter()
                .enumerate()
                .map(|(i, (n, user))| (n, user, first_send(i, count, settle)))
                .collect(),
        );
        running = users;
        eprintln!(
            "[capacity {:>4}s] {users} users: connecting and settling",
            started.elapsed().as_secs()
        );
        let deadline = Instant::now() + settle + Duration::from_secs(60);
        while !(fleet.ramped() && fleet.metrics.c.read().started >= users as u64) && Instant::now() < deadline
        {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let step = measure(&fleet, users, run, tabs, args.limit_ms).await;
        if steps.is_empty() {
            eprintln!("{}", header());
        }
        eprintln!("{}", step.line());
        let held = step.failed.is_none();
        steps.push(step);
        if !held || users >= most {
            break;
        }
        users = next_step(users, args.growth).min(most);
    }
    // The answers in flight are cut off: the next run needs a fresh server (the bench
    // stops this one), and a cut-off answer counts in no step.
    fleet.finish(Duration::from_secs(1)).await;
    let capacity = steps
        .iter()
        .filter(|s| s.failed.is_none())
        .map(|s| s.users)
        .next_back();
    let failed_at = steps.iter().find(|s| s.failed.is_some()).map(|s| s.users);
    Ok(CapacityReport {
        command: command_line(),
        label: run.label.clone(),
        urls: run.urls.clone(),
        tabs,
        interval_secs: run.interval,
        settle_secs: args.settle,
        window_secs: run.duration,
        limit_ms: args.limit_ms,
        capped: failed_at.is_none() && capacity == Some(most),
        steps,
        capacity,
        failed_at,
        total_secs: started.elapsed().as_secs_f64(),
    })
}

/// Measures a step: one window of `--duration` seconds, or two when the first misses the
/// delay limit alone. A p99 of a few milliseconds is near this machine's scheduling noise
/// (the relay shows 3–5 ms with a tenth of a core busy), so one unlucky window would end
/// the search early; the step is then judged on both windows' delays together, not on
/// the better one.
async fn measure(fleet: &Fleet, users: usize, run: &RunArgs, tabs: usize, limit_ms: f64) -> Step {
    let window = Duration::from_secs(run.duration.max(1));
    let pids = &run.server_pids;
    let me = [std::process::id()];
    let (server_go, me_go) = (procfs::cpu_secs(pids), procfs::cpu_secs(&me));
    let at_go = fleet.metrics.c.read();
    fleet.metrics.clear_delays();
    fleet.window(true);
    let opened = Instant::now();
    let read = || {
        let secs = opened.elapsed().as_secs_f64();
        let at_end = fleet.metrics.c.read();
        let tally = fleet.metrics.tally();
        let cpu_pct = |pids: &[u32], go: Option<f64>| {
            if pids.is_empty() {
                return None;
            }
            Some(100.0 * (procfs::cpu_secs(pids)? - go?) / secs)
        };
        let grew = |f: fn(&Counts) -> u64| f(&at_end).saturating_sub(f(&at_go));
        let mut step = Step {
            users,
            held: at_end.held,
            secs,
            beyond_batch: tally.hist(Delay::BeyondBatch).summary(),
            pre_stream: tally.hist(Delay::PreStream).summary(),
            sends_per_sec: rate(grew(|c| c.sends), secs),
            answers_per_sec: rate(grew(|c| c.answers), secs),
            frames_per_sec: rate(grew(|c| c.frames), secs),
            late_sends: grew(|c| c.late_sends),
            lost: grew(|c| c.lost),
            duplicated: grew(|c| c.duplicated),
            mismatched: grew(|c| c.mismatched),
            faults: grew(|c| c.error_frames + c.dropped + c.connect_errors + c.bad_answers),
            server_cpu_pct: cpu_pct(pids, server_go),
            harness_cpu_pct: cpu_pct(&me, me_go),
            failed: None,
        };
        step.failed = step.judge(tabs, limit_ms);
        step
    };
    tokio::time::sleep(window).await;
    let mut step = read();
    let delays_alone = step.failed.is_some() && step.judge(tabs, f64::INFINITY).is_none();
    if delays_alone {
        tokio::time::sleep(window).await;
        step = read();
    }
    fleet.window(false);
    step
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(users: usize, p99: f64) -> Step {
        Step {
            users,
            held: users as u64,
            secs: 10.0,
            beyond_batch: Summary {
                count: 100,
                p99_ms: p99,
                ..Summary::default()
            },
            pre_stream: Summary::default(),
            sends_per_sec: 50.0,
            answers_per_sec: 50.0,
            frames_per_sec: 1000.0,
            late_sends: 0,
            lost: 0,
            duplicated: 0,
            mismatched: 0,
            faults: 0,
            server_cpu_pct: Some(50.0),
            harness_cpu_pct: None,
            failed: None,
        }
    }

    #[test]
    fn steps_grow_geometrically_in_fifties() {
        assert_eq!(next_step(500, 1.25), 650);
        assert_eq!(next_step(650, 1.25), 850);
        assert_eq!(next_step(1000, 2.0), 2000);
        // Small steps still move up.
        assert_eq!(next_step(10, 1.01), 50);
        assert_eq!(next_step(50, 1.0), 100);
    }

    #[test]
    fn a_step_holds_only_under_the_limit_with_nothing_late_or_lost() {
        assert_eq!(step(1000, 4.9).judge(1, 5.0), None);
        assert!(step(1000, 5.1).judge(1, 5.0).unwrap().contains("p99 5.10 ms"));
        let mut late = step(1000, 1.0);
        late.late_sends = 3;
        assert_eq!(late.judge(1, 5.0).as_deref(), Some("3 sends late"));
        let mut lost = step(1000, 1.0);
        lost.lost = 1;
        assert!(lost.judge(1, 5.0).unwrap().starts_with("1 lost"));
        // Tabs that did not stay open, or no deltas at all, do not hold either.
        assert!(step(1000, 1.0)
            .judge(2, 5.0)
            .unwrap()
            .contains("1000 of 2000 tabs"));
        let mut quiet = step(10, 0.0);
        quiet.beyond_batch = Summary::default();
        assert!(quiet.judge(1, 5.0).is_some());
    }
}
