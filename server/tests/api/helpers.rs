//! `spawn_app()` starts the real server on port 0 with its own database, data dir and
//! SMTP receiver. The backend comes from the environment:
//! - default: SQLite in a temporary data dir, no Redis;
//! - `TEST_DATABASE_URL=postgres://…/postgres`: a fresh Postgres database per test;
//! - `TEST_REDIS_URL=redis://…`: Redis, under a key prefix of its own per test.

use std::sync::Arc;

use actix::Addr;
use actix_web::web;
use chat_server::clock::{Clock, ManualClock, MINUTE_MS};
use chat_server::config::Settings;
use chat_server::scheduler::{RunDue, Scheduler};
use chat_server::startup::{Application, Shutdown};
use chat_server::state::AppState;
use reqwest::{Response, StatusCode};
use secrecy::SecretString;
use serde_json::{json, Value};
use sqlx::{Connection, Executor, PgConnection};
use tempfile::TempDir;

use crate::smtp::{self, Mailbox};

pub struct TestApp {
    pub address: String,
    pub client: reqwest::Client,
    pub state: web::Data<AppState>,
    pub scheduler: Addr<Scheduler>,
    pub clock: Arc<ManualClock>,
    pub mailbox: Mailbox,
    pub data_dir: Arc<TempDir>,
    /// The database and Redis this instance uses, so a second one can share them.
    pub backends: Backends,
    /// Stops this instance as SIGTERM would.
    pub shutdown: Shutdown,
}

#[derive(Clone)]
pub struct Backends {
    pub database_url: Option<String>,
    pub redis: Option<(String, String)>,
}

/// A user who registered through the API.
pub struct TestUser {
    pub id: String,
    pub token: String,
}

/// 32 bytes or more, as the server demands of `JWT_SECRET`.
pub const TEST_JWT_SECRET: &str = "test-secret-of-at-least-32-bytes-0123456789";

pub async fn spawn_app() -> TestApp {
    spawn_app_with(|_| {}).await
}

pub async fn spawn_app_with(configure: impl FnOnce(&mut Settings)) -> TestApp {
    let database_url = match std::env::var("TEST_DATABASE_URL") {
        Ok(base) => Some(fresh_postgres_database(&base).await),
        Err(_) => None,
    };
    let redis = std::env::var("TEST_REDIS_URL")
        .ok()
        .map(|url| (url, format!("test:{}:", uuid::Uuid::new_v4().simple())));
    let backends = Backends { database_url, redis };
    let data_dir = Arc::new(tempfile::tempdir().unwrap());
    start(data_dir, backends, ManualClock::starting_now(), configure).await
}

impl TestApp {
    /// Another instance on the same database, Redis, data dir and clock: a restart, or a
    /// second server behind a load balancer.
    pub async fn another_instance(&self, configure: impl FnOnce(&mut Settings)) -> TestApp {
        start(
            self.data_dir.clone(),
            self.backends.clone(),
            self.clock.clone(),
            configure,
        )
        .await
    }

    /// Puts a user on a paid plan for 30 days, as support would.
    pub async fn set_plan(&self, user_id: &str, plan: &str) {
        let now = self.clock_now();
        let activation = chat_server::db::subscriptions::Activation {
            plan_type: chat_server::plans::PlanType::parse(plan).expect("a plan"),
            billing_cycle: chat_contract::states::BillingCycle::OneTime,
            payment_method: "operator",
            currency: chat_server::plans::Currency::Eur,
            start_date: now,
            end_date: now + 30 * 24 * 3600 * 1000,
        };
        self.state
            .db
            .activate_subscription(user_id, &activation, now)
            .await
            .unwrap();
    }

    /// Runs what the scheduler finds due now; answers how many subscriptions changed.
    pub async fn run_scheduler(&self) -> usize {
        self.scheduler.send(RunDue).await.unwrap()
    }
}

