//! `GET /api/ws`: upgrades to a websocket served by a session actor (docs/protocol.md).

use std::sync::Arc;

use actix_web::{web, HttpRequest, HttpResponse};
use chat_actors::session::WsSession;

use crate::auth::{request_token, same_origin, token_is_from_cookie};
use crate::error::{ApiError, ErrorCode};
use crate::realtime::chat::Chat;
use crate::state::AppState;

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/ws", web::get().to(connect));
}

/// A token in the `Authorization` header or the `token` cookie authenticates at once;
/// without one the socket must send an `auth` frame first. A bad token still upgrades,
/// so the browser sees the close reason rather than a failed handshake.
async fn connect(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: web::Payload,
) -> actix_web::Result<HttpResponse> {
    // A plain GET (no upgrade) is the API's JSON 400, not an empty body.
    let (response, session, incoming) =
        actix_ws::handle(&req, body).map_err(|_| ApiError::from(ErrorCode::ValidationError))?;
    // Fragmented frames are joined, up to the size of the largest message a user may send.
    let incoming = incoming
        .max_frame_size(256 * 1024)
        .aggregate_continuations()
        .max_continuation_size(256 * 1024);
    // Browsers send cookies with websockets from any site: a cookie only counts from a
    // page of this site (others must send the token in an auth frame, which they lack).
    let token = if token_is_from_cookie(&req) && !same_origin(&req) {
        None
    } else {
        request_token(&req)
    };
    let realtime = &state.realtime;
    WsSession::start(
        session,
        incoming,
        token,
        realtime.hub.clone(),
        Arc::new(Chat { state: state.clone() }),
        realtime.session.clone(),
    );
    Ok(response)
}
