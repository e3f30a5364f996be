//! One span per request, so a slow or failed request can be followed through the log:
//! its id (the caller's `X-Request-Id` when it sends a plausible one, else a new one,
//! echoed in the answer's `X-Request-Id`) and, once the token is checked, its user. The
//! storage calls it makes have spans under it (`crate::db`), and the line written when it
//! ends gives its status and time.

use std::time::Instant;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::middleware::Next;
use tracing::Instrument;

pub const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

pub async fn middleware(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let id = req
        .headers()
        .get(&REQUEST_ID)
        .and_then(|v| v.to_str().ok())
        .filter(|v| {
            (1..=64).contains(&v.len())
                && v.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
        .map_or_else(|| uuid::Uuid::now_v7().simple().to_string(), str::to_owned);
    let span = tracing::info_span!("request", id = %id, user = tracing::field::Empty);
    let started = Instant::now();
    // The path without its query: a query may carry a token.
    let (method, path) = (req.method().clone(), req.path().to_owned());
    let peer = req.peer_addr().map(|a| a.ip());
    let result = next.call(req).instrument(span.clone()).await;
    let ms = started.elapsed().as_millis() as u64;
    let _in_request = span.enter();
    match result {
        Ok(mut response) => {
            let status = response.status().as_u16();
            tracing::info!(target: "http", ?peer, status, ms, "{method} {path}");
            if let Ok(value) = HeaderValue::from_str(&id) {
                response.headers_mut().insert(REQUEST_ID, value);
            }
            Ok(response)
        }
        Err(e) => {
            tracing::info!(target: "http", ?peer, error = %e, ms, "{method} {path}");
            Err(e)
        }
    }
}

/// Names the request's user in its span, once the token is checked.
pub fn record_user(user_id: &str) {
    tracing::Span::current().record("user", tracing::field::display(user_id));
}
