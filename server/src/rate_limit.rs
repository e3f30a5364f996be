//! Rate limits on the account calls that can be abused: guessing passwords or codes, mail
//! bombing, hashing floods; and on share links (public reads, new links). Counted in fixed windows, in Redis when it is configured (so
//! every instance shares one budget) or in memory.
//!
//! Wrong guesses are what count against an e-mail, and only together with the address
//! they come from: a stranger's failures from elsewhere never lock the owner out, and the
//! owner's own successes cost nothing.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;

use actix_web::http::header::HeaderName;
use actix_web::HttpRequest;
use anyhow::Context;
use ipnet::IpNet;

use crate::clock::SharedClock;
use crate::config::RateLimitSettings;
use crate::error::{ApiError, ErrorCode, Result};

pub struct RateLimits {
    window_ms: i64,
    pair_failures: u32,
    address_failures: u32,
    address_calls: u32,
    email_mails: u32,
    shared_reads: u32,
    share_creates: u32,
    portability: u32,
    trusted_proxies: Vec<IpNet>,
    store: Store,
    clock: SharedClock,
}

enum Store {
    /// Key → (window index, count).
    Memory(Mutex<HashMap<String, (i64, u32)>>),
    Redis {
        conn: crate::redis_conn::Redis,
        prefix: String,
    },
}

/// Failures counted up front for one guess (a password or a code); a right guess gives
/// them back with [`Attempt::succeeded`], so parallel guesses cannot pass the cap.
#[must_use = "a right guess must give its failure back"]
pub struct Attempt {
    keys: Vec<String>,
}

impl RateLimits {
    pub fn new(
        s: &RateLimitSettings,
        redis: Option<(crate::redis_conn::Redis, String)>,
        clock: SharedClock,
    ) -> anyhow::Result<Self> {
        let trusted_proxies = s
            .trusted_proxies
            .iter()
            .map(|c| {
                parse_cidr(c).with_context(|| format!("TRUSTED_PROXIES: {c:?} is not a CIDR or address"))
            })
            .collect::<anyhow::Result<_>>()?;
        let store = match redis {
            Some((conn, prefix)) => Store::Redis { conn, prefix },
            None => Store::Memory(Mutex::new(HashMap::new())),
        };
        Ok(RateLimits {
            window_ms: (s.window_secs.max(1) * 1000) as i64,
            pair_failures: s.pair_failures,
            address_failures: s.address_failures,
            address_calls: s.address_calls,
            email_mails: s.email_mails,
            shared_reads: s.shared_reads,
            share_creates: s.share_creates,
            portability: s.portability,
            trusted_proxies,
            store,
            clock,
        })
    }

    /// Counts one limited call from the request's address, successful or not.
    pub async fn call(&self, req: &HttpRequest) -> Result<()> {
        self.call_from(self.client_key(req).as_deref()).await
    }

    /// [`Self::call`] for a caller known by its [`Self::client_key`].
    pub async fn call_from(&self, client: Option<&str>) -> Result<()> {
        let Some(address) = client else {
            return Ok(());
        };
        self.count(&format!("call:{address}"), self.address_calls).await
    }

    /// Counts one mail (code or notice) to `email`.
    pub async fn mail(&self, email: &str) -> Result<()> {
        self.count(&format!("mail:{email}"), self.email_mails).await
    }

    /// Counts one read of a share link (its page or an image) from the request's address.
    pub async fn shared_read(&self, req: &HttpRequest) -> Result<()> {
        match self.client_key(req) {
            Some(address) => self.count(&format!("shared:{address}"), self.shared_reads).await,
            None => Ok(()),
        }
    }

    /// Counts one share link made, or one shared conversation continued, by the user.
    pub async fn share_create(&self, user_id: &str) -> Result<()> {
        self.count(&format!("share:{user_id}"), self.share_creates).await
    }

    /// Adds one to `key`; 429 past `budget` in this window (the refused call is given back,
    /// so a client that waits is not held back by its own refusals).
    async fn count(&self, key: &str, budget: u32) -> Result<()> {
        if self.hit(key).await > budget {
            self.give_back(key).await;
            return Err(self.too_many(ErrorCode::RateLimited));
        }
        Ok(())
    }

