//! Per-address and per-e-mail rate limits on the account calls that can be abused
//! (guessing passwords or codes, mail bombing). In memory per instance: behind a load
//! balancer each instance counts its own share, which still bounds an attacker.

use std::net::IpAddr;
use std::num::NonZeroU32;
use std::time::Duration;

use actix_web::HttpRequest;
use governor::clock::{Clock as _, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};

use crate::config::RateLimitSettings;
use crate::error::{ApiError, ErrorCode, Result};

/// The limited calls; each has its own budget, so a login flood does not block resends.
#[derive(Debug, Clone, Copy, Hash, PartialEq, Eq)]
pub enum Action {
    Login,
    Register,
    Resend,
    VerifyRegistration,
    Forgot,
    VerifyReset,
    ChangePassword,
}

pub struct RateLimits {
    by_ip: DefaultKeyedRateLimiter<(Action, IpAddr)>,
    by_email: DefaultKeyedRateLimiter<(Action, String)>,
    trust_forwarded_for: bool,
}

fn quota(per_minute: u32, burst: u32) -> Quota {
    let per_minute = NonZeroU32::new(per_minute.max(1)).expect("at least one");
    let burst = NonZeroU32::new(burst.max(1)).expect("at least one");
    Quota::per_minute(per_minute).allow_burst(burst)
}

impl RateLimits {
    pub fn new(s: &RateLimitSettings) -> Self {
        RateLimits {
            by_ip: RateLimiter::keyed(quota(s.ip_per_minute, s.ip_burst)),
            by_email: RateLimiter::keyed(quota(s.email_per_minute, s.email_burst)),
            trust_forwarded_for: s.trust_forwarded_for,
        }
    }

    /// The client's address: the peer, or the proxy's `X-Forwarded-For` when trusted.
    pub fn client_ip(&self, req: &HttpRequest) -> Option<IpAddr> {
        if self.trust_forwarded_for {
            if let Some(ip) = req.connection_info().realip_remote_addr() {
                if let Ok(ip) = ip.parse() {
                    return Some(ip);
                }
            }
        }
        req.peer_addr().map(|a| a.ip())
    }

    pub fn check_ip(&self, action: Action, req: &HttpRequest) -> Result<()> {
        let Some(ip) = self.client_ip(req) else {
            return Ok(());
        };
        self.by_ip.check_key(&(action, ip)).map_err(too_many)
    }

    pub fn check_email(&self, action: Action, email: &str) -> Result<()> {
        self.by_email
            .check_key(&(action, email.to_owned()))
            .map_err(too_many)
    }

    /// Forgets keys whose budget is full again, so memory stays bounded.
    pub fn shrink(&self) {
        self.by_ip.retain_recent();
        self.by_email.retain_recent();
    }
}

fn too_many(not_until: governor::NotUntil<<DefaultClock as governor::clock::Clock>::Instant>) -> ApiError {
    let wait: Duration = not_until.wait_time_from(DefaultClock::default().now());
    ApiError::retry_after(ErrorCode::RateLimited, wait.as_secs_f64().ceil() as u64)
}
