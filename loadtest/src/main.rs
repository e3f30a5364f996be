//! `loadtest`: virtual users over real websockets against a running `chat-server`, and
//! the bare relay baseline to compare it with. See docs/performance.md.

mod admin_stats;
mod baseline;
mod capacity;
mod client;
mod direct;
mod faults;
mod metrics;
mod model_stub;
mod procfs;
mod quota;
mod render;
mod report;
mod scenarios;
mod search;
mod stats;

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::{Args, Parser, Subcommand};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{watch, Semaphore};

use crate::client::{loopback_sources, sources_needed, Target};
use crate::metrics::{Counts, Metrics, Tally};
use crate::report::{Phase, Report, ServerFigures, Shape};
use crate::scenarios::{first_send, Kind, Load};

#[derive(Parser)]
#[command(name = "loadtest", about = "Load the chat server over real websockets")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Hold tabs open: how many sessions, at what memory each.
    Idle(RunArgs),
    /// Connect, wait for `ready`, disconnect, again.
    Churn(RunArgs),
    /// Each user sends a message every `--interval`; answers stream to all its tabs.
    Chat(RunArgs),
    /// A stepped ramp of chat users: the most streams one server holds in budget.
    Capacity(capacity::CapacityArgs),
    /// Serve the bare actix-ws relay baseline.
    Baseline(BaselineArgs),
    /// Serve an OpenAI-compatible model stub (SSE) at a model's pace.
    ModelStub(model_stub::StubArgs),
    /// Call the model stub directly: the reference for runs through the server.
    Direct(direct::DirectArgs),
    /// Quota checks per second through the server's quota path with Redis.
    Quota(QuotaArgs),
    /// Chat load over two instances while Redis, Postgres and an instance fail in turn:
    /// what became of every send, answer and quota unit (docs/operations.md).
    Faults(faults::FaultsArgs),
    /// Search times over one user's seeded history.
    Search(search::SearchArgs),
    /// The operator's stats call over a seeded history (loadtest/stats-bench.sh).
    AdminStats(admin_stats::AdminStatsArgs),
    /// Write the reports of a bench run into docs/performance.md.
    Render {
        /// The folder of `NAME.json` and `NAME.txt` reports.
        #[arg(long)]
        results: PathBuf,
        #[arg(long, default_value = "docs/performance.md")]
        doc: PathBuf,
        /// The date the run is shown with.
        #[arg(long)]
        date: String,
    },
}

#[derive(Args, Clone)]
struct RunArgs {
    /// Server websocket URL; repeat for several instances (tabs go round-robin).
    #[arg(long = "url", default_value = "ws://127.0.0.1:8080/api/ws")]
    urls: Vec<String>,
    /// `email<TAB>token` lines from `chat-server users seed --tokens`.
    #[arg(long)]
    tokens: PathBuf,
    /// Virtual users (at most the lines of --tokens).
    #[arg(long, default_value_t = 100)]
    users: usize,
    /// Tabs (websockets) per user.
    #[arg(long, default_value_t = 1)]
    tabs: usize,
    /// Seconds of the measured phase, after every tab has connected.
    #[arg(long, default_value_t = 30)]
    duration: u64,
    /// Connects in flight at once while ramping up.
    #[arg(long, default_value_t = 256)]
    ramp: usize,
    /// Source addresses 127.0.0.1..N to connect from (0: as many as the sessions need).
    #[arg(long, default_value_t = 0)]
    sources: usize,
    /// chat: seconds between one user's messages; 0: back to back (the next as soon as the
    /// answer completed).
    #[arg(long, default_value_t = 10.0)]
    interval: f64,
    /// chat: seconds the users' first messages are spread over (default: --interval).
    #[arg(long)]
    spread: Option<f64>,
    /// chat: every message starts a new conversation.
    #[arg(long)]
    new_conversations: bool,
    /// chat: the server's batching window (`chat.batch_ms`).
    #[arg(long, default_value_t = 30)]
    batch_ms: u64,
    /// churn: milliseconds a session stays open.
    #[arg(long, default_value_t = 500)]
    hold_ms: u64,
    /// Logins in flight at once during the run (with --password).
    #[arg(long, default_value_t = 0)]
    login_flood: usize,
    #[arg(long, default_value = "")]
    password: String,
    /// The server's process id, for RSS and CPU time; repeat for several instances.
    #[arg(long = "server-pid")]
    server_pids: Vec<u32>,
    /// The model stub's process id, for its CPU time (runs through the stub).
    #[arg(long)]
    stub_pid: Option<u32>,
    /// Worker processes (each holds its share of users; one process has ~20k sockets).
    #[arg(long, default_value_t = 1)]
    procs: usize,
    /// Tokio worker threads of each process.
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// Write the report as JSON here too.
    #[arg(long)]
    json: Option<PathBuf>,
    /// A name for the run in the report.
    #[arg(long, default_value = "")]
    label: String,
    /// Internal: this process is worker `part` of `parts`, driven over stdin/stdout.
    #[arg(long, hide = true)]
    part: Option<usize>,
    #[arg(long, hide = true, default_value_t = 1)]
    parts: usize,
}