    /// Counts an export or an import (`what`) that `user_id` starts: each reads or
    /// writes a whole account, so a user cannot run many of them at once.
    pub async fn portability(&self, what: &str, user_id: &str) -> Result<()> {
        let key = format!("{what}:{user_id}");
        if self.hit(&key).await > self.portability {
            self.give_back(&key).await;
            return Err(self.too_many(ErrorCode::RateLimited));
        }
        Ok(())
    }

    /// Counts a guess for `email` as a failure of this address and of this address with
    /// `email`, before it is checked; 429 when either budget is spent.
    pub async fn attempt(&self, req: &HttpRequest, email: &str) -> Result<Attempt> {
        self.attempt_from(self.client_key(req).as_deref(), email).await
    }

    /// [`Self::attempt`] for a caller already known by its [`Self::client_key`] (`None`:
    /// not limited), for the rules that run away from the request.
    pub async fn attempt_from(&self, client: Option<&str>, email: &str) -> Result<Attempt> {
        let Some(address) = client else {
            return Ok(Attempt { keys: Vec::new() });
        };
        let pair = format!("fail:{address}:{email}");
        let from_address = format!("fail:{address}");
        let over_pair = self.hit(&pair).await > self.pair_failures;
        let over_address = self.hit(&from_address).await > self.address_failures;
        let attempt = Attempt {
            keys: vec![pair, from_address],
        };
        if over_pair || over_address {
            self.succeeded(attempt).await;
            return Err(self.too_many(ErrorCode::RateLimited));
        }
        Ok(attempt)
    }

    /// The guess was right: it was no failure.
    pub async fn succeeded(&self, attempt: Attempt) {
        for key in &attempt.keys {
            self.give_back(key).await;
        }
    }

    /// The address a request is limited under: the client's, with IPv6 cut to its /64
    /// (one subscriber usually holds a whole /64).
    pub fn client_key(&self, req: &HttpRequest) -> Option<String> {
        self.client_ip(req).map(limit_key)
    }

    /// The peer, or, when the peer is a trusted proxy, the rightmost address in its
    /// forwarding header that is not a trusted proxy. Addresses left of that were written
    /// by the client and prove nothing.
    pub fn client_ip(&self, req: &HttpRequest) -> Option<IpAddr> {
        let peer = req.peer_addr()?.ip();
        if !self.is_trusted(peer) {
            return Some(peer);
        }
        let mut client = peer;
        for hop in forwarded_chain(req).into_iter().rev() {
            let Some(ip) = hop else { break };
            client = ip;
            if !self.is_trusted(ip) {
                break;
            }
        }
        Some(client)
    }

    /// Whether the peer is one of `TRUSTED_PROXIES`, whose forwarding headers are believed
    /// (the client's address here, the site's host and scheme in [`super::origin`]).
    pub fn peer_is_trusted(&self, req: &HttpRequest) -> bool {
        req.peer_addr().is_some_and(|peer| self.is_trusted(peer.ip()))
    }

    fn is_trusted(&self, ip: IpAddr) -> bool {
        let ip = unmap(ip);
        self.trusted_proxies.iter().any(|net| net.contains(&ip))
    }

    fn window(&self) -> i64 {
        self.clock.now_ms() / self.window_ms
    }

    fn too_many(&self, code: ErrorCode) -> ApiError {
        let now = self.clock.now_ms();
        let end = (now / self.window_ms + 1) * self.window_ms;
        ApiError::retry_after(code, ((end - now + 999) / 1000).max(1) as u64)
    }

    /// Adds one to `key` in the current window and answers the count. A Redis failure
    /// lets the call through: a limit must not take logins down with it.
    async fn hit(&self, key: &str) -> u32 {
        let window = self.window();
        match &self.store {
            Store::Memory(map) => {
                let mut map = map.lock().unwrap_or_else(|e| e.into_inner());
                let entry = map.entry(key.to_owned()).or_insert((window, 0));
                if entry.0 != window {
                    *entry = (window, 0);
                }
                entry.1 += 1;
                entry.1
            }
            Store::Redis { conn, prefix } => {
                let key = format!("{prefix}rl:{key}:{window}");
                let result: redis::RedisResult<(u32, ())> = redis::pipe()
                    .atomic()
                    .incr(&key, 1)
                    .pexpire(&key, self.window_ms)
                    .query_async(&mut conn.clone())
                    .await;
                result.map(|(n, ())| n).unwrap_or_else(|e| {
                    tracing::warn!(error = %e, "rate limit counter unavailable; letting the call through");
                    0
                })
            }
        }
    }

