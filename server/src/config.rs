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
    pub files: FileSettings,
    pub billing: BillingSettings,
    pub invoice: InvoiceSettings,
    pub model: ModelSettings,
    pub chat: ChatSettings,
    pub search: SearchSettings,
    pub metrics: MetricsSettings,
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

/// Prometheus metrics (`crate::metrics`).
#[derive(Debug, Deserialize)]
pub struct MetricsSettings {
    /// Where `/metrics` listens, apart from the API; empty: metrics are off. It answers
    /// anyone who reaches it, so it must be a private address.
    pub bind_addr: String,
}

impl MetricsSettings {
    pub fn enabled(&self) -> bool {
        !self.bind_addr.trim().is_empty()
    }
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
    /// Postgres without Redis counts quotas and rate limits per instance; the server
    /// refuses that unless told it is meant (one instance on Postgres).
    pub allow_local_quotas: bool,
    /// Longest wait for any one Redis call (connecting included).
    pub timeout_ms: u64,
    /// Events waiting for the relay's writer; past it, new ones are dropped.
    pub relay_queue: usize,
    /// How long a running answer's lease lasts unless its instance renews it; once it
    /// lapses (the instance died), another instance ends the answer as interrupted.
    pub answer_lease_ms: u64,
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
    /// Code checks per account and flow in an hour, across resends and new requests.
    pub max_code_attempts_per_hour: i64,
    pub argon2_memory_kib: u32,
    pub argon2_iterations: u32,
    pub argon2_parallelism: u32,
    pub hash_concurrency: usize,
    pub hash_queue: usize,
}

#[derive(Debug, Deserialize)]
pub struct RateLimitSettings {
    /// Every budget below is counted in fixed windows of this length.
    pub window_secs: u64,
    /// Wrong passwords or codes for one e-mail from one address.
    pub pair_failures: u32,
    /// Wrong passwords or codes from one address, whatever the e-mail.
    pub address_failures: u32,
    /// Limited calls from one address, successful or not.
    pub address_calls: u32,
    /// Code and notice mails to one e-mail address.
    pub email_mails: u32,
    /// Reads of share links (the page and its images) from one address: no login stands
    /// in the way of someone trying tokens, or scraping a link.
    pub shared_reads: u32,
    /// Share links made, and shared conversations continued, by one user.
    pub share_creates: u32,
    /// Account exports, and apart from them imports, one user may start.
    pub portability: u32,
    /// CIDRs of reverse proxies whose `X-Forwarded-For` / `Forwarded` is believed.
    pub trusted_proxies: Vec<String>,
}

#[derive(Debug, Deserialize)]
pub struct BillingSettings {
    /// How often the scheduler looks for plan changes, renewals and expiries that are due.
    pub scheduler_interval_secs: u64,
    /// "demo" or "stripe"; a set `stripe_secret_key` means Stripe whatever this says.
    pub provider: String,
    pub stripe_secret_key: SecretString,
    pub stripe_publishable_key: String,
    pub stripe_webhook_secret: SecretString,
    pub stripe_api_base: String,
    pub stripe_js_url: String,
    /// How old a webhook signature may be; older deliveries are refused as replays.
    pub webhook_tolerance_secs: i64,
    /// How long a plan the provider renews keeps its access past its end date while
    /// the renewal invoice is charged.
    pub renewal_grace_hours: i64,
    /// The EU's VIES REST API, which confirms a VAT number before reverse charge.
    pub vies_url: String,
    /// Longest wait for VIES: a checkout never hangs on it.
    pub vies_timeout_secs: u64,
    /// A checkout asks VIES again when the buyer's last check is older than this.
    pub vies_max_age_days: i64,
    /// MNB's exchange rate web service (SOAP), for the VAT in HUF of a Hungarian seller's
    /// EUR invoices; empty: the fallback alone.
    pub huf_rate_url: String,
    pub huf_rate_timeout_secs: u64,
    /// Forints for one euro when MNB does not answer (0: none, and such an invoice then
    /// states no VAT in HUF; logged as an error).
    pub huf_rate_fallback: f64,
}

