//! The web client: built files from `WEB_DIR`, and `index.html` for any other path that
//! is not an API call, so the client's router handles deep links (`/chat/…`). Uploaded
//! profile images are served from `$DATA_DIR/uploads`.

use std::path::{Path, PathBuf};

use actix_files::{Files, NamedFile};
use actix_web::dev::{fn_service, ServiceRequest, ServiceResponse};
use actix_web::http::header::CONTENT_SECURITY_POLICY;
use actix_web::middleware::DefaultHeaders;
use actix_web::{web, HttpRequest, HttpResponse};

use crate::error::{ApiError, ErrorCode};
use crate::http::headers;

/// Shown when the client has not been built yet, so `/` still answers something useful.
const PLACEHOLDER: &str = include_str!("placeholder.html");

/// Whether `WEB_DIR` holds a built client; checked once at start-up.
pub fn client_is_built(web_dir: &Path) -> bool {
    web_dir.join("index.html").is_file()
}

pub fn routes(cfg: &mut web::ServiceConfig, web_dir: &Path, uploads_dir: &Path, client_built: bool) {
    // A missing upload is a 404, never the client's index page. An upload is a user's
    // file: it gets the files' policy, not the client's.
    cfg.service(
        web::scope("/uploads")
            .wrap(DefaultHeaders::new().add((CONTENT_SECURITY_POLICY, headers::FILE_POLICY)))
            .service(
                Files::new("", uploads_dir).default_handler(fn_service(|req: ServiceRequest| async {
                    Ok(req.into_response(HttpResponse::NotFound().finish()))
                })),
            ),
    );
    let index = client_built.then(|| web_dir.join("index.html"));
    if client_built {
        let index = index.clone();
        cfg.service(
            Files::new("/", web_dir)
                .index_file("index.html")
                .default_handler(fn_service(move |req: ServiceRequest| {
                    fallback(req, index.clone())
                })),
        );
    }
    // Whatever no route or file took: an unmatched method or path inside a nested scope
    // lands here too, not in the `/api` scope's default.
    cfg.default_service(fn_service(move |req: ServiceRequest| {
        fallback(req, index.clone())
    }));
}

fn is_api(req: &HttpRequest) -> bool {
    req.path() == "/api" || req.path().starts_with("/api/")
}

/// `/api/…` gets the API's JSON 404; anything else the client's `index.html` (or the
/// placeholder page when no client is built).
async fn fallback(req: ServiceRequest, index: Option<PathBuf>) -> Result<ServiceResponse, actix_web::Error> {
    let (req, _) = req.into_parts();
    if is_api(&req) {
        return Ok(ServiceResponse::from_err(
            ApiError::from(ErrorCode::NotFound),
            req,
        ));
    }
    let response = match index {
        Some(index) => NamedFile::open_async(index).await?.into_response(&req),
        None => HttpResponse::Ok()
            .content_type("text/html; charset=utf-8")
            .insert_header((CONTENT_SECURITY_POLICY, headers::STATIC_PAGE_POLICY))
            .body(PLACEHOLDER),
    };
    Ok(ServiceResponse::new(req, response))
}
