//! The account's data taken out and conversations brought in (`crate::portability`):
//! `GET /api/account/export` and `POST /api/conversations/import`.

use actix_multipart::Multipart;
use actix_web::http::header::{ContentDisposition, DispositionParam, DispositionType};
use actix_web::{web, HttpResponse};
use chat_contract::answers;

use crate::error::{ApiError, ErrorCode, Result};
use crate::http;
use crate::http::auth_user::AuthUser;
use crate::portability::{self, export, import};
use crate::state::AppState;

/// Registered before `/conversations/{id}`, whose scope would take `import` for an id.
/// Another method on the import's path is a 404, as `GET /api/conversations/import` was
/// (no conversation has that id), not a bare 405.
pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/account/export", web::get().to(export)).service(
        web::resource("/conversations/import")
            .route(web::post().to(import))
            .default_service(web::to(|| async {
                Err::<HttpResponse, _>(ApiError::from(ErrorCode::NotFound))
            })),
    );
}

type Data = web::Data<AppState>;

/// The zip, streamed as it is written (`portability::export`).
async fn export(state: Data, user: AuthUser) -> Result<HttpResponse> {
    state.limits.portability("export", user.id()).await?;
    let filename = format!("chat-export-{}.zip", portability::date(state.now()));
    Ok(HttpResponse::Ok()
        .content_type("application/zip")
        .insert_header(ContentDisposition {
            disposition: DispositionType::Attachment,
            parameters: vec![DispositionParam::Filename(filename)],
        })
        // The whole account: no shared cache keeps it.
        .insert_header(("Cache-Control", "private, no-store"))
        .streaming(export::stream(state.exporter.clone(), user.user)))
}

/// Answers `{success, data: {conversations, messages}}`; nothing is stored unless all is.
async fn import(state: Data, user: AuthUser, payload: Multipart) -> Result<HttpResponse> {
    state.limits.portability("import", user.id()).await?;
    let (_, bytes) = http::read_file_part(
        payload,
        import::MAX_BYTES,
        ErrorCode::FileTooLarge,
        ErrorCode::FileUploadError,
    )
    .await
    .map_err(|e| e.about("file"))?;
    let imported = import::import(
        &state.db,
        &state.announce,
        user.id(),
        bytes,
        state.settings.chat.max_message_chars,
        state.now(),
    )
    .await?;
    Ok(HttpResponse::Ok().json(answers::Data::new(imported)))
}