/// The seller on invoices; `seller_country` is also where domestic VAT applies.
#[derive(Debug, Deserialize)]
pub struct InvoiceSettings {
    pub seller_name: String,
    pub seller_address: String,
    pub seller_vat_number: String,
    pub seller_country: String,
}

#[derive(Debug, Deserialize)]
pub struct ModelSettings {
    pub openai_api_key: SecretString,
    pub openai_base_url: String,
    /// Chat models that take images; a message with images for another model goes to
    /// the plan's `imageAnalysisModel`.
    pub vision_models: Vec<String>,
    /// Embed document pieces through the endpoint's `/embeddings` (the plan's
    /// `embeddingModel`); off, or with the demo model, documents are ranked by BM25.
    pub embeddings: bool,
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
    // Abuse limits (docs/protocol.md, "Limits").
    pub max_parallel_answers: usize,
    pub max_frames_per_sec: u32,
    pub max_requests_in_flight: usize,
    pub max_tabs_per_user: usize,
    pub max_sockets_per_address: usize,
    pub token_recheck_secs: u64,
    pub write_timeout_secs: u64,
}

/// Web search: providers, and the bounds of what one search reads (`[search]`).
#[derive(Debug, Clone, Deserialize)]
pub struct SearchSettings {
    pub searxng_url: String,
    pub google_cse_key: SecretString,
    pub google_cse_id: String,
    pub google_cse_url: String,
    pub results_per_query: usize,
    pub max_queries: usize,
    pub max_pages: usize,
    pub search_timeout_secs: u64,
    pub page_timeout_secs: u64,
    pub page_max_kb: usize,
    pub page_text_chars: usize,
    pub deep_rounds: usize,
    pub deep_searches: u32,
    pub deep_pages: usize,
    /// Test-only: `ip:port` pairs fetched although private.
    pub fetch_allow: Vec<std::net::SocketAddr>,
}

impl SearchSettings {
    pub fn google_configured(&self) -> bool {
        !self.google_cse_key.expose_secret().is_empty() && !self.google_cse_id.is_empty()
    }

    pub fn searxng_configured(&self) -> bool {
        !self.searxng_url.is_empty()
    }
}

#[derive(Debug, Deserialize)]
pub struct UploadSettings {
    pub avatar_max_mb: usize,
    pub avatar_px: u32,
    /// Largest image accepted, in pixels (width × height), checked before decoding.
    pub image_max_pixels: u64,
    /// Memory one decode may allocate.
    pub image_max_memory_mb: u64,
    /// Images decoded at once; past it uploads answer 429 `server_busy`.
    pub image_decodes: usize,
    /// Memory one document reader process may allocate (`documents::reader`).
    pub document_max_memory_mb: u64,
    /// The program that reads documents; empty: this server's own binary.
    #[serde(default)]
    pub document_reader: String,
}

/// Attachments (`/api/files`): where they are kept and how images are stored. What a
/// user may upload is the plan's (`files` in plans.toml).
#[derive(Debug, Deserialize)]
pub struct FileSettings {
    /// Empty: files live under `$DATA_DIR/files`. Set: in this S3 bucket.
    pub s3_bucket: String,
    /// An S3-compatible endpoint (MinIO, R2, a test fake); empty for AWS itself.
    pub s3_endpoint: String,
    pub s3_region: String,
    pub s3_access_key_id: String,
    pub s3_secret_access_key: SecretString,
    /// A stored image's longest side; larger ones are scaled down.
    pub image_max_px: u32,
    /// A thumbnail fits in a square of this side.
    pub thumbnail_px: u32,
    /// An upload never sent in a message is deleted after this.
    pub unsent_hours: u64,
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

    /// The environment over the files, section by section. The sections run in this
    /// order so that, of several bad values, the one reported first stays the same.
    fn apply_env(&mut self, env: impl Fn(&str) -> Option<String>) -> anyhow::Result<()> {
        self.apply_connections_env(&env)?;
        self.apply_trust_env(&env)?;
        self.apply_billing_env(&env)?;
        self.apply_limits_env(&env)?;
        self.apply_files_and_search_env(&env)?;
        if let Some(v) = env("SHUTDOWN_GRACE_SECS") {
            self.server.shutdown_grace_secs = v.parse().context("SHUTDOWN_GRACE_SECS must be a number")?;
        }
        Ok(())
    }

