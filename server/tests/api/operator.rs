//! Operator commands run against the test server's database: `users seed` for load tests.

use chat_server::operator::{seed, Seed};
use serde_json::json;

use crate::helpers::{assert_ok, spawn_app};
use crate::ws::WsClient;

#[actix_web::test]
async fn seeded_users_share_a_password_get_their_plan_and_tokens_that_connect() {
    let app = spawn_app().await;
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("users.tsv");
    let ask = Seed {
        count: 3,
        password: "load-password",
        prefix: "load",
        plan: "plus",
        tokens: Some(&tokens),
        messages: 25,
    };
    let summary = seed(&app.state.settings, &ask).await.unwrap();
    assert!(summary.starts_with("3 users (3 new) on plus"), "{summary}");
    // Again: the users are kept, the tokens written anew.
    let again = seed(&app.state.settings, &ask).await.unwrap();
    assert!(again.starts_with("3 users (0 new)"), "{again}");

    let lines: Vec<(String, String)> = std::fs::read_to_string(&tokens)
        .unwrap()
        .lines()
        .map(|l| {
            let (e, t) = l.split_once('\t').unwrap();
            (e.to_owned(), t.to_owned())
        })
        .collect();
    let emails: Vec<&str> = lines.iter().map(|(e, _)| e.as_str()).collect();
    assert_eq!(
        emails,
        ["load0@example.com", "load1@example.com", "load2@example.com"]
    );
    for (email, token) in &lines {
        let (_, ready) = WsClient::ready(&app, token).await;
        assert_eq!(ready["user"]["email"], json!(email));
        assert_eq!(ready["usage"]["limitInfo"]["limitType"], json!("plus"));
    }
    // Each user got 25 messages of history (a second run added none), found by search.
    let token = &lines[0].1;
    let list = assert_ok(app.get_auth("/api/conversations", token).await).await;
    let conversations = list["data"].as_array().unwrap();
    assert_eq!(conversations.len(), 2, "{list}");
    let mut counts = Vec::new();
    let mut word = String::new();
    for c in conversations {
        let path = format!("/api/conversations/{}", c["_id"].as_str().unwrap());
        let one = assert_ok(app.get_auth(&path, token).await).await;
        let messages = one["data"]["messages"].as_array().unwrap();
        assert_eq!(one["data"]["currentMessageId"], messages.last().unwrap()["_id"]);
        counts.push(messages.len());
        word = messages[0]["content"]
            .as_str()
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .to_owned();
    }
    counts.sort();
    assert_eq!(counts, [5, 20]);
    let hits = assert_ok(
        app.get_auth(&format!("/api/conversations/search?q={word}"), token)
            .await,
    )
    .await;
    assert!(!hits["data"].as_array().unwrap().is_empty(), "{word}: {hits}");
    let body = assert_ok(
        app.post(
            "/api/auth/login",
            json!({"email": "load2@example.com", "password": "load-password"}),
        )
        .await,
    )
    .await;
    assert!(body.to_string().contains("load2@example.com"), "{body}");
}

#[actix_web::test]
async fn seeding_refuses_bad_input_and_creates_nothing() {
    let app = spawn_app().await;
    let settings = &app.state.settings;
    let base = || Seed {
        count: 2,
        password: "load-password",
        prefix: "load",
        plan: "free",
        tokens: None,
        messages: 0,
    };
    let cases = [
        (Seed { count: 0, ..base() }, "--count"),
        (
            Seed {
                prefix: "a b",
                ..base()
            },
            "--prefix",
        ),
        (Seed { prefix: "", ..base() }, "--prefix"),
        (
            Seed {
                plan: "gold",
                ..base()
            },
            "unknown plan",
        ),
        (
            Seed {
                password: "abc",
                ..base()
            },
            "password",
        ),
    ];
    for (ask, expected) in cases {
        let err = seed(settings, &ask).await.unwrap_err().to_string();
        assert!(err.contains(expected), "{err} should mention {expected}");
    }
    assert!(app
        .state
        .db
        .user_by_email("load0@example.com")
        .await
        .unwrap()
        .is_none());
}
