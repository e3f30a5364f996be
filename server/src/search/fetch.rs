//! Fetching the pages a search found, without becoming a way into our own network
//! (SSRF): only `http`/`https`, only public addresses. A name is checked after it is
//! resolved (our resolver refuses a name with any private address, so a name cannot be
//! pointed at the inside), an address in the URL before anything is sent, and every
//! redirect again. System proxies are not used: they would resolve names themselves.
//! Bounded in time, size and type: a page that is slow, huge or not text is skipped
//! (its search snippet stands in for it).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use url::{Host, Url};

/// Redirects followed at most.
const MAX_REDIRECTS: usize = 5;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum Refused {
    #[error("only http and https pages are fetched")]
    Scheme,
    #[error("the address is not public")]
    NotPublic,
    #[error("the page is not text")]
    NotText,
    #[error("the page is too large")]
    TooLarge,
    #[error("the page could not be fetched: {0}")]
    Failed(String),
}

/// Whether `ip` is a public unicast address: not loopback, private, link-local, shared
/// (carrier NAT), multicast, reserved, documentation or benchmarking; IPv6 forms that
/// carry an IPv4 address are judged by it.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_public_v4(v4);
            }
            let s = v6.segments();
            // NAT64 (64:ff9b::/96) reaches the IPv4 address in its last 32 bits.
            if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
                return is_public_v4(Ipv4Addr::new(
                    (s[6] >> 8) as u8,
                    s[6] as u8,
                    (s[7] >> 8) as u8,
                    s[7] as u8,
                ));
            }
            !(v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (s[0] & 0xfe00) == 0xfc00 // unique local
                || (s[0] & 0xffc0) == 0xfe80 // link-local
                || (s[0] & 0xffc0) == 0xfec0 // site-local (deprecated)
                || (s[0] == 0x2001 && s[1] == 0x0db8) // documentation
                || s[..6] == [0, 0, 0, 0, 0, 0]) // IPv4-compatible (deprecated)
        }
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    !(ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || a == 0
        || (a == 100 && (64..128).contains(&b)) // shared address space (carrier NAT)
        || (a == 192 && b == 0 && c == 0) // IETF protocol assignments
        || (a == 198 && (b == 18 || b == 19)) // benchmarking
        || a >= 240) // reserved
}

/// Resolves names with the system resolver and refuses any that has an address that is
/// not public: a name with one inside address could be raced to it.
struct PublicOnly;

impl Resolve for PublicOnly {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            if addrs.is_empty() || addrs.iter().any(|a| !is_public(a.ip())) {
                return Err(Box::new(Refused::NotPublic) as Box<dyn std::error::Error + Send + Sync>);
            }
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

/// A page as fetched: its final URL, and its text.
#[derive(Debug)]
pub struct Page {
    pub url: Url,
    pub html: String,
    pub is_html: bool,
}

#[derive(Clone)]
pub struct Fetcher {
    client: reqwest::Client,
    allow: Arc<Vec<SocketAddr>>,
    max_bytes: usize,
}

impl Fetcher {
    /// `allow`: test-only addresses fetched although private (`search.fetch_allow`).
    pub fn new(timeout: Duration, max_bytes: usize, allow: Vec<SocketAddr>) -> Fetcher {
        let allow = Arc::new(allow);
        let checked = allow.clone();
        let policy = reqwest::redirect::Policy::custom(move |attempt| {
            if attempt.previous().len() >= MAX_REDIRECTS {
                attempt.error("too many redirects")
            } else if let Err(e) = check(attempt.url(), &checked) {
                attempt.error(e)
            } else {
                attempt.follow()
            }
        });
        let client = reqwest::Client::builder()
            .dns_resolver(Arc::new(PublicOnly))
            .no_proxy()
            .redirect(policy)
            .timeout(timeout)
            .connect_timeout(timeout.min(Duration::from_secs(3)))
            .user_agent(concat!(
                "chat-server/",
                env!("CARGO_PKG_VERSION"),
                " (web search)"
            ))
            .build()
            .expect("a client of fixed settings builds");
        Fetcher {
            client,
            allow,
            max_bytes,
        }
    }