    /// Where the server listens and what it connects to: database, Redis, mail, the model API.
    fn apply_connections_env(&mut self, env: &impl Fn(&str) -> Option<String>) -> anyhow::Result<()> {
        let secret = |v: String| SecretString::from(v);
        if let Some(v) = env("BIND_ADDR") {
            self.server.bind_addr = v;
        }
        if let Some(v) = env("METRICS_BIND_ADDR") {
            self.metrics.bind_addr = v;
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
        if let Some(v) = env("OPENAI_EMBEDDINGS") {
            self.model.embeddings = v.parse().context("OPENAI_EMBEDDINGS must be true or false")?;
        }
        Ok(())
    }

    /// Whom the server believes about addresses, and whether quotas may be counted per instance.
    fn apply_trust_env(&mut self, env: &impl Fn(&str) -> Option<String>) -> anyhow::Result<()> {
        if env("TRUST_FORWARDED_FOR").is_some() {
            // Believing every peer's header let anyone pick their address; refuse to
            // start rather than silently ignore an operator's intent.
            anyhow::bail!(
                "TRUST_FORWARDED_FOR is no longer supported: set TRUSTED_PROXIES to the CIDRs of your reverse proxies"
            );
        }
        if let Some(v) = env("TRUSTED_PROXIES") {
            self.rate_limit.trusted_proxies = v
                .split(',')
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(str::to_owned)
                .collect();
        }
        if let Some(v) = env("ALLOW_LOCAL_QUOTAS") {
            self.redis.allow_local_quotas = v.parse().context("ALLOW_LOCAL_QUOTAS must be true or false")?;
        }
        Ok(())
    }

    /// Payments and what invoices say of the seller (plain text: nothing here can fail).
    fn apply_billing_env(&mut self, env: &impl Fn(&str) -> Option<String>) -> anyhow::Result<()> {
        let secret = |v: String| SecretString::from(v);
        if let Some(v) = env("BILLING_PROVIDER") {
            self.billing.provider = v;
        }
        if let Some(v) = env("STRIPE_SECRET_KEY") {
            self.billing.stripe_secret_key = secret(v);
        }
        if let Some(v) = env("STRIPE_PUBLISHABLE_KEY") {
            self.billing.stripe_publishable_key = v;
        }
        if let Some(v) = env("STRIPE_WEBHOOK_SECRET") {
            self.billing.stripe_webhook_secret = secret(v);
        }
        if let Some(v) = env("STRIPE_API_BASE") {
            self.billing.stripe_api_base = v;
        }
        if let Some(v) = env("STRIPE_JS_URL") {
            self.billing.stripe_js_url = v;
        }
        if let Some(v) = env("VIES_URL") {
            self.billing.vies_url = v;
        }
        if let Some(v) = env("HUF_RATE_URL") {
            self.billing.huf_rate_url = v;
        }
        if let Some(v) = env("HUF_RATE_FALLBACK") {
            self.billing.huf_rate_fallback = v
                .parse()
                .context("HUF_RATE_FALLBACK must be a number (forints for one euro)")?;
        }
        if let Some(v) = env("INVOICE_SELLER_NAME") {
            self.invoice.seller_name = v;
        }
        if let Some(v) = env("INVOICE_SELLER_ADDRESS") {
            self.invoice.seller_address = v;
        }
        if let Some(v) = env("INVOICE_SELLER_VAT_NUMBER") {
            self.invoice.seller_vat_number = v;
        }
        if let Some(v) = env("INVOICE_SELLER_COUNTRY") {
            self.invoice.seller_country = v.trim().to_ascii_uppercase();
        }
        Ok(())
    }

    /// Numbers that bound sockets, Redis calls, answer leases and model calls.
    fn apply_limits_env(&mut self, env: &impl Fn(&str) -> Option<String>) -> anyhow::Result<()> {
        if let Some(v) = env("MAX_SOCKETS_PER_ADDRESS") {
            self.chat.max_sockets_per_address =
                v.parse().context("MAX_SOCKETS_PER_ADDRESS must be a number")?;
        }
        if let Some(v) = env("REDIS_TIMEOUT_MS") {
            self.redis.timeout_ms = v.parse().context("REDIS_TIMEOUT_MS must be a number")?;
        }
        if let Some(v) = env("ANSWER_LEASE_MS") {
            self.redis.answer_lease_ms = v.parse().context("ANSWER_LEASE_MS must be a number")?;
        }
        if let Some(v) = env("MODEL_MAX_TOKENS") {
            self.model.max_tokens = v.parse().context("MODEL_MAX_TOKENS must be a number")?;
        }
        if let Some(v) = env("MODEL_TOTAL_TIMEOUT_SECS") {
            self.model.total_timeout_secs = v.parse().context("MODEL_TOTAL_TIMEOUT_SECS must be a number")?;
        }
        Ok(())
    }

    /// Where attachments are stored, and how the web is searched.
    fn apply_files_and_search_env(&mut self, env: &impl Fn(&str) -> Option<String>) -> anyhow::Result<()> {
        let secret = |v: String| SecretString::from(v);
        if let Some(v) = env("S3_BUCKET") {
            self.files.s3_bucket = v;
        }
        if let Some(v) = env("S3_ENDPOINT") {
            self.files.s3_endpoint = v;
        }
        if let Some(v) = env("S3_REGION") {
            self.files.s3_region = v;
        }
        if let Some(v) = env("S3_ACCESS_KEY_ID") {
            self.files.s3_access_key_id = v;
        }
        if let Some(v) = env("S3_SECRET_ACCESS_KEY") {
            self.files.s3_secret_access_key = secret(v);
        }
        if let Some(v) = env("SEARXNG_URL") {
            self.search.searxng_url = v;
        }
        if let Some(v) = env("GOOGLE_CSE_KEY") {
            self.search.google_cse_key = v.into();
        }
        if let Some(v) = env("GOOGLE_CSE_ID") {
            self.search.google_cse_id = v;
        }
        if let Some(v) = env("GOOGLE_CSE_URL") {
            self.search.google_cse_url = v;
        }
        if let Some(v) = env("SEARCH_FETCH_ALLOW") {
            self.search.fetch_allow = v
                .split(',')
                .map(str::trim)
                .filter(|a| !a.is_empty())
                .map(|a| a.parse().context("SEARCH_FETCH_ALLOW holds ip:port pairs"))
                .collect::<anyhow::Result<_>>()?;
        }
        Ok(())
    }

    pub fn redis_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.redis.timeout_ms.max(1))
    }

    pub fn uploads_dir(&self) -> PathBuf {
        self.server.data_dir.join("uploads")
    }

    /// Attachments on the local disk (when no S3 bucket is set).
    pub fn files_dir(&self) -> PathBuf {
        self.server.data_dir.join("files")
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
        assert!(!s.metrics.enabled(), "metrics are off unless asked for");
        assert!(is_set(&s.database.url));
        assert!(!is_set(&s.redis.url));
        assert_eq!(s.auth.remember_days, 30);
    }

    #[test]
    fn metrics_listen_where_metrics_bind_addr_says() {
        let s = Settings::load_with(|k| match k {
            "CONFIG_DIR" => Some("/nonexistent".into()),
            "METRICS_BIND_ADDR" => Some("10.0.0.5:9100".into()),
            _ => None,
        })
        .unwrap();
        assert_eq!(s.metrics.bind_addr, "10.0.0.5:9100");
        assert!(s.metrics.enabled());
    }

    #[test]
    fn secrets_are_redacted_in_debug_output() {
        let s = Settings::load_with(|k| match k {
            "CONFIG_DIR" => Some("/nonexistent".into()),
            "JWT_SECRET" => Some("hunter2-jwt".into()),
            "DATABASE_URL" => Some("postgres://u:hunter2@db/chat".into()),
            "SMTP_URL" => Some("smtp://u:hunter2@mail".into()),
            "OPENAI_API_KEY" => Some("sk-hunter2".into()),
            "STRIPE_SECRET_KEY" => Some("sk_test_hunter2".into()),
            "STRIPE_WEBHOOK_SECRET" => Some("whsec_hunter2".into()),
            _ => None,
        })
        .unwrap();
        let debug = format!("{s:?}");
        assert!(!debug.contains("hunter2"), "{debug}");
        assert!(debug.contains("REDACTED"), "{debug}");
    }
}
