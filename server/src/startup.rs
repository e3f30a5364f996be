//! Builds the application from settings: connects the parts, binds the listener (port 0
//! in tests) and returns a server ready to run.

use std::net::TcpListener;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use actix_web::dev::ServerHandle;
use actix_web::middleware::{from_fn, Condition};
use actix_web::{web, App, HttpServer};
use anyhow::Context;
use secrecy::ExposeSecret;

use chat_actors::shard::Shards;

use crate::accounts::codes::{new_token, CodeKey};
use crate::accounts::jwt::Tokens;
use crate::accounts::password::PasswordHasher;
use crate::accounts::Accounts;
use crate::announce::Announcer;
use crate::billing::providers::PaymentProvider;
use crate::billing::Billing;
use crate::chat::context::ContextSizes;
use crate::chat::Chat;
use crate::clock::{SharedClock, SystemClock};
use crate::config::{is_set, Settings};
use crate::db::Db;
use crate::documents::Documents;
use crate::files::store::FileStore;
use crate::files::Files;
use crate::images::ImageDecoder;
use crate::mail::Mailer;
use crate::metering::Meter;
use crate::plans::Catalogue;
use crate::portability::export::Exporter;
use crate::projects::Projects;
use crate::quota::Quotas;
use crate::rate_limit::RateLimits;
use crate::realtime::Realtime;
use crate::redis_conn::Redis;
use crate::scheduler::Scheduler;
use crate::search::WebSearch;
use crate::state::AppState;
use crate::views::PlanViews;
use crate::{http, i18n};

pub struct Application {
    port: u16,
    server: tokio::task::JoinHandle<std::io::Result<()>>,
    shutdown: Shutdown,
    state: web::Data<AppState>,
    scheduler: actix::Addr<Scheduler>,
    metrics_addr: Option<std::net::SocketAddr>,
}

impl Application {
    pub async fn build(settings: Settings) -> anyhow::Result<Application> {
        Self::build_with_clock(settings, Arc::new(SystemClock)).await
    }