    /// The page at `url`, if it is a public, small enough text page.
    pub async fn fetch(&self, url: &str) -> Result<Page, Refused> {
        let url = Url::parse(url).map_err(|_| Refused::Scheme)?;
        check(&url, &self.allow)?;
        let mut response = self
            .client
            .get(url)
            .header(reqwest::header::ACCEPT, "text/html, text/plain;q=0.9")
            .send()
            .await
            .map_err(|e| refused_by(&e))?;
        if !response.status().is_success() {
            return Err(Refused::Failed(format!("status {}", response.status())));
        }
        let mime = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        let is_html = mime.starts_with("text/html") || mime.starts_with("application/xhtml+xml");
        if !is_html && !mime.starts_with("text/plain") {
            return Err(Refused::NotText);
        }
        if response
            .content_length()
            .is_some_and(|n| n as usize > self.max_bytes)
        {
            return Err(Refused::TooLarge);
        }
        let final_url = response.url().clone();
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| refused_by(&e))? {
            if body.len() + chunk.len() > self.max_bytes {
                return Err(Refused::TooLarge);
            }
            body.extend_from_slice(&chunk);
        }
        // Text with a NUL byte is binary whatever it says it is.
        if body.contains(&0) {
            return Err(Refused::NotText);
        }
        Ok(Page {
            url: final_url,
            html: String::from_utf8_lossy(&body).into_owned(),
            is_html,
        })
    }
}

/// A refusal found deep in reqwest's error chain (our resolver's or redirect policy's).
fn refused_by(e: &reqwest::Error) -> Refused {
    let mut source: Option<&dyn std::error::Error> = Some(e);
    while let Some(s) = source {
        if let Some(r) = s.downcast_ref::<Refused>() {
            return match r {
                Refused::Scheme => Refused::Scheme,
                _ => Refused::NotPublic,
            };
        }
        source = s.source();
    }
    Refused::Failed(e.to_string())
}

/// The checks made before any request: the scheme, and an address written in the URL
/// (a name is checked by the resolver).
fn check(url: &Url, allow: &[SocketAddr]) -> Result<(), Refused> {
    if !matches!(url.scheme(), "http" | "https") {
        return Err(Refused::Scheme);
    }
    let ip = match url.host() {
        Some(Host::Ipv4(ip)) => IpAddr::V4(ip),
        Some(Host::Ipv6(ip)) => IpAddr::V6(ip),
        Some(Host::Domain(_)) => return Ok(()),
        None => return Err(Refused::Scheme),
    };
    let port = url.port_or_known_default().unwrap_or(0);
    if is_public(ip) || allow.contains(&SocketAddr::new(ip, port)) {
        Ok(())
    } else {
        Err(Refused::NotPublic)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inside_addresses_are_not_public() {
        for inside in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "255.255.255.255",
            "224.0.0.1",
            "::1",
            "::",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "64:ff9b::a00:1",
        ] {
            assert!(!is_public(inside.parse().unwrap()), "{inside}");
        }
        for outside in [
            "93.184.216.34",
            "1.1.1.1",
            "2606:4700:4700::1111",
            "::ffff:8.8.8.8",
        ] {
            assert!(is_public(outside.parse().unwrap()), "{outside}");
        }
    }

    #[test]
    fn only_web_schemes_and_allowed_inside_addresses_pass_the_first_check() {
        let allow = vec!["127.0.0.1:8089".parse().unwrap()];
        let check = |u: &str| check(&Url::parse(u).unwrap(), &allow);
        assert_eq!(check("file:///etc/passwd"), Err(Refused::Scheme));
        assert_eq!(check("ftp://example.com/"), Err(Refused::Scheme));
        assert_eq!(check("http://127.0.0.1:8080/"), Err(Refused::NotPublic));
        assert_eq!(check("http://[::1]:8089/"), Err(Refused::NotPublic));
        assert_eq!(
            check("http://169.254.169.254/latest/meta-data/"),
            Err(Refused::NotPublic)
        );
        // Decimal and hex forms are read as the addresses they are.
        assert_eq!(check("http://2130706433/"), Err(Refused::NotPublic));
        assert_eq!(check("http://0x7f.1/"), Err(Refused::NotPublic));
        assert_eq!(check("http://127.0.0.1:8089/page"), Ok(()));
        assert_eq!(check("https://example.com/"), Ok(()));
    }
}