    async fn give_back(&self, key: &str) {
        let window = self.window();
        match &self.store {
            Store::Memory(map) => {
                let mut map = map.lock().unwrap_or_else(|e| e.into_inner());
                if let Some(entry) = map.get_mut(key).filter(|e| e.0 == window) {
                    entry.1 = entry.1.saturating_sub(1);
                }
            }
            Store::Redis { conn, prefix } => {
                let key = format!("{prefix}rl:{key}:{window}");
                let result: redis::RedisResult<i64> =
                    redis::cmd("DECR").arg(&key).query_async(&mut conn.clone()).await;
                if let Err(e) = result {
                    tracing::warn!(error = %e, "could not give back a rate limit count");
                }
            }
        }
    }

    /// Forgets counters of past windows, so memory stays bounded.
    pub fn shrink(&self) {
        if let Store::Memory(map) = &self.store {
            let window = self.window();
            map.lock()
                .unwrap_or_else(|e| e.into_inner())
                .retain(|_, (w, _)| *w == window);
        }
    }
}

fn parse_cidr(text: &str) -> Option<IpNet> {
    let text = text.trim();
    text.parse::<IpNet>()
        .ok()
        .or_else(|| text.parse::<IpAddr>().ok().map(IpNet::from))
}

/// IPv4 clients reached over IPv6 sockets appear as `::ffff:a.b.c.d`.
fn unmap(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

fn limit_key(ip: IpAddr) -> String {
    match unmap(ip) {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => {
            let s = v6.segments();
            format!("{:x}:{:x}:{:x}:{:x}::/64", s[0], s[1], s[2], s[3])
        }
    }
}

/// The hops of `X-Forwarded-For` (or, without it, of `Forwarded`), left to right; `None`
/// for a hop that is not an address (`unknown`, an obfuscated name, garbage).
fn forwarded_chain(req: &HttpRequest) -> Vec<Option<IpAddr>> {
    let values = |name: &str| -> Vec<String> {
        req.headers()
            .get_all(HeaderName::from_bytes(name.as_bytes()).expect("valid header name"))
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .map(|hop| hop.trim().to_owned())
            .collect()
    };
    let xff = values("x-forwarded-for");
    if !xff.is_empty() {
        return xff.iter().map(|hop| parse_hop(hop)).collect();
    }
    values("forwarded")
        .iter()
        .map(|element| {
            element
                .split(';')
                .filter_map(|pair| pair.trim().split_once('='))
                .find(|(k, _)| k.trim().eq_ignore_ascii_case("for"))
                .and_then(|(_, v)| parse_hop(v.trim().trim_matches('"')))
        })
        .collect()
}

/// `1.2.3.4`, `1.2.3.4:5678`, `2001:db8::1` or `[2001:db8::1]:5678`.
fn parse_hop(hop: &str) -> Option<IpAddr> {
    if let Ok(ip) = hop.parse() {
        return Some(ip);
    }
    if let Some(rest) = hop.strip_prefix('[') {
        return rest.split(']').next()?.parse().ok();
    }
    hop.rsplit_once(':').and_then(|(ip, _)| ip.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hops_parse_with_or_without_ports() {
        assert_eq!(parse_hop("1.2.3.4"), "1.2.3.4".parse().ok());
        assert_eq!(parse_hop("1.2.3.4:80"), "1.2.3.4".parse().ok());
        assert_eq!(parse_hop("[2001:db8::1]:80"), "2001:db8::1".parse().ok());
        assert_eq!(parse_hop("2001:db8::1"), "2001:db8::1".parse().ok());
        assert_eq!(parse_hop("unknown"), None);
    }

    #[test]
    fn ipv6_addresses_are_limited_per_64() {
        let a = limit_key("2001:db8:1:2:aaaa::1".parse().unwrap());
        let b = limit_key("2001:db8:1:2:bbbb::9".parse().unwrap());
        let c = limit_key("2001:db8:1:3::1".parse().unwrap());
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(limit_key("::ffff:10.0.0.1".parse().unwrap()), "10.0.0.1");
    }

    #[test]
    fn proxies_are_cidrs_or_single_addresses() {
        assert!(parse_cidr("10.0.0.0/8")
            .unwrap()
            .contains(&"10.1.2.3".parse::<IpAddr>().unwrap()));
        assert!(parse_cidr("::1")
            .unwrap()
            .contains(&"::1".parse::<IpAddr>().unwrap()));
        assert!(parse_cidr("nonsense").is_none());
    }
}
