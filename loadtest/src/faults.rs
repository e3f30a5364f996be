//! `loadtest faults`: chat load over two instances while Redis, Postgres and an instance
//! fail one at a time, and what became of every send and answer (issue "Reliability
//! under faults"; docs/operations.md, "Faults: what the harness measures").
//!
//! The run owns everything it hurts: a private `redis-server` without persistence, the
//! model stub, a fresh database, and two `chat-server` instances (A and B). Each user has
//! a tab on each instance and sends every few seconds. The run is a series of phases:
//! a baseline without a fault, then for each fault a short lead-in of load, the fault,
//! a recovery window, and a drain without sends, after which every user's quota counter
//! is read. At the end every answer is read back over REST and compared with what the
//! tabs showed.

mod infra;
mod users;
mod verdict;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::{Args, ValueEnum};
use futures_util::StreamExt;
use serde::Serialize;
use serde_json::Value;
use tokio::sync::watch;

use self::infra::{Layout, Redis, Server};
use self::users::{Book, Mode, User};
use self::verdict::{Phase, ReadBack, Row, Stored};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Fault {
    /// SIGKILL the redis-server, 10 s down, start it again (empty).
    RedisKill,
    /// `CLIENT PAUSE 5000 ALL`.
    RedisPause,
    /// Restart the Postgres cluster (`--pg-restart`).
    PostgresRestart,
    /// SIGKILL instance B while answers stream; start it again 5 s later.
    InstanceKill,
    /// SIGTERM instance B; start it again once it exited.
    InstanceTerm,
}

impl Fault {
    fn name(self) -> &'static str {
        match self {
            Fault::RedisKill => "redis-kill",
            Fault::RedisPause => "redis-pause",
            Fault::PostgresRestart => "postgres-restart",
            Fault::InstanceKill => "instance-kill",
            Fault::InstanceTerm => "instance-term",
        }
    }
}

#[derive(Args)]
pub struct FaultsArgs {
    /// The chat-server binary (default: $CARGO_TARGET_DIR/debug/chat-server, or
    /// target/debug/chat-server).
    #[arg(long)]
    server: Option<PathBuf>,
    /// A Postgres database the run drops and creates (its name must contain "faults").
    #[arg(long, default_value = "postgres://postgres@127.0.0.1:5432/chat_faults")]
    database_url: String,
    /// The shell command that restarts the cluster of --database-url (postgres-restart).
    /// A command that fails skips the fault.
    #[arg(long, default_value = "pg_ctlcluster 15 main restart")]
    pg_restart: String,
    /// The faults, in order.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "redis-kill,redis-pause,postgres-restart,instance-kill,instance-term"
    )]
    faults: Vec<Fault>,
    /// Users; each has one tab on each instance.
    #[arg(long, default_value_t = 60)]
    users: usize,
    /// Seconds of load without a fault before the first one (the baseline row).
    #[arg(long, default_value_t = 15)]
    warmup: u64,
    /// Seconds of load after each fault's end.
    #[arg(long, default_value_t = 20)]
    recovery: u64,
    /// Seconds of load before each fault, so answers are streaming when it hits.
    #[arg(long, default_value_t = 3)]
    lead_in: u64,
    /// When an instance has not recovered by the end of the recovery window, the load
    /// goes on up to this many seconds more (in the same phase) before the next fault,
    /// so that one fault's effects are not counted against the next.
    #[arg(long, default_value_t = 120)]
    settle: u64,
    /// A user's sends are this many seconds apart, at least and at most (uniform).
    #[arg(long, default_value_t = 3.0)]
    min_interval: f64,
    #[arg(long, default_value_t = 5.0)]
    max_interval: f64,
    /// Ports: instance A on this one, B on the next, then the model stub, then Redis.
    #[arg(long, default_value_t = 18400)]
    port_base: u16,
    #[arg(long, default_value = "redis-server")]
    redis_server: String,
    /// The model stub's answers: tokens, and tokens a second (40 at 20/s: 2 s answers).
    #[arg(long, default_value_t = 40)]
    stub_tokens: usize,
    #[arg(long, default_value_t = 20)]
    stub_rate: u32,
    /// The instances' SHUTDOWN_GRACE_SECS. Shorter than an answer (2 s), so that
    /// instance-term stops answers mid-stream and the interrupted path (text kept, unit
    /// given back, claim released) is measured; with 5 every answer would finish.
    #[arg(long, default_value_t = 1)]
    shutdown_grace: u64,
    /// The markdown table goes here; the raw figures go beside it as JSON (same name,
    /// `.json`) unless --json names another file.
    #[arg(long, default_value = "faults.md")]
    out: PathBuf,
    #[arg(long)]
    json: Option<PathBuf>,
    /// The folder for logs and the instances' data (default: a new one under /tmp).
    #[arg(long)]
    work: Option<PathBuf>,
    /// Tokio worker threads of the harness.
    #[arg(long, default_value_t = 2)]
    threads: usize,
}

