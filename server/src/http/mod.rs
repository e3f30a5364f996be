//! Every route, one module per area. `/api/*` answers JSON (errors included); any other
//! path belongs to the web client.

pub mod admin;
pub mod auth;
pub mod auth_user;
pub mod conversations;
pub mod demo_checkout;
pub mod files;
pub mod headers;
pub mod health;
pub mod invoices;
pub mod messages;
pub mod origin;
pub mod payments;
pub mod portability;
pub mod projects;
pub mod settings;
pub mod shares;
pub mod subscription;
pub mod trace;
pub mod usage;
pub mod web;
pub mod ws;

use actix_multipart::Multipart;
use actix_web::error::{JsonPayloadError, PathError, QueryPayloadError};
use actix_web::{web as aweb, HttpRequest};
use futures_util::TryStreamExt;

use crate::error::{ApiError, ErrorCode};

/// Largest JSON body any call takes (the longest field is AI personalisation text).
const JSON_LIMIT: usize = 64 * 1024;

pub fn api(cfg: &mut aweb::ServiceConfig) {
    cfg.app_data(
        aweb::JsonConfig::default()
            .limit(JSON_LIMIT)
            .error_handler(json_error),
    )
    .app_data(aweb::PathConfig::default().error_handler(path_error))
    .app_data(aweb::QueryConfig::default().error_handler(query_error))
    .service(
        aweb::scope("/api")
            .configure(health::routes)
            .configure(admin::routes)
            .configure(auth::routes)
            .configure(settings::routes)
            .configure(subscription::routes)
            .configure(usage::routes)
            .configure(payments::routes)
            .configure(invoices::routes)
            // Before the conversations' scope, which would take `/conversations/{id}/shares`.
            .configure(shares::routes)
            .configure(portability::routes)
            .configure(conversations::routes)
            .configure(messages::routes)
            .configure(projects::routes)
            .configure(files::routes)
            .configure(ws::routes)
            .default_service(aweb::to(|| async {
                Err::<&str, _>(ApiError::from(ErrorCode::NotFound))
            })),
    );
}

fn json_error(err: JsonPayloadError, _: &HttpRequest) -> actix_web::Error {
    tracing::debug!(error = %err, "rejected JSON body");
    let code = match err {
        JsonPayloadError::Overflow { .. } | JsonPayloadError::OverflowKnownLength { .. } => {
            ErrorCode::PayloadTooLarge
        }
        _ => ErrorCode::ValidationError,
    };
    ApiError::from(code).into()
}

/// The JSON body of an authenticated call. Extractors run side by side, so a plain
/// `Json` could answer 400 before the token was checked; taking the body as a `Result`
/// and unwrapping it with [`body`] in the handler makes a bad token a 401 whatever the
/// body, and the body's error speak the user's language.
pub type JsonAfterAuth<T> = Result<aweb::Json<T>, actix_web::Error>;

// Moved down to `domain`, which domain modules may import; kept here for handlers.
pub use crate::domain::one_line;

pub fn body<T>(json: JsonAfterAuth<T>) -> Result<T, ApiError> {
    json.map(aweb::Json::into_inner).map_err(|e| {
        e.as_error::<ApiError>()
            .map_or(ErrorCode::ValidationError, ApiError::code)
            .into()
    })
}

fn path_error(_: PathError, _: &HttpRequest) -> actix_web::Error {
    ApiError::from(ErrorCode::NotFound).into()
}

fn query_error(_: QueryPayloadError, _: &HttpRequest) -> actix_web::Error {
    ApiError::from(ErrorCode::ValidationError).into()
}

/// The file name and bytes of the first part of a multipart body that has a file name
/// (other parts are skipped): `too_large` (with `{max}` in MB) past `max` bytes, read
/// no further; `missing` when there is no such part or it is empty; `file_upload_error`
/// when the body is not multipart.
pub async fn read_file_part(
    mut payload: Multipart,
    max: usize,
    too_large: ErrorCode,
    missing: ErrorCode,
) -> Result<(String, Vec<u8>), ApiError> {
    while let Some(mut field) = payload.try_next().await.map_err(|_| ErrorCode::FileUploadError)? {
        let Some(name) = field
            .content_disposition()
            .and_then(|cd| cd.get_filename())
            .map(str::to_owned)
        else {
            continue;
        };
        let mut bytes = Vec::new();
        while let Some(chunk) = field.try_next().await.map_err(|_| ErrorCode::FileUploadError)? {
            if bytes.len() + chunk.len() > max {
                return Err(ApiError::with_max(too_large, None, (max / (1024 * 1024)) as u64));
            }
            bytes.extend_from_slice(&chunk);
        }
        if bytes.is_empty() {
            return Err(missing.into());
        }
        return Ok((name, bytes));
    }
    Err(missing.into())
}
