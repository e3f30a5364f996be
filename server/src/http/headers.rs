//! The browser security headers on every answer (docs/security.md, "Browser headers"),
//! built once at start-up from the settings. An answer that sets a header itself keeps
//! it: files and the server's own small pages carry stricter policies of their own.

use actix_web::http::header::{
    HeaderName, HeaderValue, CONTENT_SECURITY_POLICY, REFERRER_POLICY, STRICT_TRANSPORT_SECURITY,
    X_CONTENT_TYPE_OPTIONS, X_FRAME_OPTIONS,
};
use actix_web::middleware::DefaultHeaders;
use anyhow::Context;
use url::Url;

use crate::config::Settings;

/// A user's file (`/api/files/…`, `/uploads/…`) opened on its own: it may load nothing and
/// run nothing, whatever it claims to be, and is never framed.
pub const FILE_POLICY: &str =
    "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; frame-ancestors 'none'; sandbox";

/// A PDF: Chromium's viewer refuses to run in a `sandbox`ed document and lays its page out
/// with inline styles, so a PDF gets the rest of [`FILE_POLICY`] and its own embed.
pub const PDF_POLICY: &str =
    "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; object-src 'self'; frame-ancestors 'none'";

/// The server's own pages without scripts (the demo checkout, the placeholder shown
/// before the client is built): their styles are inline, and they run nothing.
pub const STATIC_PAGE_POLICY: &str =
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'";

/// What every answer carries unless it set the header itself.
#[derive(Clone)]
pub struct SecurityHeaders {
    headers: Vec<(HeaderName, HeaderValue)>,
}

impl SecurityHeaders {
    pub fn from_settings(settings: &Settings) -> anyhow::Result<SecurityHeaders> {
        let mut headers = vec![
            (
                CONTENT_SECURITY_POLICY,
                HeaderValue::from_str(&content_security_policy(settings)?)?,
            ),
            // For browsers that predate `frame-ancestors`.
            (X_FRAME_OPTIONS, HeaderValue::from_static("DENY")),
            (
                REFERRER_POLICY,
                HeaderValue::from_static("strict-origin-when-cross-origin"),
            ),
            (X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff")),
        ];
        // Only a site reached over https can promise to stay there; on http the header
        // is ignored anyway and would mislead.
        if settings.server.public_url.trim().starts_with("https://") {
            headers.push((
                STRICT_TRANSPORT_SECURITY,
                HeaderValue::from_static("max-age=31536000"),
            ));
        }
        Ok(SecurityHeaders { headers })
    }

    /// The middleware that adds them; headers an answer already has are left alone.
    pub fn middleware(&self) -> DefaultHeaders {
        self.headers
            .iter()
            .cloned()
            .fold(DefaultHeaders::new(), DefaultHeaders::add)
    }
}

/// The web client's policy: its own scripts, styles and images only, no inline script,
/// no eval; Stripe.js and its frames only where Stripe takes the payments.
fn content_security_policy(settings: &Settings) -> anyhow::Result<String> {
    let mut scripts = vec!["'self'".to_owned()];
    // `'self'` covers the websocket (`ws:`/`wss:` to this host).
    let mut connect = vec!["'self'".to_owned()];
    let mut frames = Vec::new();
    let billing = &settings.billing;
    if crate::billing::providers::stripe_configured(billing) {
        let js = origin_of(&billing.stripe_js_url).context("STRIPE_JS_URL")?;
        let api = origin_of(&billing.stripe_api_base).context("STRIPE_API_BASE")?;
        scripts.push(js.clone());
        // The card field lives in Stripe.js's frames; 3-D Secure pages come from hooks.
        frames.extend([js.clone(), "https://hooks.stripe.com".to_owned()]);
        connect.extend([js, api]);
        connect.dedup();
    }
    let frames = if frames.is_empty() {
        "'none'".to_owned()
    } else {
        frames.join(" ")
    };
    Ok([
        "default-src 'self'".to_owned(),
        format!("script-src {}", scripts.join(" ")),
        "style-src 'self'".to_owned(),
        // Previews of picked images are blob: URLs; canvas exports can be data: URLs.
        "img-src 'self' blob: data:".to_owned(),
        format!("connect-src {}", connect.join(" ")),
        format!("frame-src {frames}"),
        // The HEIC converter runs in a worker made from a blob: URL.
        "worker-src 'self' blob:".to_owned(),
        "object-src 'none'".to_owned(),
        "base-uri 'none'".to_owned(),
        "form-action 'self'".to_owned(),
        "frame-ancestors 'none'".to_owned(),
    ]
    .join("; "))
}

/// `https://js.stripe.com/v3/` → `https://js.stripe.com`.
fn origin_of(url: &str) -> anyhow::Result<String> {
    let parsed = Url::parse(url.trim()).with_context(|| format!("{url:?} is not a URL"))?;
    anyhow::ensure!(
        matches!(parsed.scheme(), "http" | "https"),
        "{url:?} is not an http(s) URL"
    );
    Ok(parsed.origin().ascii_serialization())
}
