//! Settings: the embedded `config/default.toml`, then that file from `CONFIG_DIR` (so an
//! operator can edit it), then the environment variables named in DESIGN.md.

use std::path::{Path, PathBuf};

use anyhow::Context;
use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;

const EMBEDDED_DEFAULTS: &str = include_str!("../../config/default.toml");

#[derive(Debug, Deserialize)]
pub struct Settings {
    pub server: ServerSettings,
    pub database: DatabaseSettings,
    pub redis: RedisSettings,
    pub mail: MailSettings,
    pub auth: AuthSettings,
    pub rate_limit: RateLimitSettings,
    pub uploads: UploadSettings,
    pub billing: BillingSettings,
    pub model: ModelSettings,
    pub chat: ChatSettings,
    /// Where `default.toml` and `plans.toml` were looked for.
    #[serde(skip, default = "default_config_dir")]
    pub config_dir: PathBuf,
}

fn default_config_dir() -> PathBuf {
    PathBuf::from("config")
}

#[derive(Debug, Deserialize)]
pub struct ServerSettings {
    pub bind_addr: String,
    pub public_url: String,
    pub data_dir: PathBuf,
    pub web_dir: PathBuf,
    pub workers: usize,
    /// On SIGTERM, how long running answers may go on before they are stored as interrupted.
    pub shutdown_grace_secs: u64,
}

#[derive(Debug, Deserialize)]
pub struct DatabaseSettings {
    /// May carry a password, hence secret. Empty means the embedded SQLite file.
    pub url: SecretString,
    pub max_connections: u32,
}

#[derive(Debug, Deserialize)]
pub struct RedisSettings {
    pub url: SecretString,
    pub prefix: String,
    /// Longest wait for any one Redis call (connecting included).
    pub timeout_ms: u64,
    /// Events waiting for the relay's writer; past it, new ones are dropped.
    pub relay_queue: usize,
}

#[derive(Debug, Deserialize)]
pub struct MailSettings {
    pub smtp_url: SecretString,
    pub from: String,
}

#[derive(Debug, Deserialize)]
pub struct AuthSettings {
    pub jwt_secret: SecretString,
    pub session_days: i64,
    pub remember_days: i64,
    pub code_ttl_minutes: i64,
    pub max_code_attempts: i64,
    pub argon2_memory_kib: u32,
    pub argon2_iterations: u32,
    pub argon2_parallelism: u32,
    pub hash_concurrency: usize,
    pub hash_queue: usize,
}

#[derive(Debug, Deserialize)]
pub struct RateLimitSettings {
    pub ip_per_minute: u32,
    pub ip_burst: u32,
    pub email_per_minute: u32,
    pub email_burst: u32,
    pub trust_forwarded_for: bool,
}

#[derive(Debug, Deserialize)]
pub struct BillingSettings {
    /// How often the scheduler looks for plan changes, renewals and expiries that are due.
    pub scheduler_interval_secs: u64,
}

#[derive(Debug, Deserialize)]
pub struct ModelSettings {
    pub openai_api_key: SecretString,
    pub openai_base_url: String,
    pub timeout_secs: u64,
    /// Longest an answer may take in all, however steadily it streams.
    pub total_timeout_secs: u64,
    /// Sent to the model as the answer's token limit; 0 sends none.
    pub max_tokens: u32,
    pub demo_tokens_per_sec: u32,
    pub demo_reply_tokens: usize,
}

#[derive(Debug, Deserialize)]
pub struct ChatSettings {
    pub batch_ms: u64,
    pub session_queue: usize,
    pub heartbeat_secs: u64,
    pub idle_timeout_secs: u64,
    pub auth_timeout_secs: u64,
    pub max_message_chars: usize,
    pub history_messages: usize,
    /// Stamp `message.delta` with `emittedAt`, for the load harness's delay figures.
    pub frame_timestamps: bool,
}

#[derive(Debug, Deserialize)]
pub struct UploadSettings {
    pub avatar_max_mb: usize,
    pub avatar_px: u32,
}

/// An empty secret stands for "not configured".
pub fn is_set(secret: &SecretString) -> bool {
    !secret.expose_secret().trim().is_empty()
}

impl Settings {
    /// Settings from the process environment.
    pub fn load() -> anyhow::Result<Self> {
        Self::load_with(|key| std::env::var(key).ok())
    }

