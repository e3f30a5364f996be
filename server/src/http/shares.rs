//! Share links: `POST /api/conversations/{id}/shares`, `GET /api/shares`,
//! `DELETE /api/shares/{id}` for the owner; `GET /api/shared/{token}` and its images for
//! anyone with the link (no login, rate-limited per address); and
//! `POST /api/shared/{token}/continue` for a signed-in viewer. The rules are in
//! [`crate::shares`]. Another user's conversation or link is a 404, like a missing one.

use actix_web::http::header;
use actix_web::{web, HttpRequest, HttpResponse};
use chat_contract::answers;
use serde::Deserialize;

use crate::error::{ErrorCode, Result};
use crate::http;
use crate::http::auth_user::AuthUser;
use crate::shares;
use crate::state::AppState;
use crate::views::{share_view, shared_conversation_view};

/// Registered ahead of `/conversations`: that scope would otherwise take
/// `/conversations/{id}/shares` and answer it 404.
pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/conversations/{id}/shares", web::post().to(create))
        .service(
            web::scope("/shares")
                .route("", web::get().to(list))
                .route("/{id}", web::delete().to(revoke)),
        )
        .service(
            web::scope("/shared/{token}")
                .route("", web::get().to(shared))
                .route("/files/{file_id}", web::get().to(shared_file))
                .route("/continue", web::post().to(continue_shared)),
        );
}

type Data = web::Data<AppState>;

/// A revoked link's images stop showing from a browser's cache within minutes; the link
/// itself answers 404 at once.
const SHARED_FILE_CACHE: &str = "private, max-age=300";

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct CreateBody {
    /// Show the owner's name on the shared page (default: not).
    #[serde(default)]
    show_name: bool,
}

async fn create(
    state: Data,
    user: AuthUser,
    id: web::Path<String>,
    body: web::Bytes,
) -> Result<HttpResponse> {
    // The body is optional: none means the defaults. Parsed here, once the token was
    // checked, so a bad token is a 401 whatever the body.
    let body: CreateBody = if body.trim_ascii().is_empty() {
        CreateBody::default()
    } else {
        serde_json::from_slice(&body).map_err(|_| ErrorCode::ValidationError)?
    };
    state.limits.share_create(user.id()).await?;
    let share = shares::create(&state.db, &user.user, &id, body.show_name, state.now()).await?;
    let view = share_view(&share, &state.settings.server.public_url);
    Ok(HttpResponse::Created().json(answers::Data::new(view)))
}

async fn list(state: Data, user: AuthUser) -> Result<HttpResponse> {
    let public_url = &state.settings.server.public_url;
    let shares = state.db.shares(user.id()).await?;
    let data: Vec<_> = shares.iter().map(|s| share_view(s, public_url)).collect();
    Ok(HttpResponse::Ok().json(answers::Data::new(data)))
}

async fn revoke(state: Data, user: AuthUser, id: web::Path<String>) -> Result<HttpResponse> {
    shares::revoke(&state.db, user.id(), &id).await?;
    Ok(HttpResponse::Ok().json(answers::Done::new()))
}

#[derive(Deserialize)]
struct FilePath {
    token: String,
    file_id: String,
}

/// Public: no login.
async fn shared(state: Data, req: HttpRequest, token: web::Path<String>) -> Result<HttpResponse> {
    state.limits.shared_read(&req).await?;
    let snapshot = shares::snapshot(&state.db, &token).await?;
    Ok(HttpResponse::Ok()
        // Not kept anywhere once revoked.
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .json(answers::Data::new(shared_conversation_view(&snapshot))))
}

/// Public: an image of the shared branch.
async fn shared_file(state: Data, req: HttpRequest, path: web::Path<FilePath>) -> Result<HttpResponse> {
    state.limits.shared_read(&req).await?;
    let file = shares::image(&state.db, &path.token, &path.file_id).await?;
    http::files::file_response(&state, &file, false, SHARED_FILE_CACHE).await
}

/// Copies the snapshot into the viewer's account and tells their tabs.
async fn continue_shared(state: Data, user: AuthUser, token: web::Path<String>) -> Result<HttpResponse> {
    state.limits.share_create(user.id()).await?;
    let copy = shares::copy(&state.db, user.id(), &token, state.now()).await?;
    let view = state
        .announce
        .conversation(user.id(), &copy.id)
        .await?
        .ok_or(ErrorCode::NotFound)?;
    Ok(HttpResponse::Created().json(answers::Data::new(view)))
}
