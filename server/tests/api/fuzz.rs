//! Fuzzing with proptest's generators against the real server: random and mutated JSON
//! bodies for every REST call that takes one, and random frames on a real websocket.
//! The rules: no 5xx and no dropped connection for bad input, every refusal is the
//! API's JSON error, and a refused call changes nothing the user can see.
//!
//! The run is bounded (`FUZZ_CASES`, default 400 bodies and 120 frames, and
//! `FUZZ_SECONDS`, default 25 a test). Each run draws new cases from a random seed printed at the start; `FUZZ_SEED`
//! replays one. Cases are sampled up front and sent one by one (the server is async, the
//! runner is not), so a failure prints the exact input instead of shrinking it.

use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use reqwest::Method;
use serde_json::{json, Map, Value};

use chat_server::db::Db;

use crate::helpers::{spawn_app, TestApp, TestUser};
use crate::ws::WsClient;

fn budget(default_cases: u64) -> (usize, Duration) {
    let var = |name: &str, default: u64| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    (
        var("FUZZ_CASES", default_cases) as usize,
        Duration::from_secs(var("FUZZ_SECONDS", 25)),
    )
}

fn runner(test: &str) -> TestRunner {
    let seed: u64 = std::env::var("FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(rand_seed);
    println!("{test}: FUZZ_SEED={seed}");
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &bytes),
    )
}

fn rand_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64)
}

/// Strings that tend to break parsers and validators, beside plain random ones.
fn nasty_string() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "\\PC{0,24}",
        "[a-z]{1,8}@[a-z]{1,8}\\.[a-z]{2,3}",
        "[0-9]{0,8}",
        Just(String::new()),
        Just(" ".repeat(3)),
        Just("x".repeat(70_000)),
        Just("\u{0}\u{1b}[31m\r\n\u{202e}".to_owned()),
        Just("<script>alert(1)</script>".to_owned()),
        Just("'; DROP TABLE users; --".to_owned()),
        Just("\u{fffd}\u{10ffff}🙂".to_owned()),
        // Values some field accepts, so mutations reach the checks behind the first one.
        prop::sample::select(vec![
            "secret1",
            "ann@example.com",
            "en-US",
            "hu-HU",
            "free",
            "base",
            "plus",
            "pro",
            "monthly",
            "one_time",
            "EUR",
            "HUF",
            "credit_card",
            "private",
            "company",
            "HU",
            "DE",
            "123456",
            "Ann",
        ])
        .prop_map(str::to_owned),
    ]
}

const FIELDS: &[&str] = &[
    "name",
    "email",
    "password",
    "confirmPassword",
    "privacyAccepted",
    "language",
    "token",
    "code",
    "rememberMe",
    "lang",
    "newPassword",
    "currentPassword",
    "aiPersonalization",
    "enabled",
    "userName",
    "userInfo",
    "billingType",
    "billingInfo",
    "companyName",
    "address",
    "city",
    "postalCode",
    "country",
    "vatNumber",
    "planType",
    "paymentMethod",
    "billingCycle",
    "currency",
    "title",
];