#[derive(Args)]
struct BaselineArgs {
    #[arg(long, default_value = "127.0.0.1:9090")]
    bind: String,
    #[arg(long, default_value_t = 50)]
    tokens_per_sec: u32,
    #[arg(long, default_value_t = 120)]
    reply_tokens: usize,
    #[arg(long, default_value_t = 30)]
    batch_ms: u64,
}

#[derive(Args)]
struct QuotaArgs {
    #[arg(long)]
    tokens: PathBuf,
    #[arg(long, default_value_t = 64)]
    concurrency: usize,
    #[arg(long, default_value_t = 10)]
    duration: u64,
    #[arg(long)]
    json: Option<PathBuf>,
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Command::Idle(args) => run(Kind::Idle, args),
        Command::Churn(args) => run(Kind::Churn, args),
        Command::Chat(args) => run(Kind::Chat, args),
        Command::Capacity(args) => capacity::run(args),
        Command::Baseline(args) => {
            let pace = baseline::Pace {
                tokens_per_sec: args.tokens_per_sec,
                reply_tokens: args.reply_tokens,
                batch: Duration::from_millis(args.batch_ms),
            };
            actix_web::rt::System::new().block_on(baseline::serve(&args.bind, pace))
        }
        Command::ModelStub(args) => model_stub::serve(args),
        Command::Direct(args) => direct::run(args),
        Command::Quota(args) => actix_web::rt::System::new().block_on(run_quota(args)),
        Command::Faults(args) => faults::run(args),
        Command::Search(args) => search::run(args),
        Command::AdminStats(args) => admin_stats::run(args),
        Command::Render { results, doc, date } => render::write(&results, &doc, &date),
    }
}

fn run(kind: Kind, args: RunArgs) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(args.threads.max(1))
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        if let Some(part) = args.part {
            return worker(kind, args.clone(), part).await;
        }
        let report = if args.procs > 1 {
            coordinate(kind, &args).await?
        } else {
            local(kind, &args).await?
        };
        publish(&report, args.json.as_deref())
    })
}

