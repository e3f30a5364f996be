//! The processes a fault run owns: a private Redis, the model stub, two `chat-server`
//! instances on one fresh Postgres database, and the commands that hurt them.
//!
//! Every child is started with `kill_on_drop`, so a run that fails (or is stopped with
//! Ctrl-C, which drops the run) leaves nothing behind on the machine.

use std::fs::{File, OpenOptions};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use tokio::process::{Child, Command};

/// Where everything listens and lives.
pub struct Layout {
    pub work: PathBuf,
    pub redis_port: u16,
    pub stub_port: u16,
    /// Instance A's and B's HTTP ports.
    pub server_ports: [u16; 2],
    pub server_bin: PathBuf,
    pub redis_bin: String,
    pub database_url: String,
    /// Model stub pace.
    pub stub_tokens: usize,
    pub stub_rate: u32,
    pub shutdown_grace_secs: u64,
}

impl Layout {
    pub fn redis_url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.redis_port)
    }

    pub fn http(&self, instance: usize) -> String {
        format!("http://127.0.0.1:{}", self.server_ports[instance])
    }

    pub fn ws(&self, instance: usize) -> String {
        format!("ws://127.0.0.1:{}/api/ws", self.server_ports[instance])
    }

    /// Refuses to start on ports another process holds: a stray server answering there
    /// would be measured instead of ours.
    pub fn check_ports(&self) -> anyhow::Result<()> {
        let ports = [
            self.redis_port,
            self.stub_port,
            self.server_ports[0],
            self.server_ports[1],
        ];
        for port in ports {
            TcpListener::bind(("127.0.0.1", port))
                .with_context(|| format!("port {port} is taken: stop what holds it or pass --port-base"))?;
        }
        Ok(())
    }

    /// The environment both instances (and `users seed`) run with.
    fn server_env(&self, secret: &str) -> Vec<(String, String)> {
        let pairs = [
            ("DATABASE_URL", self.database_url.clone()),
            ("REDIS_URL", self.redis_url()),
            ("REDIS_PREFIX", "faults:".into()),
            ("JWT_SECRET", secret.into()),
            // The embedded configuration whatever the working directory: the run must not
            // depend on a config/ folder being beside it.
            ("CONFIG_DIR", self.work.join("no-config").display().to_string()),
            ("OPENAI_API_KEY", "faults".into()),
            (
                "OPENAI_BASE_URL",
                format!("http://127.0.0.1:{}/v1", self.stub_port),
            ),
            ("OPENAI_EMBEDDINGS", "false".into()),
            ("SHUTDOWN_GRACE_SECS", self.shutdown_grace_secs.to_string()),
            // Every tab connects from 127.0.0.1: the per-address socket limit (50) would
            // refuse most of them.
            ("MAX_SOCKETS_PER_ADDRESS", "100000".into()),
            (
                "RUST_LOG",
                std::env::var("RUST_LOG").unwrap_or_else(|_| "warn".into()),
            ),
            // Plain text: the logs go to files.
            ("NO_COLOR", "1".into()),
            // No backtrace captured for every error (a harness run may have RUST_BACKTRACE
            // set): during an outage that would slow the instances down, which is not
            // how they run in production. Panics still print theirs.
            ("RUST_LIB_BACKTRACE", "0".into()),
        ];
        pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
    }
}

/// A log file in the work folder that a child appends to (restarts keep one file).
fn log_file(work: &Path, name: &str) -> anyhow::Result<(File, File)> {
    let path = work.join(format!("{name}.log"));
    let out = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .with_context(|| format!("opening {}", path.display()))?;
    let err = out.try_clone()?;
    Ok((out, err))
}

fn logged(cmd: &mut Command, work: &Path, name: &str) -> anyhow::Result<()> {
    let (out, err) = log_file(work, name)?;
    cmd.stdin(Stdio::null())
        .stdout(Stdio::from(out))
        .stderr(Stdio::from(err))
        .kill_on_drop(true);
    Ok(())
}

