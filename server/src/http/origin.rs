//! Whether a browser's request comes from a page of this site: its `Origin` (scheme, host
//! and port) must be `PUBLIC_URL`'s, or, while `PUBLIC_URL` is left at its default, the
//! origin the browser addressed. What a proxy says that was (`X-Forwarded-Host`,
//! `X-Forwarded-Proto`, `Forwarded`) is believed only from `TRUSTED_PROXIES`: from anyone
//! else it would let a client name the site it claims to be on.

use actix_web::http::header::{HeaderName, HOST, ORIGIN};
use actix_web::HttpRequest;
use anyhow::Context;
use url::{Origin, Url};

use crate::config::Settings;
use crate::rate_limit::RateLimits;

/// This site's origin, read once from the settings.
pub struct SiteOrigin {
    /// `PUBLIC_URL`'s origin; `None` while it is the embedded default, which names no
    /// real site (a local run, the tests): then the request's own origin is the site's.
    public: Option<Origin>,
}

impl SiteOrigin {
    pub fn from_settings(settings: &Settings) -> anyhow::Result<SiteOrigin> {
        let url = settings.server.public_url.trim();
        if url == Settings::defaults().server.public_url {
            return Ok(SiteOrigin { public: None });
        }
        let public = parse_origin(url).with_context(|| {
            format!("PUBLIC_URL {url:?} is not an http(s) URL such as https://chat.example.com")
        })?;
        Ok(SiteOrigin { public: Some(public) })
    }

    /// Whether `origin`, an `Origin` header's value, is this site's.
    pub fn allows(&self, req: &HttpRequest, limits: &RateLimits, origin: &str) -> bool {
        let Some(origin) = parse_origin(origin) else {
            // `null` (a sandboxed or file page) or garbage is nobody's page here.
            return false;
        };
        match &self.public {
            Some(public) => origin == *public,
            None => request_origin(req, limits).is_some_and(|own| own == origin),
        }
    }
}

/// The request's `Origin` header, if it has one.
pub fn origin_header(req: &HttpRequest) -> Option<&str> {
    req.headers().get(ORIGIN).and_then(|h| h.to_str().ok())
}

/// The origin the browser addressed: the connection's scheme and the `Host` header, or,
/// from a trusted proxy, the scheme and host it says the browser used.
fn request_origin(req: &HttpRequest, limits: &RateLimits) -> Option<Origin> {
    let mut scheme = if req.app_config().secure() {
        "https"
    } else {
        "http"
    }
    .to_owned();
    let mut host = req
        .headers()
        .get(HOST)
        .and_then(|h| h.to_str().ok())
        .map(str::to_owned)
        .or_else(|| req.uri().authority().map(|a| a.as_str().to_owned()));
    if limits.peer_is_trusted(req) {
        if let Some(forwarded) = forwarded(req, "x-forwarded-host", "host") {
            host = Some(forwarded);
        }
        if let Some(forwarded) = forwarded(req, "x-forwarded-proto", "proto") {
            scheme = forwarded.to_ascii_lowercase();
        }
    }
    let host = host?;
    // A host with a path, user or query in it is no host.
    if host.contains(['/', '@', '?', '#']) {
        return None;
    }
    parse_origin(&format!("{scheme}://{host}"))
}

/// What the nearest proxy wrote: the rightmost value of `x_header`, else of `key` in
/// `Forwarded`. Values further left came from before it (the client, at worst).
fn forwarded(req: &HttpRequest, x_header: &str, key: &str) -> Option<String> {
    let values = |name: &str| -> Vec<String> {
        req.headers()
            .get_all(HeaderName::from_bytes(name.as_bytes()).expect("valid header name"))
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
            .collect()
    };
    if let Some(last) = values(x_header).pop() {
        return Some(last);
    }
    values("forwarded").iter().rev().find_map(|element| {
        element
            .split(';')
            .filter_map(|pair| pair.trim().split_once('='))
            .find(|(k, _)| k.trim().eq_ignore_ascii_case(key))
            .map(|(_, v)| v.trim().trim_matches('"').to_owned())
    })
}

/// The origin of an http(s) URL, default ports left out (`https://a:443` is `https://a`).
fn parse_origin(text: &str) -> Option<Origin> {
    let url = Url::parse(text.trim()).ok()?;
    matches!(url.scheme(), "http" | "https")
        .then(|| url.origin())
        .filter(Origin::is_tuple)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_compare_scheme_host_and_port() {
        let origin = |s| parse_origin(s).unwrap();
        assert_eq!(
            origin("https://Chat.Example.com:443/"),
            origin("https://chat.example.com")
        );
        assert_ne!(
            origin("https://chat.example.com"),
            origin("http://chat.example.com")
        );
        assert_ne!(origin("http://127.0.0.1:8080"), origin("http://127.0.0.1:8081"));
        assert!(parse_origin("null").is_none());
        assert!(parse_origin("file:///etc/passwd").is_none());
    }
}
