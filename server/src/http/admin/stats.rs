//! `GET /api/admin/stats`: the operator's figures for a range of days (docs/api.md,
//! "Stats"). The rules are in `admin::stats`.

use actix_web::{web, HttpResponse};
use chat_contract::answers;
use serde::Deserialize;

use super::AdminUser;
use crate::admin::stats::StatsQuery;
use crate::error::Result;
use crate::state::AppState;

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/stats", web::get().to(stats));
}

#[derive(Deserialize)]
struct Query {
    from: Option<String>,
    to: Option<String>,
    by: Option<String>,
    tz: Option<String>,
}

/// `GET /api/admin/stats?from=&to=&by=day&tz=`
async fn stats(
    state: web::Data<AppState>,
    _admin: AdminUser,
    query: web::Query<Query>,
) -> Result<HttpResponse> {
    let query = StatsQuery {
        from: query.from.as_deref(),
        to: query.to.as_deref(),
        by: query.by.as_deref(),
        tz: query.tz.as_deref(),
    };
    let stats = state.admin.stats(&query).await?;
    Ok(HttpResponse::Ok().json(answers::Data::new(stats)))
}