fn field_name() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(FIELDS).prop_map(str::to_owned),
        1 => "\\PC{0,12}",
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        Just(json!(u64::MAX)),
        nasty_string().prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((field_name(), inner), 0..5)
                .prop_map(|fields| Value::Object(fields.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// How a case bends an endpoint's valid body.
#[derive(Debug, Clone)]
enum Mutation {
    /// One field of the valid body (found by its path) replaced by any value.
    Replace(usize, Value),
    Remove(usize),
    Extra(String, Value),
    /// Any JSON at all as the body.
    Whole(Value),
    /// Bytes that are probably not JSON, sent as `application/json`.
    Raw(Vec<u8>),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        4 => (any::<usize>(), json_value()).prop_map(|(i, v)| Mutation::Replace(i, v)),
        2 => any::<usize>().prop_map(Mutation::Remove),
        1 => (field_name(), json_value()).prop_map(|(k, v)| Mutation::Extra(k, v)),
        2 => json_value().prop_map(Mutation::Whole),
        1 => prop::collection::vec(any::<u8>(), 0..64).prop_map(Mutation::Raw),
    ]
}

struct Endpoint {
    method: Method,
    path: &'static str,
    authed: bool,
    valid: Value,
}

/// Every REST call with a JSON body, with a body it would accept (or nearly so).
fn endpoints() -> Vec<Endpoint> {
    let e = |method: Method, path, authed, valid| Endpoint {
        method,
        path,
        authed,
        valid,
    };
    vec![
        e(
            Method::POST,
            "/api/auth/register/send-code",
            false,
            json!({"name": "Bob", "email": "bob@example.com", "password": "secret1",
                 "confirmPassword": "secret1", "privacyAccepted": true, "language": "en-US"}),
        ),
        e(
            Method::POST,
            "/api/auth/register/verify",
            false,
            json!({"token": "t", "code": "123456"}),
        ),
        e(
            Method::POST,
            "/api/auth/register/resend-code",
            false,
            json!({"token": "t"}),
        ),
        e(
            Method::POST,
            "/api/auth/login",
            false,
            json!({"email": "ann@example.com", "password": "wrong-password", "rememberMe": true}),
        ),
        e(
            Method::POST,
            "/api/auth/forgot-password",
            false,
            json!({"email": "ann@example.com", "lang": "en-US"}),
        ),
        e(
            Method::POST,
            "/api/auth/verify-reset-code",
            false,
            json!({"email": "ann@example.com", "code": "123456", "token": "t"}),
        ),
        e(
            Method::POST,
            "/api/auth/reset-password",
            false,
            json!({"token": "t", "newPassword": "secret2", "confirmPassword": "secret2", "lang": "en-US"}),
        ),
        e(Method::PUT, "/api/auth/profile", true, json!({"name": "Ann"})),
        e(
            Method::PUT,
            "/api/auth/password",
            true,
            json!({"currentPassword": "not-hers", "newPassword": "secret2", "confirmPassword": "secret2"}),
        ),
        e(
            Method::PUT,
            "/api/settings",
            true,
            json!({"language": "hu-HU", "aiPersonalization": {"enabled": true, "userName": "A", "userInfo": "B"}}),
        ),
        e(
            Method::PUT,
            "/api/settings/billing-info",
            true,
            json!({"billingType": "company", "billingInfo": {"name": "Ann", "companyName": "Ann Kft",
                 "address": "Fő utca 1", "city": "Budapest", "postalCode": "1011", "country": "HU",
                 "vatNumber": "HU12345678"}}),
        ),
        e(
            Method::PUT,
            "/api/subscription/change",
            true,
            json!({"planType": "pro", "paymentMethod": "credit_card", "billingCycle": "monthly", "currency": "EUR"}),
        ),
        e(Method::PUT, "/api/subscription/cancel", true, json!({})),
        e(Method::PUT, "/api/subscription/cancel-pending", true, json!({})),
        e(
            Method::PATCH,
            "/api/conversations/00000000-0000-0000-0000-000000000000",
            true,
            json!({"title": "T"}),
        ),
    ]
}

/// The paths to every leaf of a JSON object, so `Replace(i)` and `Remove(i)` can pick one.
fn leaf_paths(value: &Value, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    if let Value::Object(map) = value {
        for (k, v) in map {
            prefix.push(k.clone());
            out.push(prefix.clone());
            leaf_paths(v, prefix, out);
            prefix.pop();
        }
    }
}

fn slot<'a>(body: &'a mut Value, path: &[String]) -> Option<&'a mut Map<String, Value>> {
    let (last, parents) = path.split_last()?;
    let mut here = body;
    for key in parents {
        here = here.get_mut(key)?;
    }
    let map = here.as_object_mut()?;
    map.contains_key(last).then_some(map)
}