/// The goal of the issue: every recovery within this after the fault ends.
const RECOVERY_GOAL: Duration = Duration::from_secs(5);

/// How long the instance-kill fault keeps B down, and Redis is down in redis-kill.
const INSTANCE_DOWN: Duration = Duration::from_secs(5);
const REDIS_DOWN: Duration = Duration::from_secs(10);
const PAUSE_MS: u64 = 5000;

pub fn run(args: FaultsArgs) -> anyhow::Result<()> {
    anyhow::ensure!(args.users >= 1, "--users must be at least 1");
    anyhow::ensure!(
        args.min_interval > 0.0 && args.max_interval >= args.min_interval,
        "--min-interval and --max-interval: 0 < min ≤ max"
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(args.threads.max(1))
        .enable_all()
        .build()?;
    runtime.block_on(async {
        // Ctrl-C or SIGTERM (a `timeout`) drops the run, and with it every child (they
        // are kill_on_drop): no instance or Redis is left behind.
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
        tokio::select! {
            r = scenario(&args) => r,
            _ = tokio::signal::ctrl_c() => anyhow::bail!("interrupted: the run's processes were stopped"),
            _ = term.recv() => anyhow::bail!("terminated: the run's processes were stopped"),
        }
    })
}

fn server_bin(args: &FaultsArgs) -> PathBuf {
    args.server.clone().unwrap_or_else(|| {
        let target =
            std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| PathBuf::from("target"), PathBuf::from);
        target.join("debug").join("chat-server")
    })
}

fn work_dir(args: &FaultsArgs) -> anyhow::Result<PathBuf> {
    let dir = match &args.work {
        Some(d) => d.clone(),
        None => {
            let secs = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
            std::env::temp_dir().join(format!("chat-faults-{secs}-{}", std::process::id()))
        }
    };
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    Ok(dir)
}

/// Everything a running scenario holds.
struct Run {
    layout: Layout,
    secret: String,
    http: reqwest::Client,
    redis: Redis,
    servers: [Server; 2],
    tokens: Vec<String>,
    books: Vec<Arc<Mutex<Book>>>,
    mode: watch::Sender<Mode>,
    started: Instant,
}

fn lock(book: &Mutex<Book>) -> std::sync::MutexGuard<'_, Book> {
    book.lock().unwrap_or_else(|e| e.into_inner())
}

fn say(started: Instant, text: &str) {
    eprintln!("[{:6.1} s] {text}", started.elapsed().as_secs_f64());
}

