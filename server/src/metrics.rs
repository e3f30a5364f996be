//! Prometheus metrics: every metric of the service is named and described here
//! ([`ALL`]), with the listener that serves them (`/metrics` on `METRICS_BIND_ADDR`, apart
//! from the API) and the HTTP middleware that counts requests.
//!
//! Parts record through the `metrics` facade's macros (re-exported here, so
//! `crate::metrics::counter!(crate::metrics::PAYMENTS, …)` names both). Those macros do
//! nothing until a recorder is installed, and one is installed only when the listener is
//! configured: with metrics off (the default) a recording point costs a look at an unset
//! global, some 5 to 20 ns with literal labels (no allocation: keep the labels of hot
//! paths literal) and under 100 ns with a label made at run time.
//! The actors record theirs too (`chat_actors::metrics` names them); they are described
//! here with the rest.
//!
//! Labels are small closed sets: a route is actix's pattern (`/api/conversations/{id}`),
//! never the raw path, and a method outside the standard ones counts as `other`.

use std::net::TcpListener;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use actix_web::body::MessageBody;
use actix_web::dev::{Server, ServiceRequest, ServiceResponse};
use actix_web::http::Method;
use actix_web::middleware::Next;
use actix_web::{web, App, HttpResponse, HttpServer};
use anyhow::Context;
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

pub use ::metrics::{counter, gauge, histogram};
pub use chat_actors::metrics::{
    ANSWERS_STREAMING, ANSWER_DURATION, MODEL_ERRORS, QUOTA_CHECKS, TABS_OPEN, TIME_TO_FIRST_TOKEN,
    WEBSOCKETS_OPEN,
};

/// Counter (labels `method`, `route`, `status`): HTTP requests answered.
pub const HTTP_REQUESTS: &str = "chat_http_requests_total";
/// Histogram (labels `method`, `route`, `status`): from a request's arrival to its
/// response's head (a websocket's: its upgrade).
pub const HTTP_DURATION: &str = "chat_http_request_duration_seconds";
/// Histogram (label `kind`: `query` on the pool, `write` through the SQLite writer or a
/// Postgres transaction): one storage call, waiting for a connection included.
pub const DB_CALL_DURATION: &str = "chat_db_call_duration_seconds";
/// Gauge (label `state`: `idle`, `in_use`): the pool's connections, read at each scrape.
pub const DB_POOL_CONNECTIONS: &str = "chat_db_pool_connections";
/// Gauge: the most connections the pool may open.
pub const DB_POOL_MAX_CONNECTIONS: &str = "chat_db_pool_max_connections";
/// Histogram (label `outcome`: `ok`, `error`): one Redis command or pipeline.
pub const REDIS_COMMAND_DURATION: &str = "chat_redis_command_duration_seconds";
/// Counter (label `outcome`: `succeeded`, `failed`): payments, counted once as their
/// outcome is stored (`db::payments::count_payment`).
pub const PAYMENTS: &str = "chat_payments_total";
/// Counter (label `outcome`: `handled`, `ignored`, `rejected`, `failed`): Stripe's webhook
/// calls (`billing::stripe_events`).
pub const WEBHOOKS: &str = "chat_webhooks_total";
/// Gauge: uploaded documents being read and indexed on this instance now.
pub const DOCUMENTS_PROCESSING: &str = "chat_documents_processing";
/// Counter (labels `model`, `kind`, `direction`: `input`, `output`): tokens the models
/// used. Recorded by the token accounting (`metering.rs`).
pub const MODEL_TOKENS: &str = "chat_model_tokens_total";
/// Counter (labels `model`, `kind`): what the model calls cost at the catalogue's
/// prices, in billionths of a euro (a counter counts in whole numbers: the same unit as
/// `model_calls.cost_nanos`). Recorded by the token accounting (`metering.rs`).
pub const MODEL_COST: &str = "chat_model_cost_nanoeuros_total";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Counter,
    Gauge,
    Histogram,
}

/// A metric of the service: what `/metrics` says of it, and its labels (for the docs).
#[derive(Debug)]
pub struct Metric {
    pub name: &'static str,
    pub kind: Kind,
    pub labels: &'static [&'static str],
    pub help: &'static str,
}

const fn metric(
    name: &'static str,
    kind: Kind,
    labels: &'static [&'static str],
    help: &'static str,
) -> Metric {
    Metric {
        name,
        kind,
        labels,
        help,
    }
}