    pub async fn build_with_clock(settings: Settings, clock: SharedClock) -> anyhow::Result<Application> {
        refuse_unsafe_settings(&settings)?;
        let state = compose(settings, clock).await?;
        let (port, server) = serve(&state)?;
        let metrics = serve_metrics(&state)?;
        let shutdown = Shutdown {
            server: server.handle(),
            metrics: metrics.as_ref().map(|m| m.server.handle()),
            state: state.clone(),
        };
        let metrics_addr = metrics.map(|m| {
            actix_web::rt::spawn(m.server);
            m.addr
        });
        // The workers start once the server runs; they are the shards, which nothing may
        // use before (asking for a shard that has no worker yet would block its thread).
        let server = actix_web::rt::spawn(server);
        anyhow::ensure!(
            state.realtime.shards.started(Duration::from_secs(30)).await,
            "the HTTP workers did not start within 30 s"
        );
        let scheduler = start_background(&state);
        tracing::info!(port, metrics = ?metrics_addr, "listening");
        Ok(Application {
            port,
            server,
            shutdown,
            state,
            scheduler,
            metrics_addr,
        })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Where `/metrics` listens, when metrics are on.
    pub fn metrics_addr(&self) -> Option<std::net::SocketAddr> {
        self.metrics_addr
    }

    /// Shared state, for tests that need to look behind the API (e.g. at the database).
    pub fn state(&self) -> web::Data<AppState> {
        self.state.clone()
    }

    /// The scheduler, so tests can run what is due without waiting for its tick.
    pub fn scheduler(&self) -> actix::Addr<Scheduler> {
        self.scheduler.clone()
    }

    /// What stops this application gracefully (on SIGTERM, or from a test).
    pub fn shutdown(&self) -> Shutdown {
        self.shutdown.clone()
    }

    pub async fn run_until_stopped(self) -> std::io::Result<()> {
        self.server.await.map_err(std::io::Error::other)?
    }
}

/// The connections every part shares: the database (its data folder made first) and Redis.
async fn connect(settings: &Settings) -> anyhow::Result<(Db, Option<Redis>)> {
    let data_dir = &settings.server.data_dir;
    std::fs::create_dir_all(data_dir).with_context(|| format!("creating {}", data_dir.display()))?;
    let db = Db::connect(
        &settings.database.url,
        data_dir,
        settings.database.max_connections,
    )
    .await?;
    let redis = connect_redis(settings).await?;
    Ok((db, redis))
}

/// The plan catalogue, checked against the seller's country.
fn catalogue(settings: &Settings) -> anyhow::Result<Arc<Catalogue>> {
    let catalogue = Arc::new(Catalogue::load(&settings.config_dir)?);
    anyhow::ensure!(
        catalogue.vat.is_eu(&settings.invoice.seller_country),
        "[invoice] seller_country {:?} must be an EU country of vat.toml",
        settings.invoice.seller_country
    );
    Ok(catalogue)
}

/// The realtime side on one shard per HTTP worker: the realtime work runs beside the
/// connections, one thread per core.
fn realtime(settings: &Settings, redis: &Option<Redis>) -> (Realtime, Shards) {
    let workers = match settings.server.workers {
        0 => std::thread::available_parallelism().map_or(2, |n| n.get()),
        n => n,
    };
    let shards = Shards::on_workers(workers);
    (Realtime::start(settings, redis.clone(), shards.clone()), shards)
}

/// The image generation service: the model endpoint's generator, or the demo's.
fn image_gen(parts: &Parts) -> crate::imagegen::ImageGen {
    let settings = &parts.settings;
    crate::imagegen::ImageGen {
        generator: crate::imagegen::for_settings(&settings.model),
        db: parts.db.clone(),
        files: parts.store.clone(),
        images: parts.images.clone(),
        clock: parts.clock.clone(),
        max_px: settings.files.image_max_px,
        thumb_px: settings.files.thumbnail_px,
    }
}

/// The quota actors' hub: counts in Redis when it is configured, else in the database.
fn quotas(
    settings: &Settings,
    db: &Db,
    redis: &Option<Redis>,
    catalogue: &Arc<Catalogue>,
    clock: &SharedClock,
    shards: Shards,
) -> Quotas {
    let redis = redis
        .clone()
        .map(|c| (c, settings.redis.prefix.clone(), settings.redis_timeout()));
    Quotas::start(db.clone(), redis, catalogue.clone(), clock.clone(), Some(shards))
}

/// The parts start-up chose, said once in the log.
fn log_backends(
    db: &Db,
    redis: bool,
    settings: &Settings,
    mailer: &Mailer,
    files: &FileStore,
    payments: &str,
    model: &str,
) {
    tracing::info!(
        database = %describe_db(db, &settings.server.data_dir),
        redis = if redis { "redis (quotas and fan-out shared)" } else { "none (in-process)" },
        mail = %mailer.describe(),
        files = %files.describe(),
        payments = match payments {
            "stripe" => "stripe (cards through Stripe; plans start on its verified webhooks)",
            _ => "demo (payments complete on a local checkout page)",
        },
        model,
        search = match (settings.search.searxng_configured(), settings.search.google_configured()) {
            (true, true) => "searxng and google",
            (true, false) => "searxng",
            (false, true) => "google",
            (false, false) if model != "demo" => "the model's search model only (no deep search)",
            (false, false) => "none (web search not set up)",
        },
        "backends"
    );
}

/// The token and code secrets, kept in the database so every instance signs alike.
struct Secrets {
    token: String,
    code_key: String,
}

async fn secrets(settings: &Settings, db: &Db, clock: &SharedClock) -> anyhow::Result<Secrets> {
    let now = clock.now_ms();
    let token = token_secret(settings, db, &settings.server.data_dir, now).await?;
    let code_key = db
        .shared_secret(CODE_KEY, &format!("{}{}", new_token(), new_token()), now)
        .await
        .context("reading the code key")?;
    Ok(Secrets { token, code_key })
}

/// The accounts service: what the account rules need.
fn accounts(parts: &Parts, secrets: Secrets) -> anyhow::Result<Accounts> {
    let settings = &parts.settings;
    Ok(Accounts {
        db: parts.db.clone(),
        clock: parts.clock.clone(),
        tokens: Arc::new(Tokens::new(secrets.token.as_bytes())),
        codes: CodeKey::new(secrets.code_key.as_bytes()),
        hasher: PasswordHasher::new(&settings.auth)?,
        mailer: parts.mailer.clone(),
        limits: parts.limits.clone(),
        images: parts.images.clone(),
        realtime: parts.realtime.clone(),
        settings: settings.clone(),
    })
}

/// What several services share, made once.
struct Parts {
    db: Db,
    redis: Option<Redis>,
    clock: SharedClock,
    mailer: Mailer,
    realtime: Arc<Realtime>,
    settings: Arc<Settings>,
    catalogue: Arc<Catalogue>,
    quotas: Quotas,
    images: ImageDecoder,
    store: Arc<FileStore>,
    limits: Arc<RateLimits>,
    /// The model catalogue (`config/models.toml`): windows and prices.
    context_sizes: Arc<ContextSizes>,
    meter: Meter,
}

/// How plans are shown: with what works here, and the seller's domestic VAT.
fn plan_views(parts: &Parts, search: &WebSearch) -> PlanViews {
    let seller_country = &parts.settings.invoice.seller_country;
    PlanViews {
        catalogue: parts.catalogue.clone(),
        search: search.providers.clone(),
        deep_searches: parts.settings.search.deep_searches,
        domestic_vat: parts.catalogue.vat.for_buyer(seller_country, None).rate,
    }
}

/// The files service, with the documents service it hands documents to.
fn files(parts: &Parts) -> anyhow::Result<Files> {
    let settings = &parts.settings;
    let documents = Documents::new(
        &settings.uploads,
        crate::documents::Parts {
            db: parts.db.clone(),
            store: parts.store.clone(),
            images: parts.images.clone(),
            realtime: parts.realtime.clone(),
            meter: parts.meter.clone(),
        },
    )?;
    Ok(Files {
        db: parts.db.clone(),
        clock: parts.clock.clone(),
        store: parts.store.clone(),
        images: parts.images.clone(),
        documents: Arc::new(documents),
        image_max_px: settings.files.image_max_px,
        thumbnail_px: settings.files.thumbnail_px,
        unsent: Duration::from_secs(settings.files.unsent_hours.max(1) * 3600),
    })
}

/// The chat service, over the services an answer uses.
fn chat(
    parts: &Parts,
    accounts: &Accounts,
    files: &Arc<Files>,
    search: Arc<WebSearch>,
    announce: &Arc<Announcer>,
) -> anyhow::Result<Chat> {
    Ok(Chat {
        db: parts.db.clone(),
        clock: parts.clock.clone(),
        realtime: parts.realtime.clone(),
        quotas: parts.quotas.clone(),
        catalogue: parts.catalogue.clone(),
        context_sizes: parts.context_sizes.clone(),
        meter: parts.meter.clone(),
        tokens: accounts.tokens.clone(),
        settings: parts.settings.clone(),
        search,
        files: files.clone(),
        imagegen: image_gen(parts),
        announce: announce.clone(),
    })
}

/// The parts the services share, made once: storage, the actors, the catalogue, the
/// file store; with the secrets and the payment provider, which one service each takes.
async fn parts(
    settings: Settings,
    clock: SharedClock,
) -> anyhow::Result<(Parts, Secrets, Arc<dyn PaymentProvider>)> {
    let (db, redis) = connect(&settings).await?;
    let (realtime, shards) = realtime(&settings, &redis);
    let secrets = secrets(&settings, &db, &clock).await?;
    let mailer = Mailer::new(&settings.mail)?;
    let catalogue = catalogue(&settings)?;
    let quotas = quotas(&settings, &db, &redis, &catalogue, &clock, shards);
    let payments = crate::billing::providers::choose(&settings, &db, &catalogue).await?;
    let store = Arc::new(FileStore::from_settings(&settings)?);
    let model = realtime.provider.name();
    log_backends(
        &db,
        redis.is_some(),
        &settings,
        &mailer,
        &store,
        payments.name(),
        model,
    );
    let redis_limits = redis.clone().map(|conn| (conn, settings.redis.prefix.clone()));
    let limits = RateLimits::new(&settings.rate_limit, redis_limits, clock.clone())?;
    let images = ImageDecoder::new(&settings.uploads);
    let context_sizes = Arc::new(ContextSizes::load(&settings.config_dir)?);
    let meter = Meter::new(db.clone(), clock.clone(), context_sizes.clone());
    let parts = Parts {
        db,
        redis,
        clock,
        mailer,
        realtime: Arc::new(realtime),
        settings: Arc::new(settings),
        catalogue,
        quotas,
        images,
        store,
        limits: Arc::new(limits),
        context_sizes,
        meter,
    };
    Ok((parts, secrets, payments))
}

/// Billing, which tells the tabs of plan changes through `announce`.
fn billing(p: &Parts, payments: Arc<dyn PaymentProvider>, announce: &Arc<Announcer>) -> Billing {
    let parts = crate::billing::Parts {
        db: p.db.clone(),
        clock: p.clock.clone(),
        catalogue: p.catalogue.clone(),
        payments,
        mailer: p.mailer.clone(),
        announce: announce.clone(),
    };
    Billing::new(parts, &p.settings)
}

/// The composition root: every part made once, the domain services built from them, and
/// the state the handlers reach them through.
async fn compose(settings: Settings, clock: SharedClock) -> anyhow::Result<web::Data<AppState>> {
    let (p, secrets, payments) = parts(settings, clock).await?;
    let accounts = accounts(&p, secrets)?;
    let model_timeout = Duration::from_secs(p.settings.model.timeout_secs.max(1));
    let search = WebSearch::new(
        &p.settings.search,
        model_timeout,
        p.realtime.clone(),
        p.meter.clone(),
    );
    let plans = Arc::new(plan_views(&p, &search));
    let announce = Arc::new(Announcer {
        db: p.db.clone(),
        clock: p.clock.clone(),
        quotas: p.quotas.clone(),
        realtime: p.realtime.clone(),
        plans: plans.clone(),
    });
    let billing = Arc::new(billing(&p, payments, &announce));
    let files = Arc::new(files(&p)?);
    let chat = Arc::new(chat(&p, &accounts, &files, Arc::new(search), &announce)?);
    let exporter = Arc::new(Exporter {
        db: p.db.clone(),
        clock: p.clock.clone(),
        files: p.store.clone(),
        billing: billing.clone(),
        plans: plans.clone(),
    });
    let projects = Projects {
        db: p.db.clone(),
        clock: p.clock.clone(),
        catalogue: p.catalogue.clone(),
    };
    let admin = Arc::new(crate::admin::Admin {
        db: p.db.clone(),
        clock: p.clock.clone(),
        quotas: p.quotas.clone(),
        billing: billing.clone(),
        announce: announce.clone(),
        plans: plans.clone(),
    });
    Ok(web::Data::new(AppState {
        site: crate::http::origin::SiteOrigin::from_settings(&p.settings)?,
        db: p.db,
        redis: p.redis,
        accounts,
        admin,
        projects,
        chat,
        files,
        billing,
        announce,
        exporter,
        plans,
        mailer: p.mailer,
        limits: p.limits,
        images: p.images,
        catalogue: p.catalogue,
        quotas: p.quotas,
        realtime: p.realtime,
        clock: p.clock,
        settings: p.settings,
    }))
}

/// The HTTP server on its address, not yet running: its port, and the server.
fn serve(state: &web::Data<AppState>) -> anyhow::Result<(u16, actix_web::dev::Server)> {
    let settings = &state.settings;
    let listener = TcpListener::bind(&settings.server.bind_addr)
        .with_context(|| format!("binding {}", settings.server.bind_addr))?;
    let port = listener.local_addr()?.port();
    let web_dir = settings.server.web_dir.clone();
    let uploads_dir = settings.uploads_dir();
    std::fs::create_dir_all(uploads_dir.join("avatars"))
        .with_context(|| format!("creating {}", uploads_dir.display()))?;
    let client_built = http::web::client_is_built(&web_dir);
    if !client_built {
        tracing::warn!(web_dir = %web_dir.display(), "no built web client; serving a placeholder page");
    }
    let app_state = state.clone();
    let security_headers = http::headers::SecurityHeaders::from_settings(settings)?;
    let stalled_after = crate::realtime::write_timeout(settings);
    let shards = state.realtime.shards.clone();
    let metrics_on = settings.metrics.enabled();
    let server = HttpServer::new(move || {
        // Called once on each worker's thread, as it starts.
        shards.adopt_current();
        App::new()
            .wrap(from_fn(i18n::middleware))
            .wrap(from_fn(http::trace::middleware))
            .wrap(security_headers.middleware())
            // Outermost, so a request's time is all of it; with metrics off, one branch.
            .wrap(Condition::new(metrics_on, from_fn(crate::metrics::middleware)))
            .app_data(app_state.clone())
            .configure(http::api)
            .configure(|cfg| http::web::routes(cfg, &web_dir, &uploads_dir, client_built))
    })
    .on_connect(move |connection, _| http::ws::limit_stalled_writes(connection, stalled_after))
    .workers(state.realtime.shards.len())
    // `main` handles the signals, so running answers get their grace period.
    .disable_signals()
    // `Shutdown::graceful` gave the grace period already.
    .shutdown_timeout(CLOSE_TIMEOUT_SECS)
    .listen(listener)?
    .run();
    Ok((port, server))
}

/// `/metrics` on its own address, when `[metrics] bind_addr` is set: not yet running.
/// The pool's gauges are read at each scrape.
fn serve_metrics(state: &web::Data<AppState>) -> anyhow::Result<Option<crate::metrics::Listener>> {
    let settings = &state.settings.metrics;
    if !settings.enabled() {
        return Ok(None);
    }
    let db = state.db.clone();
    let listener = crate::metrics::listen(settings.bind_addr.trim(), move || db.record_pool_use())?;
    if listener.addr.ip().is_unspecified() {
        tracing::warn!(
            addr = %listener.addr,
            "metrics: /metrics has no login and listens on every interface; bind it to a private address"
        );
    }
    Ok(Some(listener))
}

/// What runs beside the requests once the workers are up: the relay between instances,
/// orphaned answers, housekeeping, the file sweep and the scheduler.
fn start_background(state: &web::Data<AppState>) -> actix::Addr<Scheduler> {
    state.realtime.attach_relay();
    crate::chat::orphans::spawn(state.chat.clone());
    spawn_housekeeping(state.clone());
    actix_web::rt::spawn(state.files.clone().sweep_forever());
    let interval = Duration::from_secs(state.settings.billing.scheduler_interval_secs.max(1));
    if state.billing.provider().name() == "demo" {
        tracing::warn!("payments: the demo provider completes every checkout without a card; do not expose it to real users");
    }
    actix::Actor::start(Scheduler::new(state.clone(), interval))
}

/// A graceful stop: answers that are running may finish, nothing is left half done.
#[derive(Clone)]
pub struct Shutdown {
    server: ServerHandle,
    /// The metrics listener, when metrics are on: it stops last, so a scrape sees the end.
    metrics: Option<ServerHandle>,
    state: web::Data<AppState>,
}

/// How long interrupted answers may take to be stored and settled (the database or Redis
/// may be slow or away: each of their calls has a time limit).
const SETTLE_TIMEOUT: Duration = Duration::from_secs(4);
/// How long the last writes (usage, events for Redis) may take at shutdown.
const FLUSH_TIMEOUT: Duration = Duration::from_secs(2);
/// After the grace period, how long requests still open (tabs' websockets among them)
/// have before they are closed.
const CLOSE_TIMEOUT_SECS: u64 = 1;

impl Shutdown {
    /// Stops accepting connections and refuses new sends; lets running answers finish
    /// for `server.shutdown_grace_secs`; stores the ones still running as interrupted
    /// with their text so far (units given back, claims released); then stops the
    /// server. Whatever Redis or the database do, it takes at most the grace period and
    /// `SETTLE_TIMEOUT + FLUSH_TIMEOUT + CLOSE_TIMEOUT_SECS` more.
    pub async fn graceful(&self) {
        let realtime = &self.state.realtime;
        realtime.start_draining();
        self.server.pause().await;
        let grace = Duration::from_secs(self.state.settings.server.shutdown_grace_secs);
        let running = self.settle(grace).await;
        if running > 0 {
            tracing::info!(running, "interrupting the answers still running");
            realtime.generations.interrupt_all();
            let left = self.settle(SETTLE_TIMEOUT).await;
            if left > 0 {
                tracing::error!(
                    left,
                    "answers not settled before stopping; their text is stored first, and another instance ends those it could not store once their leases lapse"
                );
            }
        }
        let usage = async {
            match tokio::time::timeout(FLUSH_TIMEOUT, self.state.quotas.flush()).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => tracing::error!(error = %format!("{e:#}"), "usage not written at shutdown"),
                Err(_) => {
                    tracing::error!("usage not written at shutdown: the database did not answer in time")
                }
            }
        };
        let events = async {
            if let Some(relay) = &realtime.relay {
                // The ends of answers release their claims: make sure they reached Redis
                // (or were tried, when it is away: then the claims expire by themselves).
                if tokio::time::timeout(FLUSH_TIMEOUT, relay.flush()).await.is_err() {
                    tracing::warn!("events for Redis still queued at shutdown");
                }
            }
        };
        futures_util::join!(usage, events);
        self.server.stop(true).await;
        if let Some(metrics) = &self.metrics {
            metrics.stop(true).await;
        }
    }