    /// Settings with `env` standing in for the environment (tests pass their own).
    pub fn load_with(env: impl Fn(&str) -> Option<String>) -> anyhow::Result<Self> {
        let dir = env("CONFIG_DIR").unwrap_or_else(|| "config".into());
        let file = Path::new(&dir).join("default.toml");
        let text = match std::fs::read_to_string(&file) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => EMBEDDED_DEFAULTS.to_owned(),
            Err(e) => return Err(e).with_context(|| format!("reading {}", file.display())),
        };
        let mut settings: Settings =
            toml::from_str(&text).with_context(|| format!("parsing {}", file.display()))?;
        settings.config_dir = dir.into();
        settings.apply_env(env)?;
        Ok(settings)
    }

    /// The embedded defaults alone, with no file and no environment.
    pub fn defaults() -> Self {
        toml::from_str(EMBEDDED_DEFAULTS).expect("embedded config/default.toml is valid")
    }

    fn apply_env(&mut self, env: impl Fn(&str) -> Option<String>) -> anyhow::Result<()> {
        let secret = |v: String| SecretString::from(v);
        if let Some(v) = env("BIND_ADDR") {
            self.server.bind_addr = v;
        }
        if let Some(v) = env("PUBLIC_URL") {
            self.server.public_url = v;
        }
        if let Some(v) = env("DATA_DIR") {
            self.server.data_dir = v.into();
        }
        if let Some(v) = env("WEB_DIR") {
            self.server.web_dir = v.into();
        }
        if let Some(v) = env("DATABASE_URL") {
            self.database.url = secret(v);
        }
        if let Some(v) = env("REDIS_URL") {
            self.redis.url = secret(v);
        }
        if let Some(v) = env("REDIS_PREFIX") {
            self.redis.prefix = v;
        }
        if let Some(v) = env("SMTP_URL") {
            self.mail.smtp_url = secret(v);
        }
        if let Some(v) = env("MAIL_FROM") {
            self.mail.from = v;
        }
        if let Some(v) = env("JWT_SECRET") {
            self.auth.jwt_secret = secret(v);
        }
        if let Some(v) = env("OPENAI_API_KEY") {
            self.model.openai_api_key = secret(v);
        }
        if let Some(v) = env("OPENAI_BASE_URL") {
            self.model.openai_base_url = v;
        }
        if let Some(v) = env("REDIS_TIMEOUT_MS") {
            self.redis.timeout_ms = v.parse().context("REDIS_TIMEOUT_MS must be a number")?;
        }
        if let Some(v) = env("MODEL_MAX_TOKENS") {
            self.model.max_tokens = v.parse().context("MODEL_MAX_TOKENS must be a number")?;
        }
        if let Some(v) = env("MODEL_TOTAL_TIMEOUT_SECS") {
            self.model.total_timeout_secs = v.parse().context("MODEL_TOTAL_TIMEOUT_SECS must be a number")?;
        }
        if let Some(v) = env("SHUTDOWN_GRACE_SECS") {
            self.server.shutdown_grace_secs = v.parse().context("SHUTDOWN_GRACE_SECS must be a number")?;
        }
        if let Some(v) = env("TRUST_FORWARDED_FOR") {
            self.rate_limit.trust_forwarded_for =
                v.parse().context("TRUST_FORWARDED_FOR must be true or false")?;
        }
        Ok(())
    }

    pub fn redis_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.redis.timeout_ms.max(1))
    }

    pub fn uploads_dir(&self) -> PathBuf {
        self.server.data_dir.join("uploads")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_overrides_file_defaults() {
        let s = Settings::load_with(|k| match k {
            "CONFIG_DIR" => Some("/nonexistent".into()),
            "BIND_ADDR" => Some("0.0.0.0:9000".into()),
            "DATABASE_URL" => Some("postgres://u:hunter2@db/chat".into()),
            _ => None,
        })
        .unwrap();
        assert_eq!(s.server.bind_addr, "0.0.0.0:9000");
        assert!(is_set(&s.database.url));
        assert!(!is_set(&s.redis.url));
        assert_eq!(s.auth.remember_days, 30);
    }

    #[test]
    fn secrets_are_redacted_in_debug_output() {
        let s = Settings::load_with(|k| match k {
            "CONFIG_DIR" => Some("/nonexistent".into()),
            "JWT_SECRET" => Some("hunter2-jwt".into()),
            "DATABASE_URL" => Some("postgres://u:hunter2@db/chat".into()),
            "SMTP_URL" => Some("smtp://u:hunter2@mail".into()),
            "OPENAI_API_KEY" => Some("sk-hunter2".into()),
            _ => None,
        })
        .unwrap();
        let debug = format!("{s:?}");
        assert!(!debug.contains("hunter2"), "{debug}");
        assert!(debug.contains("REDACTED"), "{debug}");
    }
}