/// Every metric the service records (docs/operations.md lists the same).
pub const ALL: &[Metric] = &[
    metric(
        HTTP_REQUESTS,
        Kind::Counter,
        &["method", "route", "status"],
        "HTTP requests answered, by method, route pattern and status.",
    ),
    metric(
        HTTP_DURATION,
        Kind::Histogram,
        &["method", "route", "status"],
        "Time from an HTTP request's arrival to its response's head, in seconds.",
    ),
    metric(
        WEBSOCKETS_OPEN,
        Kind::Gauge,
        &[],
        "Websockets open on this instance.",
    ),
    metric(
        TABS_OPEN,
        Kind::Gauge,
        &[],
        "Authenticated tabs joined on this instance.",
    ),
    metric(
        ANSWERS_STREAMING,
        Kind::Gauge,
        &[],
        "Answers streaming on this instance now.",
    ),
    metric(
        TIME_TO_FIRST_TOKEN,
        Kind::Histogram,
        &["model"],
        "Time from an answer's start to its first words, in seconds.",
    ),
    metric(
        ANSWER_DURATION,
        Kind::Histogram,
        &["model"],
        "Time from an answer's start to its end (finished, cancelled or failed), in seconds.",
    ),
    metric(
        MODEL_ERRORS,
        Kind::Counter,
        &["model", "kind"],
        "Answers the model failed, by kind: timeout, upstream or refused.",
    ),
    metric(
        MODEL_TOKENS,
        Kind::Counter,
        &["model", "kind", "direction"],
        "Tokens the model calls used, by model, kind of call and direction (input or output).",
    ),
    metric(
        MODEL_COST,
        Kind::Counter,
        &["model", "kind"],
        "What the model calls cost at the catalogue's prices, in billionths of a euro.",
    ),
    metric(
        QUOTA_CHECKS,
        Kind::Counter,
        &["service", "decision"],
        "Quota checks by service and decision: allowed, refused or failed.",
    ),
    metric(
        DB_CALL_DURATION,
        Kind::Histogram,
        &["kind"],
        "Time of one storage call (a query, or a write), waiting for a connection included, in seconds.",
    ),
    metric(
        DB_POOL_CONNECTIONS,
        Kind::Gauge,
        &["state"],
        "The database pool's open connections, idle or in use.",
    ),
    metric(
        DB_POOL_MAX_CONNECTIONS,
        Kind::Gauge,
        &[],
        "The most connections the database pool may open.",
    ),
    metric(
        REDIS_COMMAND_DURATION,
        Kind::Histogram,
        &["outcome"],
        "Time of one Redis command or pipeline, in seconds.",
    ),
    metric(
        PAYMENTS,
        Kind::Counter,
        &["outcome"],
        "Payments by outcome: succeeded or failed.",
    ),
    metric(
        WEBHOOKS,
        Kind::Counter,
        &["outcome"],
        "Payment provider webhook calls by outcome: handled, ignored, rejected or failed.",
    ),
    metric(
        DOCUMENTS_PROCESSING,
        Kind::Gauge,
        &[],
        "Uploaded documents being read and indexed on this instance now.",
    ),
];

/// Buckets of the quick histograms (HTTP, storage, Redis), in seconds.
const QUICK_BUCKETS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];
/// Buckets of the model's histograms: a first token in a fraction of a second to an
/// answer of minutes.
const MODEL_BUCKETS: &[f64] = &[
    0.1, 0.25, 0.5, 1.0, 2.0, 3.0, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0, 300.0,
];
/// How often histograms' samples are folded in when nothing scrapes.
const UPKEEP_EVERY: Duration = Duration::from_secs(5);

/// The process's recorder, installed on first use (the facade allows one per process;
/// tests run several servers in one).
fn recorder() -> anyhow::Result<PrometheusHandle> {
    static HANDLE: Mutex<Option<PrometheusHandle>> = Mutex::new(None);
    let mut installed = HANDLE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(handle) = &*installed {
        return Ok(handle.clone());
    }
    let mut builder = PrometheusBuilder::new().set_buckets(QUICK_BUCKETS)?;
    for name in [TIME_TO_FIRST_TOKEN, ANSWER_DURATION] {
        builder = builder.set_buckets_for_metric(Matcher::Full(name.to_owned()), MODEL_BUCKETS)?;
    }
    let handle = builder
        .install_recorder()
        .context("installing the metrics recorder")?;
    for m in ALL {
        let (name, help) = (m.name, m.help);
        match m.kind {
            Kind::Counter => ::metrics::describe_counter!(name, help),
            Kind::Gauge => ::metrics::describe_gauge!(name, help),
            Kind::Histogram => ::metrics::describe_histogram!(name, help),
        }
    }
    *installed = Some(handle.clone());
    Ok(handle)
}