async fn start(
    data_dir: Arc<TempDir>,
    backends: Backends,
    clock: Arc<ManualClock>,
    configure: impl FnOnce(&mut Settings),
) -> TestApp {
    let (smtp_port, mailbox) = smtp::start().await;
    let mut settings = Settings::defaults();
    settings.server.bind_addr = "127.0.0.1:0".into();
    settings.server.data_dir = data_dir.path().to_owned();
    settings.server.web_dir = data_dir.path().join("no-web-client");
    settings.server.workers = 1;
    // The server runs inside this test binary: documents are read by the built server's.
    settings.uploads.document_reader = env!("CARGO_BIN_EXE_chat-server").into();
    settings.database.max_connections = 5;
    settings.mail.smtp_url = SecretString::from(format!("smtp://127.0.0.1:{smtp_port}"));
    settings.auth.jwt_secret = SecretString::from(TEST_JWT_SECRET);
    // Real argon2id, with little memory so the suite stays quick.
    settings.auth.argon2_memory_kib = 1024;
    settings.auth.argon2_iterations = 1;
    // Tests make many calls from one address; the rate-limit tests set their own budgets.
    settings.rate_limit.address_calls = 10_000;
    settings.rate_limit.address_failures = 10_000;
    settings.rate_limit.pair_failures = 10_000;
    settings.rate_limit.email_mails = 10_000;
    // Only the scheduler runs started by a test (and the one at start-up) count.
    settings.billing.scheduler_interval_secs = 3600;
    settings.config_dir = data_dir.path().join("no-config");
    // No test reaches the real VIES: a port nothing listens on (VIES unavailable) unless a
    // test starts its stub (vies_stub.rs).
    settings.billing.vies_url = "http://127.0.0.1:1/vies".into();
    // Nor MNB's exchange rates: its stub is mnb_stub.rs.
    settings.billing.huf_rate_url = "http://127.0.0.1:1/mnb".into();
    if let Some(url) = &backends.database_url {
        settings.database.url = SecretString::from(url.clone());
    }
    if let Some((url, prefix)) = &backends.redis {
        settings.redis.url = SecretString::from(url.clone());
        settings.redis.prefix = prefix.clone();
    } else {
        // Postgres without Redis is refused unless allowed; the suite runs one instance.
        settings.redis.allow_local_quotas = true;
    }
    configure(&mut settings);

    let app = Application::build_with_clock(settings, clock.clone())
        .await
        .expect("the app builds");
    let address = format!("http://127.0.0.1:{}", app.port());
    let state = app.state();
    let scheduler = app.scheduler();
    let shutdown = app.shutdown();
    actix_web::rt::spawn(app.run_until_stopped());
    TestApp {
        address,
        client: reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap(),
        state,
        scheduler,
        clock,
        mailbox,
        data_dir,
        backends,
        shutdown,
    }
}

/// Two instances that start at the same moment on one fresh database (and Redis), each
/// with a data dir of its own, as two servers behind a load balancer would.
pub async fn spawn_two_at_once(configure: impl Fn(&mut Settings)) -> (TestApp, TestApp) {
    let shared_dir = Arc::new(tempfile::tempdir().unwrap());
    let database_url = match std::env::var("TEST_DATABASE_URL") {
        Ok(base) => fresh_postgres_database(&base).await,
        Err(_) => format!("sqlite://{}", shared_dir.path().join("shared.db").display()),
    };
    // Migrations first, so the instances race only on what they do at start.
    chat_server::db::Db::connect(&SecretString::from(database_url.clone()), shared_dir.path(), 1)
        .await
        .unwrap()
        .close()
        .await;
    let redis = std::env::var("TEST_REDIS_URL")
        .ok()
        .map(|url| (url, format!("test:{}:", uuid::Uuid::new_v4().simple())));
    let backends = Backends {
        database_url: Some(database_url),
        redis,
    };
    let clock = ManualClock::starting_now();
    // The first instance's data dir holds a SQLite database, and keeps it alive.
    tokio::join!(
        start(shared_dir, backends.clone(), clock.clone(), &configure),
        start(
            Arc::new(tempfile::tempdir().unwrap()),
            backends.clone(),
            clock.clone(),
            &configure
        ),
    )
}

