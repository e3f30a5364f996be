//! The two interface languages, and which one the current request speaks.
//!
//! A middleware picks the request's language from `?lang=` or `Accept-Language`; handlers
//! refine it once they know better (the user's setting, a `lang`/`language` body field).
//! Error responses are rendered inside the request, so they read it from a task-local.

use std::cell::Cell;
use std::future::Future;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::ACCEPT_LANGUAGE;
use actix_web::middleware::Next;
use actix_web::HttpRequest;

/// The two languages: a stored state of the contract (`en-US`, `hu-HU`).
pub use chat_contract::states::Language as Lang;

/// A loose hint (`hu`, `hu-hu`, `en-GB`); `None` for a language we do not speak, so
/// it does not override a better source.
pub fn from_hint(value: &str) -> Option<Lang> {
    let primary = value.trim().split(['-', '_']).next().unwrap_or("");
    if primary.eq_ignore_ascii_case("hu") {
        Some(Lang::HuHu)
    } else if primary.eq_ignore_ascii_case("en") {
        Some(Lang::EnUs)
    } else {
        None
    }
}

/// The first supported language of an `Accept-Language` header, by quality.
pub fn from_accept_language(header: &str) -> Option<Lang> {
    let mut best: Option<(f32, Lang)> = None;
    for part in header.split(',') {
        let mut pieces = part.split(';');
        let tag = pieces.next().unwrap_or("").trim();
        let q = pieces
            .find_map(|p| p.trim().strip_prefix("q=").and_then(|q| q.parse().ok()))
            .unwrap_or(1.0);
        let primary = tag.split('-').next().unwrap_or("").to_ascii_lowercase();
        let lang = match primary.as_str() {
            "hu" => Lang::HuHu,
            "en" => Lang::EnUs,
            _ => continue,
        };
        if best.is_none_or(|(bq, _)| q > bq) {
            best = Some((q, lang));
        }
    }
    best.map(|(_, lang)| lang)
}

fn of_request(req: &HttpRequest) -> Lang {
    let query_lang = req
        .query_string()
        .split('&')
        .filter_map(|kv| kv.strip_prefix("lang=").or_else(|| kv.strip_prefix("language=")))
        .find_map(from_hint);
    if let Some(lang) = query_lang {
        return lang;
    }
    req.headers()
        .get(ACCEPT_LANGUAGE)
        .and_then(|h| h.to_str().ok())
        .and_then(from_accept_language)
        .unwrap_or_default()
}

tokio::task_local! {
    static REQUEST_LANG: Cell<Lang>;
}

/// The language of the request being served (en-US outside a request).
pub fn current() -> Lang {
    REQUEST_LANG.try_with(Cell::get).unwrap_or_default()
}

/// Switch the current request to `lang` (the user's setting or a body field).
pub fn set_current(lang: Lang) {
    let _ = REQUEST_LANG.try_with(|cell| cell.set(lang));
}

/// Runs `fut` with `lang` as the current language (for work outside the middleware).
pub async fn scope<F: Future>(lang: Lang, fut: F) -> F::Output {
    REQUEST_LANG.scope(Cell::new(lang), fut).await
}

/// Middleware: every request runs with its language in scope.
pub async fn middleware(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let lang = of_request(req.request());
    REQUEST_LANG.scope(Cell::new(lang), next.call(req)).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_language_picks_highest_supported_quality() {
        assert_eq!(from_accept_language("de-DE,hu;q=0.9,en;q=0.8"), Some(Lang::HuHu));
        assert_eq!(from_accept_language("en-GB,hu;q=0.5"), Some(Lang::EnUs));
        assert_eq!(from_accept_language("de-DE,fr"), None);
        assert_eq!(from_hint("hu"), Some(Lang::HuHu));
        assert_eq!(from_hint("en-GB"), Some(Lang::EnUs));
        assert_eq!(from_hint("de"), None);
    }

    #[test]
    fn only_the_two_locales_are_exact_settings() {
        assert_eq!(Lang::parse("hu-HU"), Some(Lang::HuHu));
        assert_eq!(Lang::parse("en-US"), Some(Lang::EnUs));
        assert_eq!(Lang::parse("de-DE"), None);
        assert_eq!(Lang::parse("hu"), None);
    }
}