/// Holds a gauge one higher while it lives: for work in progress, counted down however
/// it ends (an early return, a panic).
pub struct InProgress(&'static str);

impl InProgress {
    pub fn start(gauge: &'static str) -> InProgress {
        gauge!(gauge).increment(1);
        InProgress(gauge)
    }
}

impl Drop for InProgress {
    fn drop(&mut self) {
        gauge!(self.0).decrement(1);
    }
}

/// The metrics listener, started: where it listens and the server to run.
pub struct Listener {
    pub addr: std::net::SocketAddr,
    pub server: Server,
}

/// Installs the recorder and binds `/metrics` on `bind_addr`. `on_scrape` runs before
/// each rendering (it sets gauges read from elsewhere, such as the database pool's).
pub fn listen(bind_addr: &str, on_scrape: impl Fn() + Send + Sync + 'static) -> anyhow::Result<Listener> {
    let handle = recorder()?;
    let listener =
        TcpListener::bind(bind_addr).with_context(|| format!("binding METRICS_BIND_ADDR {bind_addr}"))?;
    let addr = listener.local_addr()?;
    let upkeep = handle.clone();
    actix_web::rt::spawn(async move {
        let mut tick = tokio::time::interval(UPKEEP_EVERY);
        loop {
            tick.tick().await;
            upkeep.run_upkeep();
        }
    });
    let scrape = web::Data::new(Scrape {
        handle,
        on_scrape: Box::new(on_scrape),
    });
    let server = HttpServer::new(move || {
        App::new()
            .app_data(scrape.clone())
            .route("/metrics", web::get().to(render))
    })
    // Scrapes are rare and small: one thread.
    .workers(1)
    .disable_signals()
    .shutdown_timeout(1)
    .listen(listener)?
    .run();
    Ok(Listener { addr, server })
}

struct Scrape {
    handle: PrometheusHandle,
    on_scrape: Box<dyn Fn() + Send + Sync>,
}

async fn render(scrape: web::Data<Scrape>) -> HttpResponse {
    (scrape.on_scrape)();
    HttpResponse::Ok()
        .content_type("text/plain; version=0.0.4; charset=utf-8")
        .body(scrape.handle.render())
}

/// Counts each request and its time by method, route pattern and status. Wrapped only
/// when metrics are on: with them off, `Condition` passes each request by (one branch).
pub async fn middleware(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let started = Instant::now();
    let method = method_label(req.method());
    let result = next.call(req).await;
    let (status, route) = match &result {
        Ok(response) => (response.status(), response.request().match_pattern()),
        Err(e) => (e.as_response_error().status_code(), None),
    };
    let route = route.unwrap_or_else(|| "unmatched".to_owned());
    let status = status.as_str().to_owned();
    let labels = [
        ("method", method.to_owned()),
        ("route", route),
        ("status", status),
    ];
    counter!(HTTP_REQUESTS, &labels).increment(1);
    histogram!(HTTP_DURATION, &labels).record(started.elapsed());
    result
}

/// The method as a label: the standard ones by name, anything else `other` (a client
/// may send any token as a method).
fn method_label(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::PATCH => "PATCH",
        Method::DELETE => "DELETE",
        Method::HEAD => "HEAD",
        Method::OPTIONS => "OPTIONS",
        _ => "other",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_metric_is_named_once_and_in_prometheus_style() {
        let mut names: Vec<_> = ALL.iter().map(|m| m.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ALL.len(), "a metric is listed twice");
        for m in ALL {
            assert!(m.name.starts_with("chat_"), "{}", m.name);
            assert_eq!(m.kind == Kind::Counter, m.name.ends_with("_total"), "{}", m.name);
            if m.kind == Kind::Histogram {
                assert!(m.name.ends_with("_seconds"), "{}", m.name);
            }
        }
    }

    #[test]
    fn the_operations_guide_lists_every_metric_with_its_labels() {
        let guide = include_str!("../../docs/operations.md");
        for m in ALL {
            let row = format!("| `{}` |", m.name);
            let line = guide
                .lines()
                .find(|l| l.starts_with(&row))
                .unwrap_or_else(|| panic!("docs/operations.md lacks {}", m.name));
            for label in m.labels {
                assert!(
                    line.contains(&format!("`{label}`")),
                    "{line} lacks the label {label}"
                );
            }
        }
    }

    #[test]
    fn unusual_methods_share_one_label() {
        assert_eq!(method_label(&Method::GET), "GET");
        assert_eq!(method_label(&Method::from_bytes(b"BREW").unwrap()), "other");
    }
}