/// Creates an empty database for one test. The first call of a test run drops the
/// databases earlier runs left behind.
pub async fn fresh_postgres_database(base_url: &str) -> String {
    static CLEANED: tokio::sync::OnceCell<()> = tokio::sync::OnceCell::const_new();
    let mut admin = PgConnection::connect(base_url)
        .await
        .expect("TEST_DATABASE_URL reachable");
    CLEANED
        .get_or_init(|| async {
            let mut admin = PgConnection::connect(base_url).await.unwrap();
            let stale: Vec<String> =
                sqlx::query_scalar("SELECT datname FROM pg_database WHERE datname LIKE 'chat_test_%'")
                    .fetch_all(&mut admin)
                    .await
                    .unwrap();
            for name in stale {
                let _ = admin
                    .execute(format!(r#"DROP DATABASE IF EXISTS "{name}" WITH (FORCE)"#).as_str())
                    .await;
            }
        })
        .await;
    let name = format!("chat_test_{}", uuid::Uuid::new_v4().simple());
    admin
        .execute(format!(r#"CREATE DATABASE "{name}""#).as_str())
        .await
        .unwrap();
    let (prefix, _) = base_url
        .rsplit_once('/')
        .expect("TEST_DATABASE_URL ends in /dbname");
    format!("{prefix}/{name}")
}

/// Asserts an error response and returns its body.
pub async fn assert_error(response: Response, status: u16, code: &str) -> Value {
    let actual = response.status();
    let body: Value = response.json().await.expect("a JSON error body");
    assert_eq!(actual, StatusCode::from_u16(status).unwrap(), "body: {body}");
    assert_eq!(body["success"], json!(false), "body: {body}");
    assert_eq!(body["code"], json!(code), "body: {body}");
    assert!(
        body["message"].as_str().is_some_and(|m| !m.is_empty()),
        "body: {body}"
    );
    body
}

pub async fn assert_ok(response: Response) -> Value {
    let status = response.status();
    let body: Value = response.json().await.expect("a JSON body");
    assert_eq!(status, StatusCode::OK, "body: {body}");
    body
}

impl TestApp {
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.address)
    }

    pub async fn post(&self, path: &str, body: Value) -> Response {
        self.client.post(self.url(path)).json(&body).send().await.unwrap()
    }

    /// POST with an `Accept-Language` header.
    pub async fn post_lang(&self, path: &str, lang: &str, body: Value) -> Response {
        self.client
            .post(self.url(path))
            .header("Accept-Language", lang)
            .json(&body)
            .send()
            .await
            .unwrap()
    }

    pub async fn get_auth(&self, path: &str, token: &str) -> Response {
        self.client
            .get(self.url(path))
            .bearer_auth(token)
            .send()
            .await
            .unwrap()
    }

    pub async fn put_auth(&self, path: &str, token: &str, body: Value) -> Response {
        self.client
            .put(self.url(path))
            .bearer_auth(token)
            .json(&body)
            .send()
            .await
            .unwrap()
    }

    pub async fn patch_auth(&self, path: &str, token: &str, body: Value) -> Response {
        self.client
            .patch(self.url(path))
            .bearer_auth(token)
            .json(&body)
            .send()
            .await
            .unwrap()
    }

    pub async fn delete_auth(&self, path: &str, token: &str) -> Response {
        self.client
            .delete(self.url(path))
            .bearer_auth(token)
            .send()
            .await
            .unwrap()
    }

    pub fn clock_now(&self) -> i64 {
        self.clock.now_ms()
    }

    pub fn advance_minutes(&self, minutes: i64) {
        self.clock.advance_ms(minutes * MINUTE_MS);
    }

    pub async fn send_code(&self, name: &str, email: &str, password: &str) -> Response {
        self.post(
            "/api/auth/register/send-code",
            json!({"name": name, "email": email, "password": password, "privacyAccepted": true, "language": "en-US"}),
        )
        .await
    }

    /// Registers through send-code, the mailed code and verify.
    pub async fn register(&self, name: &str, email: &str, password: &str) -> TestUser {
        let body = assert_ok(self.send_code(name, email, password).await).await;
        let code = self.mailbox.take_for(email).await.code();
        let verified = assert_ok(
            self.post(
                "/api/auth/register/verify",
                json!({"token": body["token"], "code": code}),
            )
            .await,
        )
        .await;
        TestUser {
            id: verified["_id"].as_str().unwrap().to_owned(),
            token: verified["token"].as_str().unwrap().to_owned(),
        }
    }

    /// Makes the user with `email` an admin, as `chat-server users grant-admin` does.
    pub async fn grant_admin(&self, email: &str) {
        let summary = chat_server::operator::set_role(
            &self.state.settings,
            email,
            chat_contract::states::UserRole::Admin,
        )
        .await
        .unwrap();
        assert!(summary.ends_with("is now admin"), "{summary}");
    }

    /// Pays `payment_id` on the demo checkout page as its owner (the demo routes need the
    /// owner's login), which answers with a redirect to the result page.
    pub async fn pay_demo(&self, owner: &TestUser, payment_id: &str) {
        let paid = self
            .client
            .post(self.url(&format!("/api/payments/demo/{payment_id}/pay")))
            .bearer_auth(&owner.token)
            .send()
            .await
            .unwrap();
        assert_eq!(paid.status(), 303);
    }

    /// Ann with billing info filled in, ready to pay.
    pub async fn register_paying(&self, email: &str) -> TestUser {
        let user = self.register("Payer", email, "secret1").await;
        let billing = json!({"billingType": "private", "billingInfo": {"name": "Payer", "address": "Fő utca 1",
                             "city": "Budapest", "postalCode": "1011", "country": "HU"}});
        assert_ok(
            self.put_auth("/api/settings/billing-info", &user.token, billing)
                .await,
        )
        .await;
        user
    }

    /// Ann on `plan`, with a tab (the plan set before the socket reads it).
    pub async fn user_on(&self, plan: &str) -> (TestUser, crate::ws::WsClient) {
        let ann = self.register_ann().await;
        self.set_plan(&ann.id, plan).await;
        self.state.realtime.accounts.forget(&ann.id);
        let (tab, _) = crate::ws::WsClient::ready(self, &ann.token).await;
        (ann, tab)
    }

    /// The user's count of `service` (`responses`, `searches`, `images`) today.
    pub async fn used_today(&self, token: &str, service: &str) -> Value {
        let usage = assert_ok(self.get_auth("/api/usage/limits", token).await).await;
        usage["limitInfo"]["services"][service]["daily"]["used"].clone()
    }

    pub async fn register_ann(&self) -> TestUser {
        self.register("Ann", "ann@example.com", "secret1").await
    }

    /// Login as if through a reverse proxy that saw the client at `forwarded_for`
    /// (the app must trust 127.0.0.1 as a proxy for this to count).
    pub async fn login_via_proxy(&self, forwarded_for: &str, email: &str, password: &str) -> Response {
        self.client
            .post(self.url("/api/auth/login"))
            .header("X-Forwarded-For", forwarded_for)
            .json(&json!({"email": email, "password": password}))
            .send()
            .await
            .unwrap()
    }

    pub async fn login(&self, email: &str, password: &str) -> Response {
        self.post("/api/auth/login", json!({"email": email, "password": password}))
            .await
    }
}

/// The built server binary in a process of its own, as an operator or a service manager
/// runs it, on SQLite in a data dir of the test's.
pub mod binary {
    use std::path::Path;
    use std::process::{Child, Command, Stdio};
    use std::time::{Duration, Instant};

    /// `chat-server` with `data_dir` and no config dir, database or Redis of the caller's.
    fn command(data_dir: &Path) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_chat-server"));
        command
            .env("DATA_DIR", data_dir)
            .env("CONFIG_DIR", data_dir.join("no-config"))
            // Never the real VIES or MNB.
            .env("VIES_URL", "http://127.0.0.1:1/vies")
            .env("HUF_RATE_URL", "http://127.0.0.1:1/mnb")
            .env_remove("DATABASE_URL")
            .env_remove("REDIS_URL");
        command
    }

    /// Seeds one user `{prefix}0@example.com` on `plan` (`users seed`); their access token.
    pub fn seed_user(data_dir: &Path, prefix: &str, plan: &str) -> String {
        let tokens = data_dir.join(format!("{prefix}-tokens.tsv"));
        let seeded = command(data_dir)
            .args(["users", "seed", "--count", "1", "--password", "secret12"])
            .args(["--prefix", prefix, "--plan", plan, "--tokens"])
            .arg(&tokens)
            .env("RUST_LOG", "warn")
            .output()
            .unwrap();
        assert!(
            seeded.status.success(),
            "{}",
            String::from_utf8_lossy(&seeded.stderr)
        );
        let line = std::fs::read_to_string(&tokens).unwrap();
        line.trim().split('\t').nth(1).unwrap().to_owned()
    }

    /// Starts the server on a free port with `env` and its log to `log`, and waits for
    /// its health check; the process and its base URL.
    pub async fn serve(data_dir: &Path, env: &[(&str, &str)], log: Stdio) -> (Child, String) {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let server = command(data_dir)
            .env("BIND_ADDR", format!("127.0.0.1:{port}"))
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        let base = format!("http://127.0.0.1:{port}");
        let client = reqwest::Client::new();
        let started = Instant::now();
        while client.get(format!("{base}/api/health")).send().await.is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "the server did not start"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        (server, base)
    }
}
