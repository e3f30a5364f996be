//! What the server keeps to itself and what it refuses to start with.

use chat_server::accounts::codes::CodeKey;
use chat_server::config::Settings;
use chat_server::startup::Application;
use secrecy::SecretString;
use serde_json::json;

use crate::helpers::{assert_ok, spawn_app, spawn_two_at_once, TEST_JWT_SECRET};
use crate::ws::WsClient;

#[actix_web::test]
async fn two_instances_on_one_database_without_jwt_secret_accept_each_others_tokens() {
    let (first, second) = spawn_two_at_once(|s| s.auth.jwt_secret = SecretString::from("")).await;
    let ann = first.register_ann().await;
    let profile = assert_ok(second.get_auth("/api/auth/profile", &ann.token).await).await;
    assert_eq!(profile["_id"], json!(ann.id));
    let bob = second.register("Bob", "bob@example.com", "secret2").await;
    assert_ok(first.get_auth("/api/auth/profile", &bob.token).await).await;
    // The socket of the second instance takes the first one's token.
    let (_ws, ready) = WsClient::ready(&second, &ann.token).await;
    assert_eq!(ready["user"]["_id"], json!(ann.id));
}

#[actix_web::test]
async fn codes_are_hashed_with_a_key_of_their_own() {
    let app = spawn_app().await;
    let token_key = CodeKey::new(TEST_JWT_SECRET.as_bytes());
    assert_ne!(
        app.state.accounts.codes.hash("code", "123456"),
        token_key.hash("code", "123456")
    );
}

fn settings_for_refusal(configure: impl FnOnce(&mut Settings)) -> (Settings, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Settings::defaults();
    s.server.bind_addr = "127.0.0.1:0".into();
    s.server.data_dir = dir.path().to_owned();
    s.config_dir = dir.path().join("no-config");
    configure(&mut s);
    (s, dir)
}

async fn refusal(settings: Settings) -> String {
    match Application::build(settings).await {
        Ok(_) => panic!("the server started"),
        Err(e) => format!("{e:#}"),
    }
}

#[actix_web::test]
async fn a_short_jwt_secret_is_refused_at_start() {
    let (s, _dir) = settings_for_refusal(|s| s.auth.jwt_secret = SecretString::from("test-secret"));
    let message = refusal(s).await;
    assert!(message.contains("JWT_SECRET is 11 bytes"), "{message}");
    assert!(message.contains("at least 32"), "{message}");
}

#[actix_web::test]
async fn postgres_without_redis_is_refused_at_start_unless_allowed() {
    let (s, _dir) = settings_for_refusal(|s| {
        s.database.url = SecretString::from("postgres://nobody@127.0.0.1:1/none");
    });
    let message = refusal(s).await;
    assert!(message.contains("REDIS_URL is unset"), "{message}");
    assert!(message.contains("ALLOW_LOCAL_QUOTAS=true"), "{message}");
    // Allowed, it gets as far as connecting to that (absent) database.
    let (s, _dir) = settings_for_refusal(|s| {
        s.database.url = SecretString::from("postgres://nobody@127.0.0.1:1/none");
        s.database.max_connections = 1;
        s.redis.allow_local_quotas = true;
    });
    let message = refusal(s).await;
    assert!(message.contains("connecting to Postgres"), "{message}");
}

#[test]
fn the_old_trust_forwarded_for_setting_is_refused_with_a_pointer_to_trusted_proxies() {
    let err = Settings::load_with(|k| match k {
        "CONFIG_DIR" => Some("/nonexistent".into()),
        "TRUST_FORWARDED_FOR" => Some("true".into()),
        _ => None,
    })
    .unwrap_err();
    assert!(err.to_string().contains("TRUSTED_PROXIES"), "{err}");
    let s = Settings::load_with(|k| match k {
        "CONFIG_DIR" => Some("/nonexistent".into()),
        "TRUSTED_PROXIES" => Some("10.0.0.0/8, 192.168.1.1".into()),
        _ => None,
    })
    .unwrap();
    assert_eq!(s.rate_limit.trusted_proxies, ["10.0.0.0/8", "192.168.1.1"]);
}
