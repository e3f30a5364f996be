//! Password hashing with argon2id, off the request threads and bounded: at most
//! `concurrency` hashes run at once and `queue` more may wait; past that the caller gets
//! 429, so a login flood cannot starve everything else of CPU.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use anyhow::Context;
use argon2::password_hash::rand_core::OsRng;
use argon2::password_hash::{PasswordHash, PasswordHasher as _, PasswordVerifier as _, SaltString};
use argon2::{Algorithm, Argon2, Params, Version};
use tokio::sync::Semaphore;

use crate::config::AuthSettings;
use crate::error::{ApiError, ErrorCode, Result};

#[derive(Clone)]
pub struct PasswordHasher {
    params: Params,
    permits: Arc<Semaphore>,
    waiting: Arc<AtomicUsize>,
    queue: usize,
    /// Verified against when an e-mail is unknown, so the answer takes as long either way.
    dummy_hash: Arc<String>,
}

impl PasswordHasher {
    pub fn new(settings: &AuthSettings) -> anyhow::Result<Self> {
        let params = Params::new(
            settings.argon2_memory_kib,
            settings.argon2_iterations,
            settings.argon2_parallelism,
            None,
        )
        .map_err(|e| anyhow::anyhow!("invalid argon2 parameters: {e}"))?;
        let concurrency = match settings.hash_concurrency {
            0 => std::thread::available_parallelism().map_or(2, |n| n.get()),
            n => n,
        };
        let dummy_hash = hash_with(&params, "dummy password")?;
        Ok(PasswordHasher {
            params,
            permits: Arc::new(Semaphore::new(concurrency)),
            waiting: Arc::new(AtomicUsize::new(0)),
            queue: settings.hash_queue,
            dummy_hash: Arc::new(dummy_hash),
        })
    }

    pub async fn hash(&self, password: &str) -> Result<String> {
        let params = self.params.clone();
        let password = password.to_owned();
        self.run(move || hash_with(&params, &password))
            .await?
            .map_err(ApiError::from)
    }

    /// Whether `password` matches `hash`; with no hash (unknown user) it spends the same
    /// time and answers false.
    pub async fn verify(&self, password: &str, hash: Option<&str>) -> Result<bool> {
        let known = hash.is_some();
        let hash = hash.map_or_else(|| self.dummy_hash.as_str().to_owned(), str::to_owned);
        let password = password.to_owned();
        let matches = self
            .run(move || {
                let parsed = PasswordHash::new(&hash).map_err(|e| anyhow::anyhow!("stored hash: {e}"))?;
                Ok::<_, anyhow::Error>(
                    Argon2::default()
                        .verify_password(password.as_bytes(), &parsed)
                        .is_ok(),
                )
            })
            .await??;
        Ok(known && matches)
    }

    async fn run<T: Send + 'static>(&self, work: impl FnOnce() -> T + Send + 'static) -> Result<T> {
        let queued = self.waiting.fetch_add(1, Ordering::SeqCst);
        let permit = if queued >= self.queue + self.permits.available_permits() {
            None
        } else {
            self.permits.clone().acquire_owned().await.ok()
        };
        self.waiting.fetch_sub(1, Ordering::SeqCst);
        let Some(permit) = permit else {
            return Err(ApiError::retry_after(ErrorCode::ServerBusy, 1));
        };
        let result = tokio::task::spawn_blocking(move || {
            let _permit = permit;
            work()
        })
        .await
        .context("password hashing task")?;
        Ok(result)
    }
}

fn hash_with(params: &Params, password: &str) -> anyhow::Result<String> {
    let salt = SaltString::generate(&mut OsRng);
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params.clone())
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| anyhow::anyhow!("hashing a password: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Settings;

    fn hasher() -> PasswordHasher {
        let mut s = Settings::defaults().auth;
        s.argon2_memory_kib = 1024;
        PasswordHasher::new(&s).unwrap()
    }

    #[tokio::test]
    async fn hashes_verify_only_their_own_password() {
        let h = hasher();
        let hash = h.hash("secret1").await.unwrap();
        assert!(hash.starts_with("$argon2id$"));
        assert!(h.verify("secret1", Some(&hash)).await.unwrap());
        assert!(!h.verify("secret2", Some(&hash)).await.unwrap());
        assert!(!h.verify("dummy password", None).await.unwrap());
    }

    #[tokio::test]
    async fn past_the_queue_hashing_answers_busy() {
        let mut s = Settings::defaults().auth;
        s.argon2_memory_kib = 1024;
        s.hash_concurrency = 1;
        s.hash_queue = 0;
        let h = PasswordHasher::new(&s).unwrap();
        let busy_permit = h.permits.clone().acquire_owned().await.unwrap();
        let err = h.hash("secret1").await.unwrap_err();
        assert_eq!(err.code(), ErrorCode::ServerBusy);
        drop(busy_permit);
        assert!(h.hash("secret1").await.is_ok());
    }
}
