//! Who is calling: the `AuthUser` extractor every authenticated route takes (a valid,
//! unexpired, unrevoked token, from the `Authorization` header or the `token` cookie), and
//! the `Origin` checks of cookie calls and websockets.

use std::future::Future;
use std::pin::Pin;

use actix_web::http::header::AUTHORIZATION;
use actix_web::{web, FromRequest, HttpRequest};

use crate::db::users::UserRow;
use crate::error::{ApiError, ErrorCode};
use crate::i18n;
use crate::state::AppState;

/// The bearer token of a request: the `Authorization` header, else the `token` cookie.
pub fn request_token(req: &HttpRequest) -> Option<String> {
    let from_header = req
        .headers()
        .get(AUTHORIZATION)
        .and_then(|h| h.to_str().ok())
        .and_then(|h| h.strip_prefix("Bearer "))
        .map(|t| t.trim().to_owned());
    from_header
        .filter(|t| !t.is_empty())
        .or_else(|| req.cookie("token").map(|c| c.value().to_owned()))
        .filter(|t| !t.is_empty())
}

/// Whether the request's token would come from the `token` cookie (no bearer header).
pub fn token_is_from_cookie(req: &HttpRequest) -> bool {
    let header = req.headers().get(AUTHORIZATION).and_then(|h| h.to_str().ok());
    let bearer = header.and_then(|h| h.strip_prefix("Bearer ")).map(str::trim);
    bearer.is_none_or(str::is_empty) && req.cookie("token").is_some_and(|c| !c.value().is_empty())
}

/// Whether a websocket's cookie may count: the request has no `Origin` (not a browser)
/// or one of this site ([`super::origin::SiteOrigin`]).
pub fn same_origin(req: &HttpRequest, state: &AppState) -> bool {
    super::origin::origin_header(req).is_none_or(|o| state.site.allows(req, &state.limits, o))
}

/// Whether a cookie-authenticated call that changes something may go ahead: it must
/// carry an `Origin` of this site ([`super::origin::SiteOrigin`]). Browsers send `Origin` with
/// every such call and other sites cannot forge it; without the check, any page could
/// make a visitor's browser act with their cookie.
pub fn cookie_call_allowed(req: &HttpRequest, state: &AppState) -> bool {
    if req.method().is_safe() || !token_is_from_cookie(req) {
        return true;
    }
    super::origin::origin_header(req).is_some_and(|o| state.site.allows(req, &state.limits, o))
}

/// A caller with a valid, unexpired, unrevoked token, and their user row.
#[derive(Debug)]
pub struct AuthUser {
    pub user: UserRow,
}

impl AuthUser {
    pub fn id(&self) -> &str {
        &self.user.id
    }
}

impl FromRequest for AuthUser {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, Self::Error>>>>;

    fn from_request(req: &HttpRequest, _: &mut actix_web::dev::Payload) -> Self::Future {
        let state = req.app_data::<web::Data<AppState>>().cloned();
        let token = request_token(req);
        let cookie_refused = state.as_ref().is_some_and(|s| !cookie_call_allowed(req, s));
        Box::pin(async move {
            let state = state.ok_or_else(|| anyhow::anyhow!("AppState missing"))?;
            if cookie_refused {
                return Err(ErrorCode::OriginRefused.into());
            }
            let token = token.ok_or(ErrorCode::Unauthorized)?;
            let user = state
                .accounts
                .authenticate(&token)
                .await?
                .ok_or(ErrorCode::Unauthorized)?;
            crate::http::trace::record_user(&user.id);
            // From here on the request speaks the user's language.
            i18n::set_current(user.language);
            Ok(AuthUser { user })
        })
    }
}