/// The bytes a case sends.
fn body_bytes(valid: &Value, mutation: &Mutation) -> Vec<u8> {
    let mut body = valid.clone();
    let mut paths = Vec::new();
    leaf_paths(valid, &mut Vec::new(), &mut paths);
    let pick = |i: &usize| (!paths.is_empty()).then(|| &paths[i % paths.len()]);
    match mutation {
        Mutation::Replace(i, value) => {
            if let Some(path) = pick(i) {
                if let Some(map) = slot(&mut body, path) {
                    map.insert(path.last().unwrap().clone(), value.clone());
                }
            }
        }
        Mutation::Remove(i) => {
            if let Some(path) = pick(i) {
                if let Some(map) = slot(&mut body, path) {
                    map.remove(path.last().unwrap());
                }
            }
        }
        Mutation::Extra(key, value) => {
            if let Some(map) = body.as_object_mut() {
                map.insert(key.clone(), value.clone());
            }
        }
        Mutation::Whole(value) => body = value.clone(),
        Mutation::Raw(bytes) => return bytes.clone(),
    }
    serde_json::to_vec(&body).unwrap()
}

/// What the user can see of their account, plus the rows a refused call could leave.
async fn visible_state(app: &TestApp, user: &TestUser, case: &str) -> Value {
    let mut seen = Map::new();
    for path in [
        "/api/auth/profile",
        "/api/settings",
        "/api/subscription",
        "/api/payments",
        "/api/conversations",
        "/api/usage/limits",
    ] {
        let response = app.get_auth(path, &user.token).await;
        let status = response.status();
        let body: Value = response.json().await.unwrap();
        assert_eq!(status, 200, "after {case}: GET {path} answered {body}");
        seen.insert(path.to_owned(), body);
    }
    for table in [
        "users",
        "pending_registrations",
        "password_resets",
        "payments",
        "messages",
    ] {
        seen.insert(table.to_owned(), json!(count_rows(app, table).await));
    }
    Value::Object(seen)
}

async fn count_rows(app: &TestApp, table: &str) -> i64 {
    let sql = format!("SELECT COUNT(*) FROM {table}");
    match &app.state.db {
        Db::Sqlite(pool, _) => sqlx::query_scalar(&sql).fetch_one(pool).await.unwrap(),
        Db::Postgres(pool) => sqlx::query_scalar(&sql).fetch_one(pool).await.unwrap(),
    }
}

fn assert_api_error(status: u16, body: &[u8], case: &str) {
    let body: Value = serde_json::from_slice(body).unwrap_or_else(|_| {
        panic!(
            "{case}: a {status} that is not JSON: {}",
            String::from_utf8_lossy(body)
        )
    });
    assert_eq!(body["success"], json!(false), "{case}: {body}");
    assert!(
        body["code"].as_str().is_some_and(|c| !c.is_empty()),
        "{case}: {body}"
    );
    assert!(
        body["message"].as_str().is_some_and(|m| !m.is_empty()),
        "{case}: {body}"
    );
}