/// Prints the report, and writes it as JSON to `json` if given.
fn publish(report: &Report, json: Option<&std::path::Path>) -> anyhow::Result<()> {
    println!("{}", report.text());
    if let Some(path) = json {
        std::fs::write(path, serde_json::to_string_pretty(report)?)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

/// The users of worker `part` of `parts`: (global index, user).
fn my_users(args: &RunArgs, part: usize, parts: usize) -> anyhow::Result<Vec<(usize, scenarios::User)>> {
    let all = scenarios::read_users(&args.tokens)?;
    anyhow::ensure!(
        all.len() >= args.users,
        "--users {} but {} has {} users (seed more)",
        args.users,
        args.tokens.display(),
        all.len()
    );
    Ok(all
        .into_iter()
        .take(args.users)
        .enumerate()
        .filter(|(i, _)| i % parts == part)
        .collect())
}

/// One process's share of the load, with the switches that pace it.
struct Fleet {
    load: Load,
    metrics: Arc<Metrics>,
    expected: u64,
    go: watch::Sender<bool>,
    stop: watch::Sender<bool>,
    tasks: tokio::task::JoinSet<()>,
}

impl Fleet {
    fn launch(kind: Kind, args: &RunArgs, part: usize, parts: usize) -> anyhow::Result<Fleet> {
        let users = my_users(args, part, parts)?;
        let mut fleet = Fleet::new(kind, args, args.users * args.tabs);
        if args.login_flood > 0 && part == 0 {
            let all = Arc::new(users.iter().map(|(_, u)| u.clone()).collect::<Vec<_>>());
            let base = args.urls[0].replacen("ws", "http", 1).replace("/api/ws", "");
            fleet.tasks.spawn(scenarios::login_flood(
                base,
                all,
                args.password.clone(),
                args.login_flood,
                fleet.metrics.clone(),
                fleet.load.go.clone(),
                fleet.load.stop.clone(),
            ));
        }
        let spread = Duration::from_secs_f64(args.spread.unwrap_or(args.interval).max(0.0));
        let firsts = users
            .into_iter()
            .map(|(n, user)| (n, user, first_send(n, args.users, spread)))
            .collect();
        fleet.add(firsts);
        Ok(fleet)
    }

    /// A fleet with no users yet, for at most `sessions` tabs.
    fn new(kind: Kind, args: &RunArgs, sessions: usize) -> Fleet {
        let sources = match args.sources {
            0 => sources_needed(sessions),
            n => n,
        };
        let metrics = Arc::new(Metrics::default());
        let (go, go_rx) = watch::channel(false);
        let (stop, stop_rx) = watch::channel(false);
        let load = Load {
            kind,
            target: Target {
                urls: args.urls.clone(),
                sources: loopback_sources(sources),
            },
            tabs: args.tabs.max(1),
            ramp: Arc::new(Semaphore::new(args.ramp.max(1))),
            metrics: metrics.clone(),
            go: go_rx,
            stop: stop_rx,
            interval: Duration::from_secs_f64(args.interval.max(0.0)),
            new_conversations: args.new_conversations,
            batch: Duration::from_millis(args.batch_ms),
            hold: Duration::from_millis(args.hold_ms),
        };
        Fleet {
            load,
            metrics,
            expected: 0,
            go,
            stop,
            tasks: tokio::task::JoinSet::new(),
        }
    }

    /// Starts users: (global index, user, when it sends first after `go`).
    fn add(&mut self, users: Vec<(usize, scenarios::User, Duration)>) {
        self.expected += (users.len() * self.load.tabs) as u64;
        for (n, user, first) in users {
            self.tasks
                .spawn(scenarios::run_user(self.load.clone(), n, user, first));
        }
    }

    fn ramped(&self) -> bool {
        let c = self.metrics.c.read();
        c.connects + c.connect_errors >= self.expected
    }

    /// The measured window opens (histograms record) or closes.
    fn window(&self, open: bool) {
        self.metrics.set_recording(open);
    }

    /// Ends the run: stop, let answers in flight finish, close every tab.
    async fn finish(mut self, drain: Duration) -> Tally {
        self.window(false);
        let _ = self.stop.send(true);
        let _ = tokio::time::timeout(drain, async { while self.tasks.join_next().await.is_some() {} }).await;
        self.tasks.abort_all();
        self.metrics.tally()
    }
}

fn drain_time(args: &RunArgs) -> Duration {
    Duration::from_secs_f64(args.interval.max(1.0) + 30.0)
}

/// chat: whether every user has started (sent its first message, or has no tab). The
/// measured window opens then, so the ramp of first sends, spread over `--spread`
/// seconds, is not in it: in the window every user is streaming or about to.
fn warmed_up(kind: Kind, c: &Counts, args: &RunArgs) -> bool {
    kind != Kind::Chat || c.started >= args.users as u64
}

/// The longest the warm-up may take before the window opens anyway.
fn warmup_limit(args: &RunArgs) -> Duration {
    Duration::from_secs_f64(args.spread.unwrap_or(args.interval).max(0.0) + 60.0)
}

impl RunArgs {
    fn shape(&self) -> Shape {
        Shape {
            label: self.label.clone(),
            users: self.users,
            tabs: self.tabs,
            servers: self.urls.len(),
            procs: self.procs,
        }
    }
}

/// Everything in this process.
async fn local(kind: Kind, args: &RunArgs) -> anyhow::Result<Report> {
    let pids = &args.server_pids;
    let rss_before = procfs::rss_bytes(pids);
    let started = Instant::now();
    let fleet = Fleet::launch(kind, args, 0, 1)?;
    let mut progress = tokio::time::interval(Duration::from_secs(1));
    let ramp_deadline = Instant::now() + Duration::from_secs(600);
    while !fleet.ramped() && Instant::now() < ramp_deadline {
        progress.tick().await;
        eprintln!(
            "{}",
            report::progress_line("ramp", started, &fleet.metrics.c.read(), pids)
        );
    }
    let ramp_secs = started.elapsed().as_secs_f64();
    let _ = fleet.go.send(true);
    let warming = Instant::now();
    while !warmed_up(kind, &fleet.metrics.c.read(), args) && warming.elapsed() < warmup_limit(args) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let warmup_secs = warming.elapsed().as_secs_f64();
    let stub = args.stub_pid.map(|p| vec![p]).unwrap_or_default();
    let (cpu_go, stub_cpu_go) = (procfs::cpu_secs_each(pids), procfs::cpu_secs(&stub));
    let at_go = fleet.metrics.c.read();
    fleet.window(true);
    let measured = Instant::now();
    let end = measured + Duration::from_secs(args.duration);
    let mut rss_peak = procfs::rss_bytes(pids);
    let mut last = at_go.clone();
    while Instant::now() < end {
        // Wake at the end exactly: the window is as long as asked.
        tokio::time::sleep(Duration::from_secs(1).min(end.saturating_duration_since(Instant::now()))).await;
        let now = fleet.metrics.c.read();
        eprintln!("{}", report::progress_rate_line(measured, &last, &now, pids));
        rss_peak = rss_peak.max(procfs::rss_bytes(pids));
        last = now;
    }
    fleet.window(false);
    let at_end = fleet.metrics.c.read();
    let secs = measured.elapsed().as_secs_f64();
    let server = ServerFigures::measure(pids, rss_before, rss_peak, cpu_go, at_end.held);
    let stub_cpu = cpu_spent(&stub, stub_cpu_go);
    let tally = fleet.finish(drain_time(args)).await;
    Ok(Report::new(
        kind,
        args.shape(),
        Phase {
            ramp_secs,
            warmup_secs,
            secs,
            at_go,
            at_end,
        },
        tally,
        server,
        stub_cpu,
    ))
}

/// CPU seconds `pids` spent since they had spent `before`.
fn cpu_spent(pids: &[u32], before: Option<f64>) -> Option<f64> {
    if pids.is_empty() {
        return None;
    }
    Some(procfs::cpu_secs(pids)? - before?)
}

/// A worker process: launches its share, then follows `go`, `window` (the measured
/// window opens) and `stop` (it closes; the run ends) on stdin; prints progress (`P`)
/// and its final tally (`R`) on stdout.
async fn worker(kind: Kind, args: RunArgs, part: usize) -> anyhow::Result<()> {
    let fleet = Fleet::launch(kind, &args, part, args.parts)?;
    let mut stdin = BufReader::new(tokio::io::stdin()).lines();
    let mut progress = tokio::time::interval(Duration::from_secs(1));
    loop {
        tokio::select! {
            _ = progress.tick() => {
                println!("P {}", serde_json::to_string(&fleet.metrics.c.read())?);
            }
            line = stdin.next_line() => match line?.as_deref() {
                Some("go") => { let _ = fleet.go.send(true); }
                Some("window") => fleet.window(true),
                Some("stop") | None => break,
                Some(_) => {}
            },
        }
    }
    let tally = fleet.finish(drain_time(&args)).await;
    println!("R {}", serde_json::to_string(&tally)?);
    Ok(())
}

/// The parent of `--procs` workers: splits the users, paces the workers together, and
/// merges their figures.
async fn coordinate(kind: Kind, args: &RunArgs) -> anyhow::Result<Report> {
    let pids = &args.server_pids;
    let rss_before = procfs::rss_bytes(pids);
    let started = Instant::now();
    let exe = std::env::current_exe()?;
    let (lines_tx, mut lines) = tokio::sync::mpsc::unbounded_channel::<(usize, String)>();
    let mut stdins = Vec::new();
    let mut children = Vec::new();
    for part in 0..args.procs {
        let mut child = tokio::process::Command::new(&exe)
            .args(std::env::args().skip(1))
            .args(["--part", &part.to_string(), "--parts", &args.procs.to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .context("starting a worker")?;
        stdins.push(child.stdin.take().context("worker stdin")?);
        let mut out = BufReader::new(child.stdout.take().context("worker stdout")?).lines();
        let tx = lines_tx.clone();
        tokio::spawn(async move {
            while let Ok(Some(line)) = out.next_line().await {
                let _ = tx.send((part, line));
            }
        });
        children.push(child);
    }
    drop(lines_tx);
    let mut latest = vec![Counts::default(); args.procs];
    let mut finals: Vec<Option<Tally>> = vec![None; args.procs];
    let sum = |latest: &[Counts]| {
        let mut total = Counts::default();
        latest.iter().for_each(|c| total.add(c));
        total
    };
    let mut handle = |part: usize, line: String, latest: &mut Vec<Counts>| -> anyhow::Result<()> {
        if let Some(json) = line.strip_prefix("P ") {
            latest[part] = serde_json::from_str(json)?;
        } else if let Some(json) = line.strip_prefix("R ") {
            finals[part] = Some(serde_json::from_str(json)?);
        }
        Ok(())
    };
    // Ramp: until every worker has connected its share.
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    let ramp_deadline = Instant::now() + Duration::from_secs(900);
    loop {
        tokio::select! {
            Some((part, line)) = lines.recv() => handle(part, line, &mut latest)?,
            _ = tick.tick() => {
                eprintln!("{}", report::progress_line("ramp", started, &sum(&latest), pids));
                if handle_ramped(&latest, args) || Instant::now() > ramp_deadline { break }
            }
        }
    }
    let ramp_secs = started.elapsed().as_secs_f64();
    for stdin in &mut stdins {
        stdin.write_all(b"go\n").await?;
    }
    // Warm-up: until every worker's users have started (their progress comes each second).
    let warming = Instant::now();
    let warmup_deadline = tokio::time::Instant::now() + warmup_limit(args);
    while !warmed_up(kind, &sum(&latest), args) {
        tokio::select! {
            Some((part, line)) = lines.recv() => handle(part, line, &mut latest)?,
            _ = tokio::time::sleep_until(warmup_deadline) => break,
        }
    }
    let warmup_secs = warming.elapsed().as_secs_f64();
    let stub = args.stub_pid.map(|p| vec![p]).unwrap_or_default();
    let (cpu_go, stub_cpu_go) = (procfs::cpu_secs_each(pids), procfs::cpu_secs(&stub));
    // The workers' counts are up to a second old: the window is this process's view.
    let at_go = sum(&latest);
    for stdin in &mut stdins {
        stdin.write_all(b"window\n").await?;
    }
    let measured = Instant::now();
    let end = tokio::time::Instant::now() + Duration::from_secs(args.duration);
    let mut rss_peak = procfs::rss_bytes(pids);
    let mut last = at_go.clone();
    loop {
        tokio::select! {
            Some((part, line)) = lines.recv() => handle(part, line, &mut latest)?,
            _ = tick.tick() => {
                let now = sum(&latest);
                eprintln!("{}", report::progress_rate_line(measured, &last, &now, pids));
                rss_peak = rss_peak.max(procfs::rss_bytes(pids));
                last = now;
            }
            _ = tokio::time::sleep_until(end) => break,
        }
    }
    let at_end = sum(&latest);
    let secs = measured.elapsed().as_secs_f64();
    let server = ServerFigures::measure(pids, rss_before, rss_peak, cpu_go, at_end.held);
    let stub_cpu = cpu_spent(&stub, stub_cpu_go);
    for stdin in &mut stdins {
        stdin.write_all(b"stop\n").await?;
    }
    while let Some((part, line)) = lines.recv().await {
        handle(part, line, &mut latest)?;
    }
    for mut child in children {
        child.wait().await?;
    }
    let mut tally = Tally::default();
    for (part, t) in finals.iter().enumerate() {
        tally.merge(
            t.as_ref()
                .with_context(|| format!("worker {part} gave no figures"))?,
        );
    }
    Ok(Report::new(
        kind,
        args.shape(),
        Phase {
            ramp_secs,
            warmup_secs,
            secs,
            at_go,
            at_end,
        },
        tally,
        server,
        stub_cpu,
    ))
}

fn handle_ramped(latest: &[Counts], args: &RunArgs) -> bool {
    let done: u64 = latest.iter().map(|c| c.connects + c.connect_errors).sum();
    done >= (args.users * args.tabs) as u64
}

async fn run_quota(args: QuotaArgs) -> anyhow::Result<()> {
    let users = scenarios::read_users(&args.tokens)?;
    let ids = users
        .iter()
        .map(|u| quota::token_subject(&u.token))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let metrics = Arc::new(Metrics::default());
    let run = quota::run(
        ids,
        args.concurrency,
        Duration::from_secs(args.duration),
        metrics.clone(),
    )
    .await?;
    let ceiling = quota::redis_benchmark(args.concurrency, args.duration).await?;
    let report = report::QuotaReport::new(&run, args.concurrency, &metrics.tally(), ceiling);
    println!("{}", report.text());
    if let Some(path) = &args.json {
        std::fs::write(path, serde_json::to_string_pretty(&report)?)?;
    }
    Ok(())
}
