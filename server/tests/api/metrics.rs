//! Prometheus metrics (docs/operations.md, "Metrics"): the built server with
//! `METRICS_BIND_ADDR` serves `/metrics` on that address, with the families and labels
//! the requests made call for, in text `promtool check metrics` accepts; without it
//! nothing listens and the API has no `/metrics`; and a real Prometheus scrapes two
//! instances on one Postgres and Redis.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::helpers::{assert_ok, binary, fresh_postgres_database, spawn_app};
use crate::model_stub;
use crate::ws::WsClient;

/// A child process (a server, Prometheus) stopped when the test ends, however it ends.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// One sample of the text format: its name, labels and value.
#[derive(Debug)]
struct Sample {
    name: String,
    labels: BTreeMap<String, String>,
    value: f64,
}

/// The samples of a scrape (our label values hold no quotes or commas).
fn samples(text: &str) -> Vec<Sample> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|line| {
            let (series, value) = line.rsplit_once(' ').expect("a sample line");
            let (name, labels) = match series.split_once('{') {
                Some((name, rest)) => {
                    let labels = rest
                        .trim_end_matches('}')
                        .split(',')
                        .filter(|p| !p.is_empty())
                        .map(|pair| {
                            let (k, v) = pair.split_once('=').expect("label=value");
                            (k.to_owned(), v.trim_matches('"').to_owned())
                        })
                        .collect();
                    (name, labels)
                }
                None => (series, BTreeMap::new()),
            };
            Sample {
                name: name.to_owned(),
                labels,
                value: value.parse().unwrap_or_else(|_| panic!("a number in {line:?}")),
            }
        })
        .collect()
}

/// The value of the one series of `name` whose labels include `labels`.
fn value(all: &[Sample], name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    let found: Vec<&Sample> = all
        .iter()
        .filter(|s| {
            s.name == name
                && labels
                    .iter()
                    .all(|(k, v)| s.labels.get(*k).map(String::as_str) == Some(*v))
        })
        .collect();
    assert!(found.len() <= 1, "several series of {name} {labels:?}: {found:?}");
    found.first().map(|s| s.value)
}

async fn scrape(metrics: &str) -> String {
    let response = reqwest::get(format!("http://{metrics}/metrics")).await.unwrap();
    assert_eq!(response.status(), 200);
    let kind = response.headers()["content-type"].to_str().unwrap().to_owned();
    assert!(kind.starts_with("text/plain; version=0.0.4"), "{kind}");
    response.text().await.unwrap()
}

/// `promtool check metrics` reads the scrape on its standard input and finds nothing to say.
fn assert_promtool_clean(text: &str) {
    let mut promtool = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool (Debian's prometheus package; `make test-deps` installs it)");
    promtool.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let out = promtool.wait_with_output().unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success() && said.trim().is_empty(),
        "promtool: {said}\n{text}"
    );
}

/// A config dir whose free plan answers with the stub's models, allows one response a
/// day and reads documents.
fn stub_config(data_dir: &Path) -> std::path::PathBuf {
    let config = data_dir.join("config");
    std::fs::create_dir_all(&config).unwrap();
    let plans = include_str!("../../../config/plans.toml")
        .replacen(
            r#"limits.responses = { day = 50 }"#,
            r#"limits.responses = { day = 1 }"#,
            1,
        )
        .replacen(
            r#"chat_models = ["gpt-4o-mini"]"#,
            r#"chat_models = ["stub", "stub-error"]"#,
            1,
        )
        .replacen(
            r#"models = { baseChatModel = "gpt-4o-mini" }"#,
            r#"models = { baseChatModel = "stub" }"#,
            1,
        )
        .replacen("documentProcessing = false", "documentProcessing = true", 1)
        .replacen("documentMaxMb = 0", "documentMaxMb = 5", 1);
    std::fs::write(config.join("plans.toml"), plans).unwrap();
    // The stub's prices: €1 and €2 per million tokens in and out.
    let models = "[default]\ncontext_tokens = 8192\n[models.stub]\ncontext_tokens = 8192\n\
                  input_price = 1.0\noutput_price = 2.0\n";
    std::fs::write(config.join("models.toml"), models).unwrap();
    config
}