/// Waits until `check` passes, at most `limit`; how long it took.
pub async fn wait_until<F, Fut>(limit: Duration, what: &str, mut check: F) -> anyhow::Result<Duration>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let started = Instant::now();
    while started.elapsed() < limit {
        if check().await {
            return Ok(started.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    bail!("{what} not up after {} s", limit.as_secs())
}

/// Whether Redis answers a `PING` within a second (a fresh connection each time: a
/// kept one would not tell a restarted server from the old one).
pub async fn redis_answers(url: &str) -> bool {
    let ping = async {
        let client = redis::Client::open(url).ok()?;
        let mut con = client.get_multiplexed_async_connection().await.ok()?;
        redis::cmd("PING").query_async::<String>(&mut con).await.ok()
    };
    matches!(
        tokio::time::timeout(Duration::from_secs(1), ping).await,
        Ok(Some(_))
    )
}

/// Whether `GET /api/health` answers 200 (database and Redis reachable).
pub async fn healthy(http: &reqwest::Client, base: &str) -> bool {
    let call = http
        .get(format!("{base}/api/health"))
        .timeout(Duration::from_secs(3))
        .send();
    matches!(call.await, Ok(r) if r.status().is_success())
}

pub struct Redis {
    child: Option<Child>,
}

impl Redis {
    pub async fn start(layout: &Layout) -> anyhow::Result<Redis> {
        let mut cmd = Command::new(&layout.redis_bin);
        // No snapshot and no append-only file: a restart after a kill starts empty, as a
        // Redis without persistence (or a replacement node) does.
        cmd.args(["--port", &layout.redis_port.to_string()])
            .args(["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(&layout.work);
        logged(&mut cmd, &layout.work, "redis")?;
        let child = cmd.spawn().with_context(|| {
            format!(
                "starting {} (install redis-server or pass --redis-server)",
                layout.redis_bin
            )
        })?;
        let url = layout.redis_url();
        wait_until(Duration::from_secs(10), "redis-server", || redis_answers(&url)).await?;
        Ok(Redis { child: Some(child) })
    }

    /// SIGKILL, as a crash or an OOM kill would end it.
    pub async fn kill(&mut self) -> anyhow::Result<()> {
        if let Some(mut child) = self.child.take() {
            child.start_kill()?;
            child.wait().await?;
        }
        Ok(())
    }
}

/// `CLIENT PAUSE ms ALL`: Redis holds every client's commands (its own connection's
/// reply comes at once) for `ms`.
pub async fn redis_pause(url: &str, ms: u64) -> anyhow::Result<()> {
    let client = redis::Client::open(url)?;
    let mut con = client.get_multiplexed_async_connection().await?;
    redis::cmd("CLIENT")
        .arg("PAUSE")
        .arg(ms)
        .arg("ALL")
        .query_async::<()>(&mut con)
        .await
        .context("CLIENT PAUSE")?;
    Ok(())
}

/// The model stub, in its own process (this binary's `model-stub`), so its threads do
/// not compete with the harness's tabs for the same runtime.
pub async fn start_stub(layout: &Layout, http: &reqwest::Client) -> anyhow::Result<Child> {
    let exe = std::env::current_exe()?;
    let mut cmd = Command::new(exe);
    cmd.arg("model-stub")
        .args(["--bind", &format!("127.0.0.1:{}", layout.stub_port)])
        .args(["--tokens-per-sec", &layout.stub_rate.to_string()])
        .args(["--reply-tokens", &layout.stub_tokens.to_string()])
        .args(["--threads", "1"]);
    logged(&mut cmd, &layout.work, "model-stub")?;
    let child = cmd.spawn().context("starting the model stub")?;
    let url = format!("http://127.0.0.1:{}/v1/models", layout.stub_port);
    wait_until(Duration::from_secs(10), "model stub", || answers_ok(http, &url)).await?;
    Ok(child)
}

async fn answers_ok(http: &reqwest::Client, url: &str) -> bool {
    matches!(http.get(url).send().await, Ok(r) if r.status().is_success())
}

/// `url` with its database name replaced by `postgres` (the maintenance database), and
/// the name.
pub fn split_database(url: &str) -> anyhow::Result<(String, String)> {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, format!("?{q}")),
        None => (url, String::new()),
    };
    let (server, name) = base.rsplit_once('/').context("a database URL without /NAME")?;
    anyhow::ensure!(
        server.contains("://") && !server.ends_with(':') && !name.is_empty(),
        "a database URL without a database name: {url}"
    );
    anyhow::ensure!(
        name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
        "database name {name:?}: letters, digits and _ only"
    );
    Ok((format!("{server}/postgres{query}"), name.to_owned()))
}

async fn psql(url: &str, sql: &str) -> anyhow::Result<()> {
    let out = Command::new("psql")
        .arg(url)
        .args(["-v", "ON_ERROR_STOP=1", "-qtAc", sql])
        .stdin(Stdio::null())
        .output()
        .await
        .context("running psql (install the Postgres client)")?;
    if !out.status.success() {
        bail!("psql {sql:?}: {}", String::from_utf8_lossy(&out.stderr).trim());
    }
    Ok(())
}

/// Drops and creates the run's database, so every run starts from nothing. Only a
/// database whose name says it is for this harness is dropped.
pub async fn fresh_database(url: &str) -> anyhow::Result<()> {
    let (maintenance, name) = split_database(url)?;
    anyhow::ensure!(
        name.contains("faults"),
        "--database-url names {name:?}: the harness drops and recreates it, so its name must contain \"faults\""
    );
    psql(
        &maintenance,
        &format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
    )
    .await?;
    psql(&maintenance, &format!("CREATE DATABASE {name}")).await
}

/// Whether Postgres takes a connection and answers on the run's database.
pub async fn postgres_answers(url: &str) -> bool {
    psql(url, "SELECT 1").await.is_ok()
}

/// Runs `command` with `sh -c`, its output appended to `name.log` in the work folder:
/// not to pipes, which a daemon it starts (`pg_ctl restart` starts Postgres) would hold
/// open long after the command ended. Its exit status, and the end of its log when it
/// failed.
pub async fn shell(work: &Path, name: &str, command: &str) -> anyhow::Result<Result<(), String>> {
    let mut cmd = Command::new("sh");
    cmd.args(["-c", command]);
    logged(&mut cmd, work, name)?;
    // A command that outlives the run is not killed: it may be the cluster's restart.
    cmd.kill_on_drop(false);
    let status = cmd
        .spawn()
        .with_context(|| format!("running {command:?}"))?
        .wait()
        .await?;
    if status.success() {
        return Ok(Ok(()));
    }
    let log = std::fs::read_to_string(work.join(format!("{name}.log"))).unwrap_or_default();
    let last = log.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("");
    Ok(Err(format!("{status}: {}", last.trim())))
}

/// `chat-server users seed`: `count` users on the plus plan (1,000 answers a day, far
/// above what a run sends) and their tokens, `email<TAB>token` a line.
pub async fn seed_users(layout: &Layout, secret: &str, count: usize) -> anyhow::Result<PathBuf> {
    let tokens = layout.work.join("users.tsv");
    let mut cmd = Command::new(&layout.server_bin);
    cmd.args(["users", "seed", "--count", &count.to_string()])
        .args([
            "--password",
            "faults-password-1",
            "--prefix",
            "faults",
            "--plan",
            "plus",
        ])
        .arg("--tokens")
        .arg(&tokens)
        .envs(layout.server_env(secret))
        .env("DATA_DIR", layout.work.join("seed"));
    logged(&mut cmd, &layout.work, "seed")?;
    let status = cmd
        .spawn()
        .with_context(|| format!("running {} users seed", layout.server_bin.display()))?
        .wait()
        .await?;
    anyhow::ensure!(
        status.success(),
        "users seed failed: see {}/seed.log",
        layout.work.display()
    );
    Ok(tokens)
}

/// One `chat-server` instance (A or B); restarted as the same instance.
pub struct Server {
    child: Option<Child>,
}

impl Server {
    pub fn spawn(layout: &Layout, secret: &str, instance: usize) -> anyhow::Result<Server> {
        let name = ["a", "b"][instance];
        let mut cmd = Command::new(&layout.server_bin);
        cmd.envs(layout.server_env(secret))
            .env("DATA_DIR", layout.work.join(name))
            .env(
                "BIND_ADDR",
                format!("127.0.0.1:{}", layout.server_ports[instance]),
            );
        logged(&mut cmd, &layout.work, &format!("server-{name}"))?;
        let child = cmd
            .spawn()
            .with_context(|| format!("starting {}", layout.server_bin.display()))?;
        Ok(Server { child: Some(child) })
    }

    /// Starts the instance and waits for its health check; how long that took.
    pub async fn start(
        layout: &Layout,
        secret: &str,
        instance: usize,
        http: &reqwest::Client,
    ) -> anyhow::Result<(Server, Duration)> {
        let mut server = Server::spawn(layout, secret, instance)?;
        let base = layout.http(instance);
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(60) {
            if healthy(http, &base).await {
                return Ok((server, started.elapsed()));
            }
            if let Some(child) = server.child.as_mut() {
                if let Some(status) = child.try_wait()? {
                    bail!(
                        "instance {} exited at start ({status}): see {}/server-{}.log",
                        ["A", "B"][instance],
                        layout.work.display(),
                        ["a", "b"][instance]
                    );
                }
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        bail!("instance {} not healthy after 60 s", ["A", "B"][instance])
    }

    pub async fn kill(&mut self) -> anyhow::Result<()> {
        if let Some(mut child) = self.child.take() {
            child.start_kill()?;
            child.wait().await?;
        }
        Ok(())
    }

    /// SIGTERM (through kill(1): the harness has no unsafe code for libc), then waits for
    /// the exit, at most `limit` before it kills; how long the exit took, and whether it
    /// had to be killed.
    pub async fn terminate(&mut self, limit: Duration) -> anyhow::Result<(Duration, bool)> {
        let Some(mut child) = self.child.take() else {
            return Ok((Duration::ZERO, false));
        };
        let pid = child.id().context("the instance has already exited")?;
        let started = Instant::now();
        let status = std::process::Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status()
            .context("running kill -TERM")?;
        anyhow::ensure!(status.success(), "kill -TERM {pid} failed");
        match tokio::time::timeout(limit, child.wait()).await {
            Ok(r) => {
                r?;
                Ok((started.elapsed(), false))
            }
            Err(_) => {
                child.start_kill()?;
                child.wait().await?;
                Ok((started.elapsed(), true))
            }
        }
    }
}

/// A secret for the run's tokens (the server wants 32 bytes or more): the harness's own
/// users only, so the clock and the process id are random enough.
pub fn run_secret() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("faults-{nanos:032x}-{:08x}-secret", std::process::id())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_maintenance_database_replaces_the_name() {
        let (m, n) = split_database("postgres://postgres@127.0.0.1:5432/chat_faults").unwrap();
        assert_eq!(
            (m.as_str(), n.as_str()),
            ("postgres://postgres@127.0.0.1:5432/postgres", "chat_faults")
        );
        let (m, n) = split_database("postgres://u:p@h/db_faults?sslmode=disable").unwrap();
        assert_eq!(
            (m.as_str(), n.as_str()),
            ("postgres://u:p@h/postgres?sslmode=disable", "db_faults")
        );
        assert!(split_database("postgres://h:5432").is_err());
        assert!(split_database("postgres://h/x;drop").is_err());
    }
}