#[actix_web::test]
async fn fuzzed_rest_bodies_get_a_clear_error_and_change_nothing() {
    let app = spawn_app().await;
    let mut user = app.register_ann().await;
    let endpoints = endpoints();
    let (cases, seconds) = budget(400);
    let mut runner = runner("rest");
    let strategy = (0..endpoints.len(), mutation());
    let mut before = visible_state(&app, &user, "registration").await;
    let started = Instant::now();
    let mut sent = 0;
    while sent < cases && started.elapsed() < seconds {
        let (index, mutation) = strategy.new_tree(&mut runner).unwrap().current();
        let endpoint = &endpoints[index];
        let bytes = body_bytes(&endpoint.valid, &mutation);
        let case = format!(
            "{} {} with {}",
            endpoint.method,
            endpoint.path,
            String::from_utf8_lossy(&bytes[..bytes.len().min(300)])
        );
        let mut request = app
            .client
            .request(endpoint.method.clone(), app.url(endpoint.path))
            .header("Content-Type", "application/json")
            .body(bytes);
        if endpoint.authed {
            request = request.bearer_auth(&user.token);
        }
        let response = request.send().await.unwrap_or_else(|e| panic!("{case}: {e}"));
        let status = response.status().as_u16();
        let body = response.bytes().await.unwrap();
        sent += 1;
        assert!(
            status < 500,
            "{case}: answered {status}: {}",
            String::from_utf8_lossy(&body)
        );
        if status >= 400 {
            assert_api_error(status, &body, &case);
            let after = visible_state(&app, &user, &case).await;
            assert_eq!(after, before, "{case}: refused with {status} but changed state");
            continue;
        }
        // A password change that went through hands the calling tab a fresh token.
        let answer: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        if let Some(token) = answer["token"]
            .as_str()
            .filter(|_| endpoint.path == "/api/auth/password")
        {
            user.token = token.to_owned();
        }
        let mut after = visible_state(&app, &user, &case).await;
        if endpoint.path == "/api/auth/forgot-password" {
            // The reset is stored after the answer (its timing tells nothing): give it
            // the moment it takes, or the next case would be blamed for it.
            for _ in 0..25 {
                if after != before {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
                after = visible_state(&app, &user, &case).await;
            }
        }
        // An accepted case (a mutation that stayed valid) is the new baseline.
        before = after;
    }
    println!("rest: {sent} cases in {:?}", started.elapsed());
    assert!(sent >= cases.min(20), "only {sent} cases ran");
}

/// A chat.send that would start a conversation, for mutations.
fn valid_frames() -> Vec<Value> {
    vec![
        json!({"type": "chat.send", "clientId": "c1", "conversationId": "00000000-0000-0000-0000-000000000000",
               "content": "hi", "model": "demo", "webSearch": false, "attachments": []}),
        json!({"type": "chat.cancel", "conversationId": "00000000-0000-0000-0000-000000000000"}),
        json!({"type": "conversation.open", "conversationId": "00000000-0000-0000-0000-000000000000"}),
        json!({"type": "auth", "token": "not-a-token"}),
    ]
}

#[actix_web::test]
async fn fuzzed_websocket_frames_get_error_frames_and_store_nothing() {
    let app = spawn_app().await;
    let user = app.register_ann().await;
    let frames = valid_frames();
    let (cases, seconds) = budget(120);
    let mut runner = runner("ws");
    let strategy = (0..frames.len(), mutation());
    let before = count_rows(&app, "messages").await;
    let (mut ws, _) = WsClient::ready(&app, &user.token).await;
    // Mutations that leave a valid send (say, the conversation id removed) start real
    // answers: those, and only those, may store messages.
    let mut accepted = 0;
    let started = Instant::now();
    let mut sent = 0;
    while sent < cases && started.elapsed() < seconds {
        let (index, mutation) = strategy.new_tree(&mut runner).unwrap().current();
        let bytes = body_bytes(&frames[index], &mutation);
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let case = format!("frame {}", text.chars().take(300).collect::<String>());
        ws.send_raw(text).await;
        // A ping after every case: its pong proves the session is alive and has handled
        // the case (frames of one socket are handled in order).
        ws.send(json!({"type": "ping"})).await;
        loop {
            let frame = ws
                .next()
                .await
                .unwrap_or_else(|| panic!("{case}: the server closed the socket"));
            match frame["type"].as_str() {
                Some("pong") => break,
                Some("error") => assert!(frame["code"].as_str().is_some(), "{case}: {frame}"),
                Some("message.created") if frame["message"]["role"] == "user" => accepted += 1,
                _ => {}
            }
        }
        sent += 1;
        // Stay under the per-socket frame rate: a flood is another test's subject.
        tokio::time::sleep(Duration::from_millis(150)).await;
    }
    println!("ws: {sent} frames in {:?}", started.elapsed());
    assert!(sent >= cases.min(20), "only {sent} frames ran");
    // Each accepted send stores its message and its answer; nothing else is stored.
    let expected = before + 2 * accepted;
    let deadline = Instant::now() + Duration::from_secs(10);
    while count_rows(&app, "messages").await != expected && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        count_rows(&app, "messages").await,
        expected,
        "{accepted} sends accepted"
    );
    assert!(ws.ping_answered().await, "the socket still answers");
}
