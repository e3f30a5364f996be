//! `/api/files`: attachments a user uploads before sending them in a message, and the
//! files of sent messages. Only their owner can read or delete them; another user's file
//! is a 404, like a missing one.

use actix_multipart::Multipart;
use actix_web::http::header::{self, ContentDisposition, DispositionParam, DispositionType};
use actix_web::{web, HttpResponse};
use chat_contract::answers;

use crate::db::files::FileRow;
use crate::error::{ErrorCode, Result};
use crate::http;
use crate::http::auth_user::AuthUser;
use crate::state::AppState;
use crate::views::attachment_view;

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::scope("/files")
            .route("", web::post().to(upload))
            .route("/{id}", web::get().to(content))
            .route("/{id}/thumbnail", web::get().to(thumbnail))
            .route("/{id}/info", web::get().to(info))
            .route("/{id}", web::delete().to(delete)),
    );
}

type Data = web::Data<AppState>;

async fn upload(state: Data, user: AuthUser, payload: Multipart) -> Result<HttpResponse> {
    let subscription = state.db.subscription(user.id(), state.now()).await?;
    let plan = state.catalogue.plan(subscription.plan_type);
    let max = crate::entitlements::largest_upload(plan);
    let (name, bytes) =
        http::read_file_part(payload, max, ErrorCode::FileTooLarge, ErrorCode::FileUploadError).await?;
    let file = state.files.upload(user.id(), plan, &name, bytes).await?;
    Ok(HttpResponse::Created().json(answers::Data::new(attachment_view(&file))))
}

async fn owned(state: &AppState, user: &AuthUser, id: &str) -> Result<FileRow> {
    Ok(state.db.file(user.id(), id).await?.ok_or(ErrorCode::NotFound)?)
}

/// The file object: how a tab that missed `file.updated` frames learns a document's state.
async fn info(state: Data, user: AuthUser, id: web::Path<String>) -> Result<HttpResponse> {
    let file = owned(&state, &user, &id).await?;
    Ok(HttpResponse::Ok().json(answers::Data::new(attachment_view(&file))))
}

async fn content(state: Data, user: AuthUser, id: web::Path<String>) -> Result<HttpResponse> {
    serve(&state, &user, &id, false).await
}

async fn thumbnail(state: Data, user: AuthUser, id: web::Path<String>) -> Result<HttpResponse> {
    serve(&state, &user, &id, true).await
}

async fn serve(state: &AppState, user: &AuthUser, id: &str, thumbnail: bool) -> Result<HttpResponse> {
    let file = owned(state, user, id).await?;
    // A file's bytes never change; only its owner may see them.
    file_response(state, &file, thumbnail, "private, max-age=31536000, immutable").await
}

/// The file's bytes (or its thumbnail's) with their type, `nosniff`, a policy that runs
/// nothing in them, and `cache_control`; a file missing from the store is a 404. Whoever
/// may read the file was decided by the caller.
pub async fn file_response(
    state: &AppState,
    file: &FileRow,
    thumbnail: bool,
    cache_control: &'static str,
) -> Result<HttpResponse> {
    let bytes = state
        .files
        .store
        .get(file, thumbnail)
        .await
        .map_err(crate::error::ApiError::Internal)?
        .ok_or(ErrorCode::NotFound)?;
    let (mime, name) = if thumbnail {
        ("image/jpeg".to_owned(), format!("thumbnail-{}", file.name))
    } else if file.mime.starts_with("text/") {
        // Text documents are UTF-8 (checked on upload); without it a browser may guess.
        (format!("{}; charset=utf-8", file.mime), file.name.clone())
    } else {
        (file.mime.clone(), file.name.clone())
    };
    let policy = if mime == "application/pdf" {
        http::headers::PDF_POLICY
    } else {
        http::headers::FILE_POLICY
    };
    // Only a name of plain characters goes into the header; the rest becomes `_`.
    let ascii: String = name
        .chars()
        .map(|c| if c.is_ascii_graphic() || c == ' ' { c } else { '_' })
        .collect();
    Ok(HttpResponse::Ok()
        .content_type(mime)
        .insert_header((header::CACHE_CONTROL, cache_control))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .insert_header((header::CONTENT_SECURITY_POLICY, policy))
        .insert_header(ContentDisposition {
            disposition: DispositionType::Inline,
            parameters: vec![DispositionParam::Filename(ascii)],
        })
        .body(bytes))
}

/// Deletes a file not sent yet (`Files::delete_unsent`).
async fn delete(state: Data, user: AuthUser, id: web::Path<String>) -> Result<HttpResponse> {
    let file = state.files.delete_unsent(user.id(), &id).await?;
    // A project's document: every tab reads the project's documents again.
    if let Some(project) = &file.project_id {
        let _ = state.announce.project(user.id(), project).await;
    }
    Ok(HttpResponse::Ok().json(answers::Done::new()))
}
