//! `GET /api/usage/limits`: the user's daily and monthly counters (SPEC §7).

use actix_web::{web, HttpResponse};
use chat_contract::answers::UsageAnswer;

use crate::error::Result;
use crate::http::auth_user::AuthUser;
use crate::state::AppState;

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/usage/limits", web::get().to(limits));
}

async fn limits(state: web::Data<AppState>, user: AuthUser) -> Result<HttpResponse> {
    let usage = state.quotas.usage(user.id()).await?;
    Ok(HttpResponse::Ok().json(UsageAnswer { success: true, usage }))
}