async fn scenario(args: &FaultsArgs) -> anyhow::Result<()> {
    let work = work_dir(args)?;
    let p = args.port_base;
    let layout = Layout {
        work: work.clone(),
        server_ports: [p, p + 1],
        stub_port: p + 2,
        redis_port: p + 3,
        server_bin: server_bin(args),
        redis_bin: args.redis_server.clone(),
        database_url: args.database_url.clone(),
        stub_tokens: args.stub_tokens,
        stub_rate: args.stub_rate,
        shutdown_grace_secs: args.shutdown_grace,
    };
    anyhow::ensure!(
        layout.server_bin.is_file(),
        "no chat-server at {} (build it, or pass --server)",
        layout.server_bin.display()
    );
    layout.check_ports()?;
    let started = Instant::now();
    say(
        started,
        &format!("work folder {} (logs of every process)", work.display()),
    );
    let http = reqwest::Client::builder().pool_max_idle_per_host(16).build()?;
    infra::fresh_database(&layout.database_url).await?;
    let redis = Redis::start(&layout).await?;
    let _stub = infra::start_stub(&layout, &http).await?;
    let secret = infra::run_secret();
    let tokens_file = infra::seed_users(&layout, &secret, args.users).await?;
    let tokens: Vec<String> = crate::scenarios::read_users(&tokens_file)?
        .into_iter()
        .map(|u| u.token)
        .collect();
    anyhow::ensure!(
        tokens.len() >= args.users,
        "users seed wrote {} tokens",
        tokens.len()
    );
    // A first, alone: it applies the migrations to the fresh database.
    let (a, _) = Server::start(&layout, &secret, 0, &http).await?;
    let (b, _) = Server::start(&layout, &secret, 1, &http).await?;
    say(started, "Redis, model stub, instances A and B up");
    let (mode, mode_rx) = watch::channel(Mode::Quiet);
    let interval = (
        Duration::from_secs_f64(args.min_interval),
        Duration::from_secs_f64(args.max_interval),
    );
    let mut books = Vec::new();
    let mut tasks = Vec::new();
    for (n, token) in tokens.iter().take(args.users).enumerate() {
        let book = Arc::new(Mutex::new(Book::new(n)));
        books.push(book.clone());
        tasks.push(tokio::spawn(users::run_user(User {
            n,
            token: token.clone(),
            urls: [layout.ws(0), layout.ws(1)],
            book,
            mode: mode_rx.clone(),
            interval,
        })));
    }
    let mut run = Run {
        layout,
        secret,
        http,
        redis,
        servers: [a, b],
        tokens: tokens.into_iter().take(args.users).collect(),
        books,
        mode,
        started,
    };
    run.all_tabs_up(Duration::from_secs(60)).await?;
    say(started, &format!("{} users, 2 tabs each, connected", args.users));
    let phases = run.phases(args).await?;
    let _ = run.mode.send(Mode::Stop);
    for t in tasks {
        let _ = tokio::time::timeout(Duration::from_secs(10), t).await;
    }
    say(started, "reading every answer back");
    let books: Vec<Book> = run
        .books
        .iter()
        .map(|b| std::mem::replace(&mut *lock(b), Book::new(0)))
        .collect();
    let stored = read_back(&run.http, &run.layout.http(0), &run.tokens, &books).await;
    let rows = verdict::rows(&phases, &books, &stored);
    let report = Report::new(args, &run, rows);
    publish(args, &report)?;
    Ok(())
}

impl Run {
    fn say(&self, text: &str) {
        say(self.started, text);
    }

