//! `GET /api/ws`: upgrades to a websocket served by a session actor (docs/protocol.md).

use std::sync::Arc;

use actix_web::body::MessageBody;
use actix_web::{web, HttpRequest, HttpResponse};
use chat_actors::session::WsSession;

use crate::error::{ApiError, ErrorCode};
use crate::http::auth_user::{request_token, same_origin, token_is_from_cookie};
use crate::realtime::service::SessionService;
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
    let realtime = &state.realtime;
    // Counted before the upgrade, so a refused socket costs no actor.
    let guard = match state.limits.client_ip(&req) {
        Some(address) => Some(
            realtime
                .sockets
                .open(address)
                .ok_or_else(|| ApiError::retry_after(ErrorCode::TooManySockets, 5))?,
        ),
        None => None,
    };
    // A plain GET (no upgrade) is the API's JSON 400, not an empty body.
    let mut response =
        actix_http::ws::handshake(req.head()).map_err(|_| ApiError::from(ErrorCode::ValidationError))?;
    // Browsers send cookies with websockets from any site: a cookie only counts from a
    // page of this site (others must send the token in an auth frame, which they lack).
    let token = if token_is_from_cookie(&req) && !same_origin(&req, &state) {
        None
    } else {
        request_token(&req)
    };
    // The socket's body holds its place in the count until the HTTP layer drops it.
    let body = WsSession::start(
        body,
        token,
        realtime.hubs.clone(),
        Arc::new(SessionService { state: state.clone() }),
        realtime.session.clone(),
        Box::new(guard),
    );
    Ok(response.message_body(body.boxed())?.into())
}

/// Run on every accepted connection: no Nagle delay; and a peer that takes no data for
/// `timeout` (a tab that stopped reading, or vanished) is dropped by the kernel. The websocket writer
/// gives up on such a tab by itself, but only the kernel can free what is already
/// buffered under a write that never completes.
pub fn limit_stalled_writes(connection: &dyn std::any::Any, timeout: std::time::Duration) {
    if let Some(stream) = connection.downcast_ref::<actix_web::rt::net::TcpStream>() {
        if let Err(e) = socket2::SockRef::from(stream).set_tcp_user_timeout(Some(timeout)) {
            tracing::debug!(error = %e, "setting TCP_USER_TIMEOUT");
        }
        // A delta is a small write that must leave now, not wait for the peer's ACK of
        // the one before (Nagle would hold it up to one round trip).
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!(error = %e, "setting TCP_NODELAY");
        }
    }
}
