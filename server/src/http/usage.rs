//! `GET /api/usage/limits`: the user's daily and monthly counters (SPEC §7).

use actix_web::{web, HttpResponse};
use serde_json::json;

use crate::auth::AuthUser;
use crate::error::Result;
use crate::state::AppState;

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/usage/limits", web::get().to(limits));
}

async fn limits(state: web::Data<AppState>, user: AuthUser) -> Result<HttpResponse> {
    let (has_active_limit, limit_info) = state.quotas.limit_info(user.id()).await?;
    Ok(HttpResponse::Ok().json(json!({
        "success": true,
        "hasActiveLimit": has_active_limit,
        "limitInfo": limit_info,
    })))
}