    async fn all_tabs_up(&self, limit: Duration) -> anyhow::Result<()> {
        let until = Instant::now() + limit;
        loop {
            let up = self.tabs_up();
            if up == self.books.len() * 2 {
                return Ok(());
            }
            anyhow::ensure!(
                Instant::now() < until,
                "only {up} of {} tabs connected after {} s (see the instances' logs in {})",
                self.books.len() * 2,
                limit.as_secs(),
                self.layout.work.display()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Stops the sends and waits until what was sent has settled: every send has its
    /// verdict (or is past the answer limit), and no answer still moves.
    async fn drain(&self) {
        let _ = self.mode.send(Mode::Quiet);
        let until = Instant::now() + Duration::from_secs(20);
        while Instant::now() < until {
            let now = Instant::now();
            if !self
                .books
                .iter()
                .any(|b| lock(b).busy(now, Duration::from_secs(3)))
            {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Each user's responses used today (`GET /api/usage/limits` on A), or none where it
    /// could not be read in three tries.
    async fn usage(&self) -> Vec<Option<i64>> {
        let base = self.layout.http(0);
        let calls = self.tokens.iter().map(|token| {
            let (http, base) = (&self.http, &base);
            async move {
                for attempt in 0..3 {
                    if attempt > 0 {
                        tokio::time::sleep(Duration::from_secs(1)).await;
                    }
                    let got = async {
                        let r = http
                            .get(format!("{base}/api/usage/limits"))
                            .bearer_auth(token)
                            .timeout(Duration::from_secs(5))
                            .send()
                            .await
                            .ok()?;
                        let v: Value = r.error_for_status().ok()?.json().await.ok()?;
                        v.pointer("/limitInfo/services/responses/daily/used")?.as_i64()
                    }
                    .await;
                    if got.is_some() {
                        return got;
                    }
                }
                None
            }
        });
        futures_util::stream::iter(calls).buffered(8).collect().await
    }

    /// Sends for `secs` (the caller turned the load on).
    async fn load_for(&self, secs: Duration) {
        let _ = self.mode.send(Mode::Load);
        tokio::time::sleep(secs).await;
    }

    async fn phases(&mut self, args: &FaultsArgs) -> anyhow::Result<Vec<Phase>> {
        let mut phases = Vec::new();
        let mut usage = self.usage().await;
        // Baseline: the same load with no fault, so each fault's figures have something
        // to be read against.
        let start = Instant::now();
        self.say("baseline: load without a fault");
        self.load_for(Duration::from_secs(args.warmup)).await;
        let recovery_end = Instant::now();
        self.drain().await;
        let after = self.usage().await;
        phases.push(Phase {
            fault: "none (baseline)".into(),
            start,
            fault_start: None,
            fault_end: None,
            recovery_end,
            skipped: None,
            notes: Vec::new(),
            usage_before: std::mem::replace(&mut usage, after.clone()),
            usage_after: after,
        });
        for &fault in &args.faults {
            let start = Instant::now();
            self.load_for(Duration::from_secs(args.lead_in)).await;
            let (fault_start, end, skipped, mut notes) = match self.inflict(fault, args).await? {
                Inflicted::Ended { start, at, notes } => (start, Some(at), None, notes),
                Inflicted::Skipped { start, why } => (start, None, Some(why), Vec::new()),
            };
            match (&skipped, end) {
                (Some(why), _) => self.say(&format!("{}: skipped: {why}", fault.name())),
                (None, Some(at)) => {
                    self.say(&format!(
                        "{}: ended after {:.1} s; recovery window {} s",
                        fault.name(),
                        at.duration_since(fault_start).as_secs_f64(),
                        args.recovery
                    ));
                    tokio::time::sleep_until((at + Duration::from_secs(args.recovery)).into()).await;
                    if let Some(note) = self.settle(at, Duration::from_secs(args.settle)).await {
                        self.say(&format!("{}: {note}", fault.name()));
                        notes.push(note);
                    }
                }
                (None, None) => {}
            }
            let recovery_end = Instant::now();
            self.drain().await;
            let after = self.usage().await;
            phases.push(Phase {
                fault: fault.name().into(),
                start,
                fault_start: Some(fault_start),
                fault_end: end,
                recovery_end,
                skipped,
                notes,
                usage_before: std::mem::replace(&mut usage, after.clone()),
                usage_after: after,
            });
        }
        Ok(phases)
    }

    async fn inflict(&mut self, fault: Fault, args: &FaultsArgs) -> anyhow::Result<Inflicted> {
        let mut notes = Vec::new();
        // Instance faults wait for an answer to stream on B first: the fault starts when
        // it hits.
        let streaming = match fault {
            Fault::InstanceKill | Fault::InstanceTerm => {
                self.until_streaming(1, Duration::from_secs(10)).await
            }
            _ => 0,
        };
        let start = Instant::now();
        self.say(&format!("{}: start", fault.name()));
        let at = match fault {
            Fault::RedisKill => {
                self.redis.kill().await?;
                tokio::time::sleep(REDIS_DOWN).await;
                self.redis = Redis::start(&self.layout).await?;
                notes.push(format!("Redis down {} s, back empty", REDIS_DOWN.as_secs()));
                Instant::now()
            }
            Fault::RedisPause => {
                let url = self.layout.redis_url();
                infra::redis_pause(&url, PAUSE_MS).await?;
                // The end is when Redis answers a new client again.
                infra::wait_until(Duration::from_secs(30), "Redis after the pause", || {
                    infra::redis_answers(&url)
                })
                .await?;
                Instant::now()
            }
            Fault::PostgresRestart => {
                if let Err(why) = infra::shell(&self.layout.work, "pg-restart", &args.pg_restart).await? {
                    let why = format!("`{}` failed ({why})", args.pg_restart);
                    return Ok(Inflicted::Skipped { start, why });
                }
                let url = self.layout.database_url.clone();
                infra::wait_until(Duration::from_secs(60), "Postgres after the restart", || {
                    infra::postgres_answers(&url)
                })
                .await?;
                Instant::now()
            }
            Fault::InstanceKill => {
                self.servers[1].kill().await?;
                tokio::time::sleep(INSTANCE_DOWN).await;
                let took = self.restart_b().await?;
                notes.push(format!(
                    "{streaming} answers streaming on B when killed; B down {} s, then {:.1} s to start",
                    INSTANCE_DOWN.as_secs(),
                    took.as_secs_f64()
                ));
                Instant::now()
            }
            Fault::InstanceTerm => {
                let limit = Duration::from_secs(args.shutdown_grace * 2 + 20);
                let (exit, killed) = self.servers[1].terminate(limit).await?;
                let took = self.restart_b().await?;
                notes.push(format!(
                    "{streaming} answers streaming on B at SIGTERM; B exited after {:.1} s{}; {:.1} s to start",
                    exit.as_secs_f64(),
                    if killed { " (did not exit: killed)" } else { "" },
                    took.as_secs_f64()
                ));
                Instant::now()
            }
        };
        Ok(Inflicted::Ended { start, at, notes })
    }

    /// Whether both instances have answered a send accepted after `end`.
    fn recovered(&self, end: Instant) -> bool {
        let now = Instant::now();
        (0..2).all(|i| {
            self.books
                .iter()
                .any(|b| verdict::first_answered(&lock(b), i, end, now).is_some())
        })
    }

    fn tabs_up(&self) -> usize {
        self.books
            .iter()
            .map(|b| lock(b).connected.iter().filter(|c| **c).count())
            .sum()
    }

    /// Keeps the load on until both instances have recovered from the fault that ended
    /// at `end` and every tab is connected again, at most `limit`; a note when it had to
    /// wait.
    async fn settle(&self, end: Instant, limit: Duration) -> Option<String> {
        let waiting = Instant::now();
        while !self.recovered(end) || self.tabs_up() < self.books.len() * 2 {
            if waiting.elapsed() >= limit {
                return Some(format!(
                    "not recovered {} s after the recovery window ({} of {} tabs up): the next fault hit a service still failing",
                    limit.as_secs(),
                    self.tabs_up(),
                    self.books.len() * 2
                ));
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        let waited = waiting.elapsed();
        (waited >= Duration::from_millis(500)).then(|| {
            format!(
                "recovery window extended by {:.0} s until both instances answered and every tab was back",
                waited.as_secs_f64()
            )
        })
    }

    /// Waits (with the load on) until an answer streams on `instance`, at most `limit`:
    /// an instance fault is meant to hit answers mid-stream.
    async fn until_streaming(&self, instance: usize, limit: Duration) -> usize {
        let until = Instant::now() + limit;
        loop {
            let n = self.streaming_on(instance);
            if n > 0 || Instant::now() >= until {
                return n;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    async fn restart_b(&mut self) -> anyhow::Result<Duration> {
        let (b, took) = Server::start(&self.layout, &self.secret, 1, &self.http).await?;
        self.servers[1] = b;
        Ok(took)
    }

    /// Answers sent through `instance` that are streaming now: started, not ended, a
    /// delta within the last half second.
    fn streaming_on(&self, instance: usize) -> usize {
        let now = Instant::now();
        self.books
            .iter()
            .map(|b| {
                let b = lock(b);
                b.sends
                    .iter()
                    .filter(|s| s.instance == instance && s.accepted_at.is_some())
                    .filter_map(|s| b.answers.get(s.answer.as_ref()?))
                    .filter(|a| a.finish.is_none() && a.first_delta_at.is_some())
                    .filter(|a| a.moving(now, Duration::from_millis(500)))
                    .count()
            })
            .sum()
    }
}

enum Inflicted {
    Ended {
        start: Instant,
        at: Instant,
        notes: Vec<String>,
    },
    Skipped {
        start: Instant,
        why: String,
    },
}

/// Reads every conversation the answers are in (as their user, on instance A) and
/// finds each answer there.
async fn read_back(
    http: &reqwest::Client,
    base: &str,
    tokens: &[String],
    books: &[Book],
) -> HashMap<String, ReadBack> {
    let mut wanted: HashMap<(usize, String), Vec<String>> = HashMap::new();
    for (u, b) in books.iter().enumerate() {
        for (id, a) in &b.answers {
            wanted
                .entry((u, a.conversation.clone()))
                .or_default()
                .push(id.clone());
        }
    }
    let calls = wanted.into_iter().map(|((u, conversation), ids)| {
        let token = &tokens[u];
        async move {
            let got = read_conversation(http, base, token, &conversation).await;
            ids.into_iter()
                .map(|id| {
                    let back = match &got {
                        Ok(messages) => messages
                            .get(&id)
                            .cloned()
                            .map_or(ReadBack::Missing, ReadBack::Found),
                        Err(e) => ReadBack::Unread(format!("{e:#}")),
                    };
                    (id, back)
                })
                .collect::<Vec<_>>()
        }
    });
    let all: Vec<Vec<(String, ReadBack)>> = futures_util::stream::iter(calls)
        .buffer_unordered(8)
        .collect()
        .await;
    all.into_iter().flatten().collect()
}

async fn read_conversation(
    http: &reqwest::Client,
    base: &str,
    token: &str,
    conversation: &str,
) -> anyhow::Result<HashMap<String, Stored>> {
    anyhow::ensure!(!conversation.is_empty(), "no conversation id was seen");
    let mut last = None;
    for attempt in 0..3 {
        if attempt > 0 {
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
        let call = http
            .get(format!("{base}/api/conversations/{conversation}"))
            .bearer_auth(token)
            .timeout(Duration::from_secs(10))
            .send()
            .await;
        let v: Value = match call {
            Ok(r) if r.status().is_success() => r.json().await?,
            Ok(r) => {
                last = Some(anyhow::anyhow!("HTTP {}", r.status()));
                continue;
            }
            Err(e) => {
                last = Some(e.into());
                continue;
            }
        };
        let messages = v
            .pointer("/data/messages")
            .and_then(Value::as_array)
            .context("no data.messages in the answer")?;
        return Ok(messages
            .iter()
            .filter_map(|m| {
                let field = |k: &str| m.get(k).and_then(Value::as_str).map(str::to_owned);
                Some((
                    field("_id")?,
                    Stored {
                        status: field("status")?,
                        content: field("content").unwrap_or_default(),
                    },
                ))
            })
            .collect());
    }
    Err(last.unwrap_or_else(|| anyhow::anyhow!("not read")))
}

/// What the run writes: the table, and the raw figures behind it.
#[derive(Serialize)]
struct Report {
    command: String,
    users: usize,
    stub: String,
    interval_secs: (f64, f64),
    recovery_window_secs: u64,
    shutdown_grace_secs: u64,
    pg_restart: String,
    work: String,
    /// Rows where nothing went unanswered or lost, the quota did not drift, and both
    /// instances recovered within 5 s.
    goal_met: Vec<(String, bool)>,
    rows: Vec<Row>,
    #[serde(skip)]
    table: String,
}

impl Report {
    fn new(args: &FaultsArgs, run: &Run, rows: Vec<Row>) -> Report {
        let table = verdict::table(&rows);
        Report {
            command: crate::report::command_line(),
            users: args.users,
            stub: format!("{} tokens at {}/s", args.stub_tokens, args.stub_rate),
            interval_secs: (args.min_interval, args.max_interval),
            recovery_window_secs: args.recovery,
            shutdown_grace_secs: args.shutdown_grace,
            pg_restart: args.pg_restart.clone(),
            work: run.layout.work.display().to_string(),
            goal_met: rows
                .iter()
                .map(|r| (r.fault.clone(), verdict::meets_goal(r, RECOVERY_GOAL)))
                .collect(),
            rows,
            table,
        }
    }
}

fn publish(args: &FaultsArgs, report: &Report) -> anyhow::Result<()> {
    let header = format!(
        "Fault run: {} users, a tab on each of two instances, a send every {}–{} s; model stub {}; \
         recovery window {} s; SHUTDOWN_GRACE_SECS={}.\n\n",
        report.users,
        report.interval_secs.0,
        report.interval_secs.1,
        report.stub,
        report.recovery_window_secs,
        report.shutdown_grace_secs
    );
    let text = format!("{header}{}", report.table);
    println!("{text}");
    write(&args.out, &text)?;
    let json = args
        .json
        .clone()
        .unwrap_or_else(|| args.out.with_extension("json"));
    write(&json, &serde_json::to_string_pretty(report)?)?;
    eprintln!("wrote {} and {}", args.out.display(), json.display());
    Ok(())
}

fn write(path: &Path, text: &str) -> anyhow::Result<()> {
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
}
