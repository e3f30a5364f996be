//! Faults against real services: a model that hangs or never stops, Redis paused or
//! gone (a private `redis-server`, so other tests keep the shared one), a send whose
//! rows cannot all be written, a Postgres restart (a private cluster) and a graceful
//! stop. Tests that need a tool that is missing say so and pass.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use chat_server::config::Settings;
use chat_server::db::Db;
use secrecy::SecretString;
use serde_json::{json, Value};

use crate::helpers::{assert_error, binary, spawn_app_with, TestApp, TestUser};
use crate::model_stub::{self, ModelStub};
use crate::ws::{joined_deltas, WsClient};

fn send(client_id: &str, conversation_id: Option<&Value>, content: &str) -> Value {
    json!({"type": "chat.send", "clientId": client_id, "conversationId": conversation_id, "content": content})
}

fn send_with_model(client_id: &str, content: &str, model: &str) -> Value {
    let mut frame = send(client_id, None, content);
    frame["model"] = json!(model);
    frame
}

fn skip(test: &str, why: &str) {
    eprintln!("SKIPPED {test}: {why}");
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn on_path(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

async fn responses_used(app: &TestApp, user: &TestUser) -> u64 {
    let usage = app.state.quotas.usage(&user.id).await.unwrap();
    usage.limit_info.services.responses.daily.used.into()
}

/// Sends until an answer completes (or `limit` passes); the frames of the last try.
async fn send_until_answered(tab: &mut WsClient, frame: Value, limit: Duration) -> Vec<Value> {
    let started = Instant::now();
    loop {
        tab.send(frame.clone()).await;
        let frames = loop {
            let f = tab.next().await.expect("the socket stays open");
            let kind = f["type"].as_str().unwrap_or_default().to_owned();
            let last = kind == "error" || kind == "message.completed";
            if last {
                break vec![f];
            }
        };
        if frames[0]["type"] == "message.completed" || started.elapsed() > limit {
            return frames;
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

/// The answer is stored as interrupted (an error with `finishReason: "interrupted"`) with
/// exactly `text`.
async fn assert_stored_interrupted(app: &TestApp, answer_id: &Value, text: &str) {
    let stored = app
        .state
        .db
        .message(answer_id.as_str().unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (
            stored.status.as_str(),
            stored.finish_reason.map(|f| f.as_str()),
            stored.content.as_str()
        ),
        ("error", Some("interrupted"), text)
    );
}

// ---- models ----------------------------------------------------------------------------

/// A config dir whose free plan has every stub mode, and the stub: its URL and itself.
fn stub_config() -> (std::path::PathBuf, String, ModelStub) {
    let (base_url, stub) = model_stub::start();
    let config = tempfile::tempdir().unwrap().keep();
    let plans = include_str!("../../../config/plans.toml")
        .replace(
            r#"chat_models = ["gpt-4o-mini"]"#,
            r#"chat_models = ["stub", "stub-hang", "stub-trickle"]"#,
        )
        .replace(
            r#"models = { baseChatModel = "gpt-4o-mini" }"#,
            r#"models = { baseChatModel = "stub" }"#,
        );
    std::fs::write(config.join("plans.toml"), plans).unwrap();
    (config, base_url, stub)
}

/// A server whose model is the stub, with every stub mode on the free plan.
async fn stub_app(configure: impl FnOnce(&mut Settings)) -> (TestApp, ModelStub) {
    let (config, base_url, stub) = stub_config();
    let app = spawn_app_with(move |s| {
        s.config_dir = config;
        s.model.openai_api_key = SecretString::from("test-key");
        s.model.openai_base_url = base_url;
        s.chat.batch_ms = 10;
        configure(s);
    })
    .await;
    (app, stub)
}

#[actix_web::test]
async fn a_model_that_trickles_forever_is_cut_off_at_the_total_limit_and_counts_what_it_delivered() {
    let (app, stub) = stub_app(|s| {
        s.model.timeout_secs = 10;
        s.model.total_timeout_secs = 2;
        s.model.max_tokens = 777;
    })
    .await;
    let ann = app.register_ann().await;
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;
    let started = Instant::now();
    tab.send(send_with_model("t1", "Talk forever", "stub-trickle"))
        .await;
    let frames = tab.until("message.completed").await;
    let completed = frames.last().unwrap();
    assert_eq!(completed["finishReason"], json!("error"), "{completed}");
    assert!(started.elapsed() < Duration::from_secs(5));
    // What came is kept.
    let answer_id = completed["message"]["_id"].clone();
    let text = joined_deltas(&frames, &answer_id, 0);
    assert!(text.starts_with("tick0 tick1 "), "{text}");
    assert_eq!(completed["message"]["content"], json!(text));
    let error = tab.expect("error").await;
    assert_eq!(
        (&error["code"], &error["clientId"]),
        (&json!("model_error"), &json!("t1"))
    );
    // The tab got text: the answer counts (an endless answer cut off is not free).
    assert_eq!(responses_used(&app, &ann).await, 1);
    let stored = app
        .state
        .db
        .message(answer_id.as_str().unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (stored.status.as_str(), stored.content.as_str()),
        ("error", text.as_str())
    );
    // The configured token limit went to the model.
    let requests = stub.requests.lock().unwrap().clone();
    let streamed = requests.iter().find(|r| r["stream"] == json!(true)).unwrap();
    assert_eq!(streamed["max_completion_tokens"], json!(777), "{streamed}");
}

#[actix_web::test]
async fn a_model_that_sends_headers_and_never_a_chunk_ends_with_model_error_and_the_unit_back() {
    let (app, _stub) = stub_app(|s| {
        s.model.timeout_secs = 1;
        s.model.total_timeout_secs = 300;
    })
    .await;
    let ann = app.register_ann().await;
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;
    tab.send(send_with_model("h1", "Hello?", "stub-hang")).await;
    let frames = tab.until("message.completed").await;
    let completed = frames.last().unwrap();
    assert_eq!(completed["finishReason"], json!("error"), "{completed}");
    assert_eq!(completed["message"]["content"], json!(""));
    assert_eq!(tab.expect("error").await["code"], json!("model_error"));
    assert_eq!(responses_used(&app, &ann).await, 0);
    // The server goes on: the next answer streams.
    let frames = tab.until("usage.updated").await;
    assert!(frames.iter().all(|f| f["type"] != "error"), "{frames:?}");
    tab.send(send("h2", None, "Hello again")).await;
    let completed = tab.until("message.completed").await.pop().unwrap();
    assert_eq!(completed["finishReason"], json!("stop"));
}

#[actix_web::test]
async fn a_cancel_after_the_model_was_asked_counts_the_answer_even_before_its_first_word() {
    let (app, stub) = stub_app(|s| {
        s.model.timeout_secs = 30;
        s.model.total_timeout_secs = 300;
    })
    .await;
    let ann = app.register_ann().await;
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;
    // A long question (within the window of a model not in models.toml): the provider
    // bills its tokens as soon as it is sent.
    let question = "Why? ".repeat(1000);
    tab.send(send_with_model("c1", &question, "stub-hang")).await;
    let conversation = tab.expect("conversation.created").await["conversation"]["_id"].clone();
    let asked = || {
        stub.requests
            .lock()
            .unwrap()
            .iter()
            .any(|r| r["stream"] == json!(true))
    };
    for _ in 0..100 {
        if asked() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(asked(), "the model was never asked");
    tab.send(json!({"type": "chat.cancel", "conversationId": conversation}))
        .await;
    let completed = tab.until("message.completed").await.pop().unwrap();
    assert_eq!(completed["finishReason"], json!("cancelled"), "{completed}");
    assert_eq!(completed["message"]["content"], json!(""));
    // No word came, but the model was asked with the whole question: the answer counts.
    assert_eq!(responses_used(&app, &ann).await, 1);
}

// ---- Redis -----------------------------------------------------------------------------

/// A `redis-server` of this test alone, so pausing or killing it disturbs no one else.
struct PrivateRedis {
    port: u16,
    child: Option<Child>,
}

impl PrivateRedis {
    async fn start(test: &str) -> Option<PrivateRedis> {
        if !on_path("redis-server") {
            skip(test, "redis-server is not on PATH");
            return None;
        }
        let mut redis = PrivateRedis {
            port: free_port(),
            child: None,
        };
        redis.run().await;
        Some(redis)
    }

    async fn run(&mut self) {
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .spawn()
            .expect("redis-server starts");
        self.child = Some(child);
        for _ in 0..100 {
            if self.connection().await.is_some() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("the private redis-server did not come up");
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    async fn connection(&self) -> Option<redis::aio::MultiplexedConnection> {
        let client = redis::Client::open(self.url()).ok()?;
        let mut conn = client.get_multiplexed_async_connection().await.ok()?;
        let pong: String = redis::cmd("PING").query_async(&mut conn).await.ok()?;
        (pong == "PONG").then_some(conn)
    }

    /// Every client's commands wait this long (as a stalled Redis would make them).
    async fn pause(&self, ms: u64) {
        let mut conn = self.connection().await.unwrap();
        redis::cmd("CLIENT")
            .arg("PAUSE")
            .arg(ms)
            .arg("ALL")
            .query_async::<()>(&mut conn)
            .await
            .unwrap();
    }

    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for PrivateRedis {
    fn drop(&mut self) {
        self.kill();
    }
}

async fn redis_app(redis: &PrivateRedis, configure: impl FnOnce(&mut Settings)) -> TestApp {
    let url = redis.url();
    spawn_app_with(move |s| {
        s.redis.url = SecretString::from(url);
        s.redis.prefix = "fault:".into();
        s.redis.timeout_ms = 500;
        s.model.demo_tokens_per_sec = 2000;
        s.model.demo_reply_tokens = 20;
        s.chat.batch_ms = 10;
        configure(s);
    })
    .await
}

#[actix_web::test]
async fn with_redis_paused_a_send_gets_a_clear_error_within_seconds_and_works_again_after() {
    let test = "with_redis_paused_a_send_gets_a_clear_error_within_seconds_and_works_again_after";
    let Some(redis) = PrivateRedis::start(test).await else {
        return;
    };
    let app = redis_app(&redis, |_| {}).await;
    let ann = app.register_ann().await;
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;
    tab.send(send("c1", None, "Hello")).await;
    let frames = tab.until("message.completed").await;
    let conversation = frames[0]["conversation"]["_id"].clone();
    tab.expect("conversation.updated").await;

    redis.pause(3000).await;
    let paused = Instant::now();
    tab.send(send("c2", Some(&conversation), "Still there?")).await;
    let error = tab.expect("error").await;
    assert_eq!(
        (&error["code"], &error["clientId"]),
        (&json!("service_unavailable"), &json!("c2")),
        "{error}"
    );
    assert_eq!(
        error["message"],
        json!("Service unavailable. Please try again later.")
    );
    assert!(
        paused.elapsed() < Duration::from_secs(2),
        "{:?}",
        paused.elapsed()
    );
    // The tab stays responsive meanwhile.
    assert!(tab.ping_answered().await);
    tab.send(json!({"type": "ping"})).await;
    tab.expect("pong").await;
    assert!(paused.elapsed() < Duration::from_secs(3));
    // Nothing of the refused send was stored.
    let id = conversation.as_str().unwrap();
    assert_eq!(app.state.db.messages(id).await.unwrap().len(), 2);

    // Once Redis answers again, so does the server, without a restart.
    tokio::time::sleep(Duration::from_secs(3).saturating_sub(paused.elapsed())).await;
    let last = send_until_answered(
        &mut tab,
        send("c3", Some(&conversation), "Back?"),
        Duration::from_secs(10),
    )
    .await;
    assert_eq!(last[0]["finishReason"], json!("stop"), "{last:?}");
}

#[actix_web::test]
async fn with_redis_gone_tabs_stay_responsive_and_everything_recovers_when_it_returns() {
    let test = "with_redis_gone_tabs_stay_responsive_and_everything_recovers_when_it_returns";
    let Some(mut redis) = PrivateRedis::start(test).await else {
        return;
    };
    let app = redis_app(&redis, |_| {}).await;
    let ann = app.register_ann().await;
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;

    redis.kill();
    let gone = Instant::now();
    tab.send(send("g1", None, "Anyone?")).await;
    let error = tab.expect("error").await;
    assert_eq!(error["code"], json!("service_unavailable"), "{error}");
    assert!(gone.elapsed() < Duration::from_secs(3), "{:?}", gone.elapsed());
    assert!(tab.ping_answered().await);
    // A tab that connects now learns why it has no usage, and stays connected.
    let mut late = WsClient::connect(&app, Some(&ann.token)).await;
    assert_eq!(late.expect("error").await["code"], json!("service_unavailable"));
    late.send(json!({"type": "ping"})).await;
    late.expect("pong").await;
    let conversations = app
        .state
        .db
        .conversations(&ann.id, None, false, None, 10)
        .await
        .unwrap();
    assert!(conversations.is_empty());

    redis.run().await;
    let last = send_until_answered(&mut tab, send("g2", None, "Back?"), Duration::from_secs(15)).await;
    assert_eq!(last[0]["finishReason"], json!("stop"), "{last:?}");
    // Tabs on another instance get the events again (the subscriber reconnected).
    let second = app.another_instance(|s| {
        s.redis.url = SecretString::from(redis.url());
        s.redis.prefix = "fault:".into();
    });
    let second = second.await;
    let (mut remote_tab, _) = WsClient::ready(&second, &ann.token).await;
    let started = Instant::now();
    loop {
        tab.send(json!({"type": "chat.send", "clientId": "g3", "conversationId": null, "content": "Sync?"}))
            .await;
        let seen = tokio::time::timeout(Duration::from_secs(2), remote_tab.until("message.completed")).await;
        if seen.is_ok() {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "no events across instances"
        );
    }
}

#[actix_web::test]
async fn while_redis_is_paused_the_relay_queue_stays_bounded_and_claims_are_released_after() {
    let test = "while_redis_is_paused_the_relay_queue_stays_bounded_and_claims_are_released_after";
    let Some(redis) = PrivateRedis::start(test).await else {
        return;
    };
    let app = redis_app(&redis, |s| {
        s.redis.relay_queue = 8;
        s.model.demo_tokens_per_sec = 200;
        s.model.demo_reply_tokens = 240;
        s.chat.batch_ms = 5;
    })
    .await;
    let ann = app.register_ann().await;
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;
    tab.send(send("q1", None, "A long one please")).await;
    let created = tab.until("usage.updated").await;
    let conversation = created[0]["conversation"]["_id"].clone();

    redis.pause(2500).await;
    let relay = app.state.realtime.relay.clone().unwrap();
    let most = Arc::new(AtomicUsize::new(0));
    let sampler = {
        let (relay, most) = (relay.clone(), most.clone());
        actix_web::rt::spawn(async move {
            loop {
                most.fetch_max(relay.backlog(), Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
        })
    };
    // The tabs of this instance get every delta regardless.
    let frames = tab.until("message.completed").await;
    sampler.abort();
    let completed = frames.last().unwrap();
    assert_eq!(completed["finishReason"], json!("stop"));
    let answer_id = completed["message"]["_id"].clone();
    assert_eq!(
        completed["message"]["content"],
        json!(joined_deltas(&frames, &answer_id, 0))
    );
    let deltas = frames.iter().filter(|f| f["type"] == "message.delta").count();
    assert!(deltas > 20, "{deltas} deltas");
    let most = most.load(Ordering::Relaxed);
    assert!(most > 0 && most <= 8, "backlog reached {most}");

    // The answer ended while Redis was paused; its claim is released once it is back,
    // so the conversation takes a follow-up.
    tokio::time::sleep(Duration::from_millis(2600)).await;
    let last = send_until_answered(
        &mut tab,
        send("q2", Some(&conversation), "And now?"),
        Duration::from_secs(10),
    )
    .await;
    assert_eq!(last[0]["finishReason"], json!("stop"), "{last:?}");
}

#[actix_web::test]
async fn redis_back_after_seconds_away_answers_within_seconds_with_the_counters_rebuilt() {
    let test = "redis_back_after_seconds_away_answers_within_seconds_with_the_counters_rebuilt";
    let Some(mut redis) = PrivateRedis::start(test).await else {
        return;
    };
    let app = redis_app(&redis, |_| {}).await;
    let ann = app.register_ann().await;
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;
    for (id, text) in [("r1", "One"), ("r2", "Two")] {
        tab.send(send(id, None, text)).await;
        tab.until("message.completed").await;
        tab.expect("conversation.updated").await;
    }
    assert_eq!(responses_used(&app, &ann).await, 2);
    // What the usage record has (it is written behind, every second).
    app.state.quotas.flush().await.unwrap();

    // Away long enough for a reconnecting client to back off (the connection manager's
    // own backoff waited a minute and more).
    redis.kill();
    let gone = Instant::now();
    while gone.elapsed() < Duration::from_secs(4) {
        tab.send(send("r-away", None, "Anyone?")).await;
        let error = tab.expect("error").await;
        assert_eq!(error["code"], json!("service_unavailable"), "{error}");
        tokio::time::sleep(Duration::from_millis(400)).await;
    }

    // Back, and empty (no persistence): the server answers within seconds, and the
    // counters are rebuilt from the usage record before anything is counted.
    redis.run().await;
    let back = Instant::now();
    let last = send_until_answered(&mut tab, send("r3", None, "Back?"), Duration::from_secs(20)).await;
    assert_eq!(last[0]["finishReason"], json!("stop"), "{last:?}");
    assert!(back.elapsed() < Duration::from_secs(5), "{:?}", back.elapsed());
    assert_eq!(responses_used(&app, &ann).await, 3);
    let (_, ready) = WsClient::ready(&app, &ann.token).await;
    assert_eq!(
        ready["usage"]["limitInfo"]["services"]["responses"]["daily"]["used"],
        json!(3)
    );
}

#[actix_web::test]
async fn checks_that_redis_runs_after_they_timed_out_count_nothing_and_late_ones_are_not_run() {
    let test = "checks_that_redis_runs_after_they_timed_out_count_nothing_and_late_ones_are_not_run";
    let Some(redis) = PrivateRedis::start(test).await else {
        return;
    };
    let app = redis_app(&redis, |_| {}).await;
    let ann = app.register_ann().await;
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;
    tab.send(send("c1", None, "Hello")).await;
    tab.until("message.completed").await;
    tab.expect("conversation.updated").await;
    assert_eq!(responses_used(&app, &ann).await, 1);

    // A paused Redis runs what it queued once it resumes: a send refused meanwhile must
    // not keep its answer slot, and checks refused meanwhile must not count.
    redis.pause(2500).await;
    let paused = Instant::now();
    tab.send(send("c2", None, "Paused?")).await;
    assert_eq!(tab.expect("error").await["code"], json!("service_unavailable"));
    let quotas = &app.state.quotas;
    let plan = chat_server::plans::PlanType::Free;
    // Eight checks of one user wait in line for its quota actor: the first waits for
    // Redis, the rest are past their deadline by their turn and are not made at all.
    let checks = (0..8).map(|_| quotas.consume_response_on(&ann.id, plan));
    let results = futures_util::future::join_all(checks).await;
    assert!(results.iter().all(Result::is_err));
    assert!(
        paused.elapsed() < Duration::from_secs(2),
        "{:?}",
        paused.elapsed()
    );

    tokio::time::sleep(Duration::from_millis(2500).saturating_sub(paused.elapsed())).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(responses_used(&app, &ann).await, 1);
    let mut conn = redis.connection().await.unwrap();
    let slots: Option<i64> = redis::cmd("GET")
        .arg(format!("fault:answers:{{{}}}", ann.id))
        .query_async(&mut conn)
        .await
        .unwrap();
    assert_eq!(slots.unwrap_or(0), 0, "an answer slot kept by a refused send");
    let last = send_until_answered(&mut tab, send("c3", None, "Now?"), Duration::from_secs(10)).await;
    assert_eq!(last[0]["finishReason"], json!("stop"), "{last:?}");
    assert_eq!(responses_used(&app, &ann).await, 2);
}

// ---- an instance that dies --------------------------------------------------------------

/// The server binary as a second instance beside `app`: the same database, the private
/// Redis, the model stub of `config`, leases of `lease_ms`; its process and base URL.
async fn binary_beside(
    app: &TestApp,
    redis: &PrivateRedis,
    config: &std::path::Path,
    base_url: &str,
    extra: &[(&str, &str)],
) -> (Child, String) {
    let (redis_url, config) = (redis.url(), config.display().to_string());
    let mut env = vec![
        ("REDIS_URL", redis_url.as_str()),
        ("REDIS_PREFIX", "fault:"),
        ("REDIS_TIMEOUT_MS", "500"),
        ("ANSWER_LEASE_MS", "1000"),
        ("JWT_SECRET", crate::helpers::TEST_JWT_SECRET),
        ("OPENAI_API_KEY", "test-key"),
        ("OPENAI_BASE_URL", base_url),
        ("CONFIG_DIR", config.as_str()),
        ("RUST_LOG", "warn"),
    ];
    if let Some(url) = &app.backends.database_url {
        env.push(("DATABASE_URL", url));
    }
    env.extend_from_slice(extra);
    binary::serve(app.data_dir.path(), &env, Stdio::null()).await
}

/// An in-process instance on the private Redis and the stub of `config`.
async fn leased_app(redis: &PrivateRedis, config: std::path::PathBuf, base_url: String) -> TestApp {
    redis_app(redis, move |s| {
        s.config_dir = config;
        s.model.openai_api_key = SecretString::from("test-key");
        s.model.openai_base_url = base_url;
        s.redis.answer_lease_ms = 1000;
    })
    .await
}

#[actix_web::test]
async fn an_answer_whose_instance_is_killed_is_ended_by_another_with_the_text_its_tabs_got() {
    let test = "an_answer_whose_instance_is_killed_is_ended_by_another_with_the_text_its_tabs_got";
    let Some(redis) = PrivateRedis::start(test).await else {
        return;
    };
    let (config, base_url, _stub) = stub_config();
    let app = leased_app(&redis, config.clone(), base_url.clone()).await;
    let ann = app.register_ann().await;
    let (mut server, base) = binary_beside(&app, &redis, &config, &base_url, &[]).await;
    let (mut here, _) = WsClient::ready(&app, &ann.token).await;
    let mut there = WsClient::connect_to(&base, Some(&ann.token)).await;
    there.expect("ready").await;

    // An answer that streams until its instance dies, followed by a tab elsewhere.
    there
        .send(send_with_model("k1", "Keep talking", "stub-trickle"))
        .await;
    let mut frames = here.until("message.delta").await;
    frames.extend(here.until("message.delta").await);
    let conversation = frames[0]["conversation"]["_id"].clone();
    server.kill().unwrap();
    server.wait().unwrap();
    let killed = Instant::now();

    // The other instance ends it once its lease lapses, with the text its tab got.
    frames.extend(here.until("message.completed").await);
    assert!(
        killed.elapsed() < Duration::from_secs(5),
        "{:?}",
        killed.elapsed()
    );
    let completed = frames.last().unwrap();
    assert_eq!(completed["finishReason"], json!("interrupted"), "{completed}");
    let answer_id = completed["message"]["_id"].clone();
    let got = joined_deltas(&frames, &answer_id, 0);
    assert!(got.starts_with("tick0 tick1 "), "{got}");
    assert_eq!(completed["message"]["content"], json!(got));
    assert_stored_interrupted(&app, &answer_id, &got).await;
    // The unit goes back (the user is not to blame), and the tabs hear of it.
    let usage = here.until("usage.updated").await.pop().unwrap();
    assert_eq!(
        usage["limitInfo"]["services"]["responses"]["daily"]["used"],
        json!(0),
        "{usage}"
    );
    assert_eq!(responses_used(&app, &ann).await, 0);
    // And the conversation is free.
    let mut go_on = send("k2", Some(&conversation), "Go on");
    go_on["model"] = json!("stub");
    let next = send_until_answered(&mut here, go_on, Duration::from_secs(10)).await;
    assert_eq!(next[0]["finishReason"], json!("stop"), "{next:?}");
}

#[actix_web::test]
async fn a_tab_elsewhere_that_missed_an_answers_end_while_redis_was_away_gets_it_once_redis_is_back() {
    let test = "a_tab_elsewhere_that_missed_an_answers_end_while_redis_was_away_gets_it_once_redis_is_back";
    let Some(mut redis) = PrivateRedis::start(test).await else {
        return;
    };
    let (config, base_url, _stub) = stub_config();
    let url = redis.url();
    let configure = move |s: &mut Settings| {
        s.redis.url = SecretString::from(url.clone());
        s.redis.prefix = "fault:".into();
        s.redis.timeout_ms = 500;
        s.redis.answer_lease_ms = 1000;
        s.config_dir = config.clone();
        s.model.openai_api_key = SecretString::from("test-key");
        s.model.openai_base_url = base_url.clone();
        // The trickle ends here, while Redis is away.
        s.model.total_timeout_secs = 3;
        s.chat.batch_ms = 10;
    };
    let app = spawn_app_with(configure.clone()).await;
    let other = app.another_instance(configure).await;
    let ann = app.register_ann().await;
    let (mut here, _) = WsClient::ready(&app, &ann.token).await;
    let (mut there, _) = WsClient::ready(&other, &ann.token).await;
    here.send(send_with_model("m1", "Keep talking", "stub-trickle"))
        .await;
    there.until("message.delta").await;

    // Its end cannot travel to the other instance while Redis is away.
    redis.kill();
    let ended = here.until("message.completed").await.pop().unwrap();
    redis.run().await;
    let back = Instant::now();
    let missed = there.until("message.completed").await.pop().unwrap();
    assert!(back.elapsed() < Duration::from_secs(5), "{:?}", back.elapsed());
    assert_eq!(missed["message"]["content"], ended["message"]["content"]);
    assert_eq!(missed["message"]["_id"], ended["message"]["_id"]);
    assert_eq!(missed["finishReason"], ended["finishReason"]);
}

#[actix_web::test]
async fn sigterm_with_redis_gone_stops_within_the_grace_period_and_stores_the_answer_as_interrupted() {
    let test = "sigterm_with_redis_gone_stops_within_the_grace_period_and_stores_the_answer_as_interrupted";
    let Some(mut redis) = PrivateRedis::start(test).await else {
        return;
    };
    let (config, base_url, _stub) = stub_config();
    let app = leased_app(&redis, config.clone(), base_url.clone()).await;
    let ann = app.register_ann().await;
    let grace = [("SHUTDOWN_GRACE_SECS", "1")];
    let (mut server, base) = binary_beside(&app, &redis, &config, &base_url, &grace).await;
    let mut tab = WsClient::connect_to(&base, Some(&ann.token)).await;
    tab.expect("ready").await;
    tab.send(send_with_model("t1", "Keep talking", "stub-trickle"))
        .await;
    let mut frames = tab.until("message.delta").await;
    frames.extend(tab.until("message.delta").await);

    redis.kill();
    // The grace period and a few seconds, whatever Redis does.
    sigterm_and_wait(&mut server, Duration::from_secs(9)).await;
    while let Some(frame) = tab.next().await {
        frames.push(frame);
    }
    let completed = frames.iter().rfind(|f| f["type"] == "message.completed");
    let completed = completed.expect("the tab was told the answer ended");
    assert_eq!(completed["finishReason"], json!("interrupted"));
    let answer_id = completed["message"]["_id"].clone();
    let got = joined_deltas(&frames, &answer_id, 0);
    assert!(got.starts_with("tick0 tick1 "), "{got}");
    assert_stored_interrupted(&app, &answer_id, &got).await;
}

// ---- the database ----------------------------------------------------------------------

/// Makes storing any answer row fail, as a database dying between two writes would.
async fn refuse_answer_rows(db: &Db, refuse: bool) {
    let statements: &[&str] = match (db, refuse) {
        (Db::Sqlite(..), true) => &["CREATE TRIGGER no_answers BEFORE INSERT ON messages \
             WHEN NEW.role = 'assistant' BEGIN SELECT RAISE(ABORT, 'no answers'); END"],
        (Db::Sqlite(..), false) => &["DROP TRIGGER no_answers"],
        (Db::Postgres(_), true) => &[
            "CREATE FUNCTION no_answers() RETURNS trigger LANGUAGE plpgsql AS \
             $$ BEGIN RAISE EXCEPTION 'no answers'; END $$",
            "CREATE TRIGGER no_answers BEFORE INSERT ON messages FOR EACH ROW \
             WHEN (NEW.role = 'assistant') EXECUTE FUNCTION no_answers()",
        ],
        (Db::Postgres(_), false) => &["DROP TRIGGER no_answers ON messages"],
    };
    for sql in statements {
        match db {
            Db::Sqlite(pool, _) => sqlx::query(sql).execute(pool).await.map(drop),
            Db::Postgres(pool) => sqlx::query(sql).execute(pool).await.map(drop),
        }
        .unwrap();
    }
}

#[actix_web::test]
async fn a_send_whose_answer_row_cannot_be_stored_leaves_nothing_behind() {
    let app = spawn_app_with(|s| {
        s.model.demo_tokens_per_sec = 2000;
        s.model.demo_reply_tokens = 10;
    })
    .await;
    let ann = app.register_ann().await;
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;
    tab.send(send("d1", None, "First")).await;
    let frames = tab.until("message.completed").await;
    let conversation = frames[0]["conversation"]["_id"].clone();
    tab.expect("conversation.updated").await;

    refuse_answer_rows(&app.state.db, true).await;
    tab.send(send("d2", Some(&conversation), "Follow-up")).await;
    let frames = tab.until("error").await;
    assert_eq!(frames.last().unwrap()["clientId"], json!("d2"));
    tab.send(send("d3", None, "A new one")).await;
    let frames = tab.until("error").await;
    assert_eq!(frames.last().unwrap()["clientId"], json!("d3"));
    assert!(
        frames.iter().all(|f| f["type"] != "conversation.created"),
        "{frames:?}"
    );
    // No question without its answer, no empty conversation, no unit counted.
    let id = conversation.as_str().unwrap();
    assert_eq!(app.state.db.messages(id).await.unwrap().len(), 2);
    let conversations = app
        .state
        .db
        .conversations(&ann.id, None, false, None, 10)
        .await
        .unwrap();
    assert_eq!(conversations.len(), 1);
    assert_eq!(responses_used(&app, &ann).await, 1);

    refuse_answer_rows(&app.state.db, false).await;
    tab.send(send("d4", Some(&conversation), "Follow-up")).await;
    let completed = tab.until("message.completed").await.pop().unwrap();
    assert_eq!(completed["finishReason"], json!("stop"));
}

/// A Postgres cluster of this test alone (`pg_createcluster`), so restarting it
/// disturbs no one else.
struct PrivatePostgres {
    version: String,
    name: String,
    port: u16,
}

impl PrivatePostgres {
    fn start(test: &str) -> Option<PrivatePostgres> {
        if std::env::var("TEST_DATABASE_URL").is_err() {
            skip(test, "TEST_DATABASE_URL is not set (a Postgres test)");
            return None;
        }
        if !on_path("pg_createcluster") || !on_path("pg_ctlcluster") {
            skip(test, "pg_createcluster / pg_ctlcluster are not installed");
            return None;
        }
        let version = std::fs::read_dir("/etc/postgresql")
            .ok()?
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .max()?;
        let port = free_port();
        let name = format!("chatfault{port}");
        let created = Command::new("pg_createcluster")
            .args([&version, &name, "-p", &port.to_string(), "--", "--auth=trust"])
            .stdout(Stdio::null())
            .status()
            .unwrap();
        assert!(created.success(), "pg_createcluster failed");
        let cluster = PrivatePostgres { version, name, port };
        cluster.ctl("start");
        Some(cluster)
    }

    fn ctl(&self, action: &str) {
        let mut command = Command::new("pg_ctlcluster");
        command.args([&self.version, &self.name, action]);
        if action == "stop" {
            command.args(["-m", "fast"]);
        }
        let status = command.status().unwrap();
        assert!(status.success(), "pg_ctlcluster {action} failed");
    }

    fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }
}

impl Drop for PrivatePostgres {
    fn drop(&mut self) {
        let _ = Command::new("pg_dropcluster")
            .args(["--stop", &self.version, &self.name])
            .status();
    }
}

#[actix_web::test]
async fn a_postgres_restart_gives_clear_errors_while_it_is_down_and_recovers_after() {
    let test = "a_postgres_restart_gives_clear_errors_while_it_is_down_and_recovers_after";
    let Some(postgres) = PrivatePostgres::start(test) else {
        return;
    };
    let url = postgres.url();
    let app = spawn_app_with(move |s| {
        s.database.url = SecretString::from(url);
        s.model.demo_tokens_per_sec = 2000;
        s.model.demo_reply_tokens = 10;
    })
    .await;
    let ann = app.register_ann().await;
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;
    tab.send(send("p1", None, "Before")).await;
    let frames = tab.until("message.completed").await;
    let conversation = frames[0]["conversation"]["_id"].clone();
    tab.expect("conversation.updated").await;

    postgres.ctl("stop");
    let down = Instant::now();
    tab.send(send("p2", Some(&conversation), "While down")).await;
    let error = tab.expect("error").await;
    assert_eq!(
        (&error["code"], &error["clientId"]),
        (&json!("service_unavailable"), &json!("p2")),
        "{error}"
    );
    assert!(down.elapsed() < Duration::from_secs(8), "{:?}", down.elapsed());
    let listed = app.get_auth("/api/conversations", &ann.token).await;
    assert_error(listed, 503, "service_unavailable").await;
    assert!(tab.ping_answered().await);

    postgres.ctl("start");
    let last = send_until_answered(
        &mut tab,
        send("p3", Some(&conversation), "After"),
        Duration::from_secs(20),
    )
    .await;
    assert_eq!(last[0]["finishReason"], json!("stop"), "{last:?}");
    let messages = app
        .state
        .db
        .messages(conversation.as_str().unwrap())
        .await
        .unwrap();
    // Each send stored whole or not at all (the test clock stands still: sort by send).
    let mut stored: Vec<(&str, &str)> = messages
        .iter()
        .map(|m| (m.client_id.as_deref().unwrap(), m.role.as_str()))
        .collect();
    stored.sort();
    assert_eq!(
        stored,
        [
            ("p1", "assistant"),
            ("p1", "user"),
            ("p3", "assistant"),
            ("p3", "user")
        ]
    );
}

#[actix_web::test]
async fn an_answer_ending_while_postgres_restarts_is_stored_once_it_is_back() {
    let test = "an_answer_ending_while_postgres_restarts_is_stored_once_it_is_back";
    let Some(postgres) = PrivatePostgres::start(test) else {
        return;
    };
    let url = postgres.url();
    let (app, _stub) = stub_app(move |s| {
        s.database.url = SecretString::from(url);
        // The trickle is cut here: the answer ends while the database is down.
        s.model.total_timeout_secs = 4;
    })
    .await;
    let ann = app.register_ann().await;
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;
    tab.send(send_with_model("e1", "Keep talking", "stub-trickle"))
        .await;
    let mut frames = tab.until("message.delta").await;
    let sent = Instant::now();
    postgres.ctl("stop");
    tokio::time::sleep(Duration::from_secs(5)).await;
    postgres.ctl("start");
    frames.extend(tab.until("message.completed").await);
    let completed = frames.last().unwrap();
    let answer_id = completed["message"]["_id"].clone();
    let got = joined_deltas(&frames, &answer_id, 0);
    assert!(got.starts_with("tick0 tick1 "), "{got}");
    assert!(
        sent.elapsed() > Duration::from_secs(3),
        "the answer ended before the restart"
    );
    let stored = loop {
        let stored = app.state.db.message(answer_id.as_str().unwrap()).await;
        if let Ok(Some(stored)) = stored {
            if stored.status.as_str() != "streaming" {
                break stored;
            }
        }
        assert!(sent.elapsed() < Duration::from_secs(30), "never stored");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(stored.content, got);
    assert_eq!(completed["message"]["content"], json!(got));
}

// ---- shutdown --------------------------------------------------------------------------

#[actix_web::test]
async fn a_graceful_stop_lets_an_answer_finish_within_the_grace_period() {
    let app = spawn_app_with(|s| {
        s.model.demo_tokens_per_sec = 20;
        s.model.demo_reply_tokens = 20;
        s.chat.batch_ms = 10;
        s.server.shutdown_grace_secs = 5;
    })
    .await;
    let ann = app.register_ann().await;
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;
    tab.send(send("s1", None, "Short")).await;
    let created = tab.until("usage.updated").await;
    let conversation = created[0]["conversation"]["_id"].clone();
    let shutdown = app.shutdown.clone();
    let stopping = actix_web::rt::spawn(async move { shutdown.graceful().await });
    // New sends are refused meanwhile, in the user's language.
    tokio::time::sleep(Duration::from_millis(100)).await;
    tab.send(send("s2", Some(&conversation), "One more")).await;
    let frames = tab.until("error").await;
    let error = frames.last().unwrap();
    assert_eq!(
        (&error["code"], &error["clientId"]),
        (&json!("server_shutting_down"), &json!("s2"))
    );
    let completed = tab.until("message.completed").await.pop().unwrap();
    assert_eq!(completed["finishReason"], json!("stop"));
    let answer = app
        .state
        .db
        .message(completed["message"]["_id"].as_str().unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(answer.status.as_str(), "complete");
    stopping.await.unwrap();
}

#[actix_web::test]
async fn a_graceful_stop_stores_a_long_answer_as_interrupted_and_the_next_instance_goes_on() {
    let configure = |s: &mut Settings| {
        s.model.demo_tokens_per_sec = 20;
        s.model.demo_reply_tokens = 400;
        s.chat.batch_ms = 10;
        s.server.shutdown_grace_secs = 1;
    };
    let app = spawn_app_with(configure).await;
    let ann = app.register_ann().await;
    let (mut tab, _) = WsClient::ready(&app, &ann.token).await;
    tab.send(send("i1", None, "Tell me everything")).await;
    let mut frames = tab.until("usage.updated").await;
    let conversation = frames[0]["conversation"]["_id"].clone();
    let answer_id = frames[2]["message"]["_id"].clone();
    frames.extend(tab.until("message.delta").await);
    assert_eq!(responses_used(&app, &ann).await, 1);

    let stopped = Instant::now();
    app.shutdown.graceful().await;
    assert!(
        stopped.elapsed() < Duration::from_secs(5),
        "{:?}",
        stopped.elapsed()
    );
    frames.extend(tab.until("message.completed").await);
    let completed = frames.last().unwrap();
    assert_eq!(completed["finishReason"], json!("interrupted"));
    let partial = joined_deltas(&frames, &answer_id, 0);
    assert!(partial.starts_with("You said: *Tell me everything*"), "{partial}");
    assert_eq!(completed["message"]["content"], json!(partial));
    // The server no longer answers.
    assert!(app.client.get(app.url("/api/health")).send().await.is_err());

    // The next instance finds the answer stored as interrupted, the unit given back and
    // the conversation free. (The stopped instance's pool may hold connections of its
    // stopped workers, so the next one reads.)
    let next = app
        .another_instance(|s| {
            s.model.demo_tokens_per_sec = 2000;
            s.model.demo_reply_tokens = 20;
        })
        .await;
    assert_stored_interrupted(&next, &answer_id, &partial).await;
    assert_eq!(responses_used(&next, &ann).await, 0);
    let (mut tab, _) = WsClient::ready(&next, &ann.token).await;
    tab.send(send("i2", Some(&conversation), "Go on")).await;
    let frames = tab.until("message.completed").await;
    assert!(frames.iter().all(|f| f["type"] != "error"), "{frames:?}");
    assert_eq!(frames.last().unwrap()["finishReason"], json!("stop"));
}

#[actix_web::test]
async fn sigterm_stops_the_server_binary_cleanly() {
    let data_dir = tempfile::tempdir().unwrap();
    let (mut server, _) =
        binary::serve(data_dir.path(), &[("SHUTDOWN_GRACE_SECS", "1")], Stdio::null()).await;
    sigterm_and_wait(&mut server, Duration::from_secs(10)).await;
}

/// Sends SIGTERM to the server binary and waits until it exited cleanly, within `limit`.
async fn sigterm_and_wait(server: &mut Child, limit: Duration) {
    let killed = Command::new("kill")
        .args(["-TERM", &server.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let stopping = Instant::now();
    let status = loop {
        if let Some(status) = server.try_wait().unwrap() {
            break status;
        }
        assert!(stopping.elapsed() < limit, "still running");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(status.success(), "{status:?}");
}

/// One request can be followed through the log: its span carries the request id (the
/// caller's `X-Request-Id`, echoed back) and, once the token is checked, the user; the
/// storage calls it made are spans under it, and its last line gives status and time.
#[actix_web::test]
async fn a_request_can_be_followed_through_the_log_by_its_id_and_user() {
    let data_dir = tempfile::tempdir().unwrap();
    let token = binary::seed_user(data_dir.path(), "trace", "free");
    let log_path = data_dir.path().join("server.log");
    let (mut server, base) = binary::serve(
        data_dir.path(),
        &[
            ("SHUTDOWN_GRACE_SECS", "1"),
            ("RUST_LOG", "info,chat_server=debug"),
            ("NO_COLOR", "1"),
        ],
        std::fs::File::create(&log_path).unwrap().into(),
    )
    .await;
    let client = reqwest::Client::new();
    let profile = client
        .get(format!("{base}/api/auth/profile"))
        .bearer_auth(&token)
        .header("X-Request-Id", "follow-me-1")
        .send()
        .await
        .unwrap();
    assert_eq!(profile.headers()["x-request-id"], "follow-me-1");
    let user: Value = profile.json().await.unwrap();
    let user_id = user["_id"].as_str().unwrap().to_owned();
    // Settings are read from storage once the user is known.
    let settings = client
        .get(format!("{base}/api/settings"))
        .bearer_auth(&token)
        .header("X-Request-Id", "follow-me-2")
        .send()
        .await
        .unwrap();
    assert_eq!(settings.status(), 200);
    // An id that is not plausible is replaced by one of ours.
    let other = client
        .get(format!("{base}/api/health"))
        .header("X-Request-Id", "no spaces <allowed>")
        .send()
        .await
        .unwrap();
    let new_id = other.headers()["x-request-id"].to_str().unwrap().to_owned();
    assert!(
        new_id.len() == 32 && new_id.bytes().all(|b| b.is_ascii_hexdigit()),
        "{new_id}"
    );

    Command::new("kill")
        .args(["-TERM", &server.id().to_string()])
        .status()
        .unwrap();
    let stopped = Instant::now();
    while server.try_wait().unwrap().is_none() {
        assert!(stopped.elapsed() < Duration::from_secs(10), "still running");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let log = std::fs::read_to_string(&log_path).unwrap();
    let ours: Vec<&str> = log.lines().filter(|l| l.contains("id=follow-me-")).collect();
    let profile_span = format!("request{{id=follow-me-1 user={user_id}}}");
    let settings_span = format!("request{{id=follow-me-2 user={user_id}}}");
    assert!(
        ours.iter().any(|l| l.contains(&settings_span)
            && l.contains("db{at=chat_server::db::billing:")
            && l.contains("storage call us=")),
        "no storage call under the request's span with its user: {ours:#?}"
    );
    assert!(
        ours.iter().any(|l| l.contains(&profile_span)
            && l.contains("status=200")
            && l.contains("GET /api/auth/profile")),
        "no closing line with the user and status: {ours:#?}"
    );
}