fn send(client_id: &str, model: &str) -> Value {
    json!({"type": "chat.send", "clientId": client_id, "conversationId": null, "content": "Hi", "model": model})
}

/// The requests the first test makes as the seeded user: a failed answer, an answer, a
/// refused one, the conversation read back, a path no route has, a document read to its
/// end, and a demo payment.
/// Answers the conversation's id, and the tab (open, for the scrape).
async fn use_the_service(base: &str, token: &str) -> (String, WsClient) {
    let mut tab = WsClient::connect_to(base, Some(token)).await;
    tab.expect("ready").await;
    tab.send(send("c1", "stub-error")).await;
    let failed = tab.until("message.completed").await;
    assert_eq!(failed.last().unwrap()["finishReason"], "error");
    tab.send(send("c2", "stub")).await;
    assert_eq!(tab.outcome_of("c2").await, "answered");
    // The one response of the day is used (the failed one was given back).
    tab.send(send("c3", "stub")).await;
    assert_eq!(tab.outcome_of("c3").await, "limit_reached");

    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let list: Value = client
        .get(format!("{base}/api/conversations"))
        .bearer_auth(token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = list["data"][0]["_id"]
        .as_str()
        .expect("the conversation")
        .to_owned();
    let one = client
        .get(format!("{base}/api/conversations/{id}"))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    assert_eq!(one.status(), 200);
    let nothing = client
        .get(format!("{base}/api/no-such-thing"))
        .send()
        .await
        .unwrap();
    assert_eq!(nothing.status(), 404);

    let notes = b"The lighthouse keeper's notes: the lamp is lit at dusk.".to_vec();
    let form = reqwest::multipart::Form::new().part(
        "file",
        reqwest::multipart::Part::bytes(notes).file_name("notes.txt"),
    );
    let uploaded = client
        .post(format!("{base}/api/files"))
        .bearer_auth(token)
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert_eq!(uploaded.status(), 201);
    loop {
        let frame = tab.next().await.expect("the tab stays open");
        if frame["type"] == "file.updated" && frame["file"]["status"] != "processing" {
            assert_eq!(frame["file"]["status"], "ready", "{frame}");
            break;
        }
    }

    let billing = json!({"billingType": "private", "billingInfo": {"name": "Payer", "address": "Fő utca 1",
                         "city": "Budapest", "postalCode": "1011", "country": "HU"}});
    let put = |path: &str, body: Value| {
        client
            .put(format!("{base}{path}"))
            .bearer_auth(token)
            .json(&body)
            .send()
    };
    assert_ok(put("/api/settings/billing-info", billing).await.unwrap()).await;
    let change = json!({"planType": "base", "currency": "EUR"});
    let started = assert_ok(put("/api/subscription/change", change).await.unwrap()).await;
    let payment = started["payment"]["_id"].as_str().expect("a pending payment");
    let paid = client
        .post(format!("{base}/api/payments/demo/{payment}/pay"))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    assert_eq!(paid.status(), 303);
    (id, tab)
}

#[actix_web::test]
async fn the_server_serves_its_metrics_on_their_own_address_in_text_promtool_accepts() {
    let (model_url, _stub) = model_stub::start();
    let data_dir = tempfile::tempdir().unwrap();
    let token = binary::seed_user(data_dir.path(), "metrics", "free");
    let metrics = format!("127.0.0.1:{}", free_port());
    let config = stub_config(data_dir.path());
    let env = [
        ("METRICS_BIND_ADDR", metrics.as_str()),
        ("CONFIG_DIR", config.to_str().unwrap()),
        ("OPENAI_API_KEY", "test-key"),
        ("OPENAI_BASE_URL", model_url.as_str()),
        // Documents ranked by BM25: no embeddings asked of the stub.
        ("OPENAI_EMBEDDINGS", "false"),
    ];
    let (server, base) = binary::serve(data_dir.path(), &env, Stdio::null()).await;
    let _server = Running(server);
    // The API does not serve them.
    let api = reqwest::get(format!("{base}/metrics")).await.unwrap();
    assert!(!api.text().await.unwrap().contains("chat_http_requests_total"));

    let (conversation, _tab) = use_the_service(&base, &token).await;
    let text = scrape(&metrics).await;
    let all = samples(&text);
    let v = |name: &str, labels: &[(&str, &str)]| value(&all, name, labels);

    // Requests by route pattern, never the raw path; a path no route has is `unmatched`.
    let by = |method, route, status| [("method", method), ("route", route), ("status", status)];
    assert_eq!(
        v(
            "chat_http_requests_total",
            &by("GET", "/api/conversations/{id}", "200")
        ),
        Some(1.0)
    );
    assert_eq!(
        v("chat_http_requests_total", &by("GET", "/api/health", "200")).map(|n| n >= 1.0),
        Some(true)
    );
    assert_eq!(
        v("chat_http_requests_total", &by("GET", "unmatched", "404")),
        Some(1.0)
    );
    assert_eq!(
        v("chat_http_requests_total", &by("GET", "/api/ws", "101")),
        Some(1.0)
    );
    assert_eq!(
        v(
            "chat_http_request_duration_seconds_count",
            &by("GET", "/api/conversations/{id}", "200")
        ),
        Some(1.0)
    );
    assert!(!text.contains(&conversation), "a raw path became a label");

    // The tab, still open; no answer streaming any more.
    assert_eq!(v("chat_websockets_open", &[]), Some(1.0));
    assert_eq!(v("chat_tabs_open", &[]), Some(1.0));
    assert_eq!(v("chat_answers_streaming", &[]), Some(0.0));

    // The answers by model: the failed one and the good one ran; the refused one never started.
    assert_eq!(
        v(
            "chat_model_errors_total",
            &[("model", "stub-error"), ("kind", "upstream")]
        ),
        Some(1.0)
    );
    assert_eq!(
        v("chat_answer_duration_seconds_count", &[("model", "stub-error")]),
        Some(1.0)
    );
    assert_eq!(
        v("chat_answer_duration_seconds_count", &[("model", "stub")]),
        Some(1.0)
    );
    assert_eq!(
        v(
            "chat_model_time_to_first_token_seconds_count",
            &[("model", "stub")]
        ),
        Some(1.0)
    );
    assert_eq!(
        v(
            "chat_model_time_to_first_token_seconds_count",
            &[("model", "stub-error")]
        ),
        None
    );
    let ttft = v("chat_model_time_to_first_token_seconds_sum", &[("model", "stub")]).unwrap();
    assert!(ttft > 0.0 && ttft < 10.0, "{ttft}");

    // The good answer's tokens as the stub reported them, and their cost in billionths
    // of a euro (its title's are counted apart, under `kind="title"`).
    let (input, output) = crate::model_stub::STUB_USAGE;
    let tokens = |direction| {
        v(
            "chat_model_tokens_total",
            &[("model", "stub"), ("kind", "answer"), ("direction", direction)],
        )
    };
    assert_eq!(
        (tokens("input"), tokens("output")),
        (Some(input as f64), Some(output as f64))
    );
    assert_eq!(
        v(
            "chat_model_cost_nanoeuros_total",
            &[("model", "stub"), ("kind", "answer")]
        ),
        Some((input * 1000 + output * 2000) as f64)
    );

    // Quota checks: two allowed (the failed answer's unit was given back), one refused.
    let checks = |decision| {
        v(
            "chat_quota_checks_total",
            &[("service", "responses"), ("decision", decision)],
        )
    };
    assert_eq!((checks("allowed"), checks("refused")), (Some(2.0), Some(1.0)));

    // Storage and payments.
    assert!(v("chat_db_call_duration_seconds_count", &[("kind", "query")]).unwrap() > 0.0);
    assert!(v("chat_db_call_duration_seconds_count", &[("kind", "write")]).unwrap() > 0.0);
    assert_eq!(v("chat_db_pool_max_connections", &[]), Some(16.0));
    let idle = v("chat_db_pool_connections", &[("state", "idle")]).unwrap();
    let in_use = v("chat_db_pool_connections", &[("state", "in_use")]).unwrap();
    assert!(idle + in_use >= 1.0, "{idle} {in_use}");
    assert_eq!(v("chat_payments_total", &[("outcome", "succeeded")]), Some(1.0));
    // The document was counted while it was read, and is no longer.
    assert_eq!(v("chat_documents_processing", &[]), Some(0.0));
    assert_eq!(
        v("chat_http_requests_total", &by("POST", "/api/files", "201")),
        Some(1.0)
    );
    // Described, so the text says what each family is.
    assert!(
        text.contains("# HELP chat_quota_checks_total Quota checks"),
        "{text}"
    );
    assert!(text.contains("# TYPE chat_model_time_to_first_token_seconds histogram"));

    assert_promtool_clean(&text);
}

#[actix_web::test]
async fn stripe_webhooks_are_counted_by_outcome() {
    let data_dir = tempfile::tempdir().unwrap();
    let metrics = format!("127.0.0.1:{}", free_port());
    let secret = "whsec_metrics";
    let env = [
        ("METRICS_BIND_ADDR", metrics.as_str()),
        ("STRIPE_SECRET_KEY", "sk_test_metrics"),
        ("STRIPE_PUBLISHABLE_KEY", "pk_test_metrics"),
        ("STRIPE_WEBHOOK_SECRET", secret),
        // No Stripe API is needed to verify and apply these events; nothing listens here.
        ("STRIPE_API_BASE", "http://127.0.0.1:1"),
    ];
    let (server, base) = binary::serve(data_dir.path(), &env, Stdio::null()).await;
    let _server = Running(server);
    let client = reqwest::Client::new();
    let deliver = |payload: String, signature: Option<String>| {
        let mut request = client
            .post(format!("{base}/api/payments/stripe/webhook"))
            .header("Content-Type", "application/json")
            .body(payload);
        if let Some(signature) = signature {
            request = request.header("Stripe-Signature", signature);
        }
        request.send()
    };
    let now = chrono::Utc::now().timestamp();
    let signed = |payload: &str| Some(crate::stripe::signature(secret, payload, now));

    let unsigned = deliver("{}".into(), None).await.unwrap();
    assert_eq!(unsigned.status(), 400);
    let garbled = deliver("not json".into(), signed("not json")).await.unwrap();
    assert_eq!(garbled.status(), 400);
    let unused = json!({"id": "evt_unused", "type": "balance.available", "data": {"object": {}}}).to_string();
    assert_eq!(
        deliver(unused.clone(), signed(&unused)).await.unwrap().status(),
        200
    );
    let ended = json!({"id": "evt_ended", "type": "customer.subscription.deleted",
                       "data": {"object": {"id": "sub_nobody"}}})
    .to_string();
    assert_eq!(
        deliver(ended.clone(), signed(&ended)).await.unwrap().status(),
        200
    );
    // Delivered again: applied once.
    assert_eq!(
        deliver(ended.clone(), signed(&ended)).await.unwrap().status(),
        200
    );

    let text = scrape(&metrics).await;
    let all = samples(&text);
    let webhooks = |outcome| value(&all, "chat_webhooks_total", &[("outcome", outcome)]);
    assert_eq!(
        (
            webhooks("rejected"),
            webhooks("ignored"),
            webhooks("handled"),
            webhooks("failed")
        ),
        (Some(2.0), Some(2.0), Some(1.0), None)
    );
    assert_promtool_clean(&text);
}

#[actix_web::test]
async fn metrics_are_off_by_default() {
    let settings =
        chat_server::config::Settings::load_with(|k| (k == "CONFIG_DIR").then(|| "/nonexistent".into()))
            .unwrap();
    assert!(!settings.metrics.enabled());
    // The API has no `/metrics` (the path falls to the web client's pages).
    let app = spawn_app().await;
    assert!(!app.state.settings.metrics.enabled());
    let client = &app.client;
    client.get(app.url("/api/health")).send().await.unwrap();
    let page = client
        .get(app.url("/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(!page.contains("chat_http_requests_total"), "{page}");

    // The built server started without METRICS_BIND_ADDR says it listens for metrics nowhere.
    let data_dir = tempfile::tempdir().unwrap();
    let log = std::fs::File::create(data_dir.path().join("server.log")).unwrap();
    let (server, _) = binary::serve(data_dir.path(), &[("RUST_LOG", "info")], log.into()).await;
    let server = Running(server);
    let started = Instant::now();
    let line = loop {
        let log = std::fs::read_to_string(data_dir.path().join("server.log")).unwrap();
        // The server's own line (actix's says "listening on" too).
        if let Some(line) = log
            .lines()
            .map(without_colours)
            .find(|l| l.contains("listening port="))
        {
            break line;
        }
        assert!(started.elapsed() < Duration::from_secs(10), "{log}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(line.contains("metrics=None"), "{line}");
    drop(server);
}

/// A log line without its terminal colour codes.
fn without_colours(line: &str) -> String {
    let mut out = String::new();
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            chars.by_ref().find(|c| *c == 'm');
        } else {
            out.push(c);
        }
    }
    out
}

/// Polls Prometheus's query API until `check` accepts the result of `query`.
async fn until_prometheus_shows(api: &str, query: &str, check: impl Fn(&[Value]) -> bool) {
    let client = reqwest::Client::new();
    let started = Instant::now();
    let mut last = Value::Null;
    while started.elapsed() < Duration::from_secs(60) {
        if let Ok(response) = client
            .get(format!("{api}/api/v1/query"))
            .query(&[("query", query)])
            .send()
            .await
        {
            if let Ok(body) = response.json::<Value>().await {
                if body["data"]["result"].as_array().is_some_and(|r| check(r)) {
                    return;
                }
                last = body;
            }
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    panic!("Prometheus never showed what {query} should: {last}");
}

#[actix_web::test]
async fn a_real_prometheus_scrapes_two_instances_on_one_postgres_and_redis() {
    let (Ok(database), Ok(redis)) = (
        std::env::var("TEST_DATABASE_URL"),
        std::env::var("TEST_REDIS_URL"),
    ) else {
        eprintln!(
            "SKIPPED a_real_prometheus_scrapes_two_instances: set TEST_DATABASE_URL and TEST_REDIS_URL"
        );
        return;
    };
    let database = fresh_postgres_database(&database).await;
    let prefix = format!("test:{}:", uuid::Uuid::new_v4().simple());
    let mut servers = Vec::new();
    let mut targets = Vec::new();
    for _ in 0..2 {
        let data_dir = tempfile::tempdir().unwrap();
        let metrics = format!("127.0.0.1:{}", free_port());
        let env = [
            ("METRICS_BIND_ADDR", metrics.as_str()),
            ("DATABASE_URL", database.as_str()),
            ("REDIS_URL", redis.as_str()),
            ("REDIS_PREFIX", prefix.as_str()),
        ];
        let (server, _) = binary::serve(data_dir.path(), &env, Stdio::null()).await;
        servers.push((Running(server), data_dir));
        targets.push(metrics);
    }
    // On Postgres and Redis the instance times its Redis calls too, and promtool accepts it.
    let text = scrape(&targets[0]).await;
    assert!(
        text.contains("chat_redis_command_duration_seconds_count{outcome=\"ok\"}"),
        "{text}"
    );
    assert_promtool_clean(&text);

    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("prometheus.yml");
    let quoted: Vec<String> = targets.iter().map(|t| format!("'{t}'")).collect();
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: chat\n    static_configs:\n      - targets: [{}]\n",
            quoted.join(", ")
        ),
    )
    .unwrap();
    let listen = format!("127.0.0.1:{}", free_port());
    let prometheus = Command::new("prometheus")
        .arg(format!("--config.file={}", config.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.path().join("data").display()
        ))
        .arg(format!("--web.listen-address={listen}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("prometheus (Debian's prometheus package; `make test-deps` installs it)");
    let _prometheus = Running(prometheus);
    let api = format!("http://{listen}");
    let both = |result: &[Value]| {
        let mut instances: Vec<&str> = result
            .iter()
            .filter_map(|r| r["metric"]["instance"].as_str())
            .collect();
        instances.sort_unstable();
        let mut expected: Vec<&str> = targets.iter().map(String::as_str).collect();
        expected.sort_unstable();
        instances == expected
    };
    until_prometheus_shows(&api, "up == 1", both).await;
    // The scrapes themselves are no API requests: the health checks made at start are.
    until_prometheus_shows(&api, "count by (instance) (chat_http_requests_total)", both).await;
    until_prometheus_shows(&api, "sum by (instance) (chat_db_pool_max_connections)", both).await;
}

/// Every query of docs/grafana-dashboard.json.
fn dashboard_queries() -> Vec<String> {
    let dashboard: Value =
        serde_json::from_str(include_str!("../../../docs/grafana-dashboard.json")).unwrap();
    let mut queries = Vec::new();
    for panel in dashboard["panels"].as_array().unwrap() {
        for target in panel["targets"].as_array().into_iter().flatten() {
            queries.push(target["expr"].as_str().expect("a query").to_owned());
        }
    }
    queries
}

/// The metric names a query uses (`chat_…`), histogram series named by their family.
fn metrics_in(query: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = query;
    while let Some(at) = rest.find("chat_") {
        let name: String = rest[at..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        rest = &rest[at + name.len()..];
        names.push(name);
    }
    names
}

#[test]
fn the_dashboard_shows_every_metric_the_server_describes_and_no_other() {
    use chat_server::metrics::{Kind, ALL};
    let described = |name: &str| {
        ALL.iter().any(|m| {
            m.name == name
                || (m.kind == Kind::Histogram
                    && ["_bucket", "_sum", "_count"]
                        .iter()
                        .any(|s| name == format!("{}{s}", m.name)))
        })
    };
    let queries = dashboard_queries();
    assert!(queries.len() > 10);
    let used: Vec<String> = queries.iter().flat_map(|q| metrics_in(q)).collect();
    for name in &used {
        assert!(
            described(name),
            "the dashboard uses {name}, which the server does not describe"
        );
    }
    for m in ALL {
        assert!(
            used.iter().any(|u| u.starts_with(m.name)),
            "the dashboard has no panel for {}",
            m.name
        );
    }
    // Each query is PromQL Prometheus accepts: checked as recording rules by promtool
    // (Grafana's `$__rate_interval` stood in for by a fixed range).
    let dir = tempfile::tempdir().unwrap();
    let rules: Vec<String> = queries
        .iter()
        .enumerate()
        .map(|(i, q)| {
            let expr = q.replace("$__rate_interval", "5m").replace('\'', "''");
            format!("      - record: chat:dashboard:{i}\n        expr: '{expr}'\n")
        })
        .collect();
    let file = dir.path().join("rules.yml");
    std::fs::write(
        &file,
        format!("groups:\n  - name: dashboard\n    rules:\n{}", rules.concat()),
    )
    .unwrap();
    let out = Command::new("promtool")
        .args(["check", "rules"])
        .arg(&file)
        .output()
        .expect("promtool (Debian's prometheus package; `make test-deps` installs it)");
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