    /// Waits up to `limit` for running answers to settle; answers how many have not.
    async fn settle(&self, limit: Duration) -> usize {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let left = self.state.realtime.generations.unsettled();
            if left == 0 || tokio::time::Instant::now() >= deadline {
                return left;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// Redis, if set, once it answered.
async fn connect_redis(settings: &Settings) -> anyhow::Result<Option<Redis>> {
    if !is_set(&settings.redis.url) {
        return Ok(None);
    }
    let client =
        redis::Client::open(settings.redis.url.expose_secret()).context("REDIS_URL is not a valid URL")?;
    // Each call has a time limit besides (see `outage`); these bound the connection's
    // own waits, so a paused Redis cannot pile up calls in it.
    let limit = settings.redis_timeout();
    // No retries inside the manager: its backoff starts at one second and multiplies by
    // its `factor` (100 by default, capped at 60 s), so after a Redis restart the
    // connections came back one to two minutes late. Without retries, a failed attempt
    // fails the call at once (the caller gets `service_unavailable`) and the next call
    // tries again: the server reconnects with the first call after Redis is back.
    let config = redis::aio::ConnectionManagerConfig::new()
        .set_number_of_retries(0)
        .set_response_timeout(limit)
        .set_connection_timeout(limit);
    let redis = tokio::time::timeout(Duration::from_secs(5), Redis::connect(client, config))
        .await
        .context("connecting to Redis timed out")?
        .context("connecting to Redis")?;
    Ok(Some(redis))
}

/// The shortest `JWT_SECRET` accepted: HS256 keys shorter than its 32-byte hash are
/// within reach of offline guessing from any token.
const MIN_JWT_SECRET_BYTES: usize = 32;
const JWT_SECRET_NAME: &str = "jwt";
const CODE_KEY: &str = "code_key";

/// Settings the server would run with but should not: each would silently weaken it.
fn refuse_unsafe_settings(settings: &Settings) -> anyhow::Result<()> {
    refuse_test_only_settings(settings, cfg!(debug_assertions))?;
    let secret = settings.auth.jwt_secret.expose_secret();
    if is_set(&settings.auth.jwt_secret) && secret.len() < MIN_JWT_SECRET_BYTES {
        anyhow::bail!(
            "JWT_SECRET is {} bytes; it must be at least {MIN_JWT_SECRET_BYTES} (e.g. `openssl rand -hex 32`), \
             or unset it to let the server generate one and keep it in the database",
            secret.len()
        );
    }
    let postgres = settings
        .database
        .url
        .expose_secret()
        .trim()
        .starts_with("postgres");
    if postgres && !is_set(&settings.redis.url) && !settings.redis.allow_local_quotas {
        anyhow::bail!(
            "DATABASE_URL is Postgres but REDIS_URL is unset: every instance would count quotas and \
             rate limits on its own. Set REDIS_URL, or ALLOW_LOCAL_QUOTAS=true if only one instance runs"
        );
    }
    Ok(())
}

/// Settings that only tests may use. `search.fetch_allow` lets the page fetcher reach
/// the private addresses it names (the tests' local page servers): in production it would
/// open the fetcher to the inside of the network (a cloud's metadata address, an admin
/// port), so only a debug build, which is what tests run, starts with it.
fn refuse_test_only_settings(settings: &Settings, test_build: bool) -> anyhow::Result<()> {
    let allowed = &settings.search.fetch_allow;
    if allowed.is_empty() {
        return Ok(());
    }
    if !test_build {
        anyhow::bail!(
            "SEARCH_FETCH_ALLOW (search.fetch_allow) is for tests only and a release build refuses it: \
             it would let web search fetch pages from private addresses. Unset it"
        );
    }
    tracing::warn!(
        ?allowed,
        "search.fetch_allow: the page fetcher may reach these private addresses (tests only)"
    );
    Ok(())
}

/// `JWT_SECRET`, or one generated once and kept in the database, so every instance on
/// that database signs and accepts the same tokens. A secret an older version kept in
/// `$DATA_DIR/jwt_secret` is carried over, so tokens survive the upgrade.
pub(crate) async fn token_secret(
    settings: &Settings,
    db: &Db,
    data_dir: &Path,
    now: i64,
) -> anyhow::Result<String> {
    if is_set(&settings.auth.jwt_secret) {
        return Ok(settings.auth.jwt_secret.expose_secret().to_owned());
    }
    let legacy = std::fs::read_to_string(data_dir.join("jwt_secret"))
        .ok()
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty());
    let candidate = legacy.unwrap_or_else(|| format!("{}{}", new_token(), new_token()));
    db.shared_secret(JWT_SECRET_NAME, &candidate, now)
        .await
        .context("reading the JWT secret from the database")
}

fn describe_db(db: &Db, data_dir: &Path) -> String {
    match db {
        Db::Sqlite(..) => format!("sqlite ({})", data_dir.join("chat.db").display()),
        Db::Postgres(_) => "postgres".into(),
    }
}

/// Periodic upkeep that no request should pay for.
fn spawn_housekeeping(state: web::Data<AppState>) {
    actix_web::rt::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(60));
        loop {
            tick.tick().await;
            state.limits.shrink();
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_release_build_refuses_the_test_only_fetch_allow_list() {
        let mut settings = Settings::defaults();
        assert!(refuse_test_only_settings(&settings, false).is_ok());
        settings.search.fetch_allow = vec!["169.254.169.254:80".parse().unwrap()];
        let refused = refuse_test_only_settings(&settings, false).unwrap_err();
        assert!(refused.to_string().contains("SEARCH_FETCH_ALLOW"), "{refused}");
        // The tests' debug builds start with it.
        assert!(refuse_test_only_settings(&settings, true).is_ok());
    }
}
