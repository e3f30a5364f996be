//! `/api/admin/users`: the users table, a user's page, a plan granted, a day's usage given
//! back (docs/api.md, "Operator console"). The rules are in `admin::users`.

use actix_web::{web, HttpResponse};
use chat_contract::answers;
use serde::Deserialize;

use super::AdminUser;
use crate::admin::users::UsersQuery;
use crate::error::Result;
use crate::state::AppState;

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/users", web::get().to(list))
        .route("/users/{id}", web::get().to(one))
        .route("/users/{id}/plan", web::put().to(set_plan))
        .route("/users/{id}/usage-reset", web::post().to(reset_usage));
}

type Data = web::Data<AppState>;

#[derive(Deserialize)]
struct ListQuery {
    q: Option<String>,
    plan: Option<String>,
    status: Option<String>,
    cursor: Option<String>,
}

/// `GET /api/admin/users?q=&plan=&status=&cursor=`: 50 a page, newest first.
async fn list(state: Data, _admin: AdminUser, query: web::Query<ListQuery>) -> Result<HttpResponse> {
    let query = UsersQuery {
        q: query.q.as_deref(),
        plan: query.plan.as_deref(),
        status: query.status.as_deref(),
        cursor: query.cursor.as_deref(),
    };
    let page = state.admin.users(&query).await?;
    Ok(HttpResponse::Ok().json(answers::Page {
        success: true,
        data: page.rows,
        next_cursor: page.next_cursor,
    }))
}

async fn one(state: Data, _admin: AdminUser, id: web::Path<String>) -> Result<HttpResponse> {
    let detail = state.admin.user(&id).await?;
    Ok(HttpResponse::Ok().json(answers::Data::new(detail)))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PlanBody {
    plan_type: Option<String>,
    days: Option<i64>,
    reason: Option<String>,
}

async fn set_plan(
    state: Data,
    admin: AdminUser,
    id: web::Path<String>,
    body: web::Json<PlanBody>,
) -> Result<HttpResponse> {
    let detail = state
        .admin
        .set_plan(
            admin.actor(),
            &id,
            body.plan_type.as_deref(),
            body.days,
            body.reason.as_deref(),
        )
        .await?;
    Ok(HttpResponse::Ok().json(answers::Data::new(detail)))
}

#[derive(Deserialize)]
struct ResetBody {
    service: Option<String>,
    reason: Option<String>,
}

async fn reset_usage(
    state: Data,
    admin: AdminUser,
    id: web::Path<String>,
    body: web::Json<ResetBody>,
) -> Result<HttpResponse> {
    let usage = state
        .admin
        .reset_usage(
            admin.actor(),
            &id,
            body.service.as_deref(),
            body.reason.as_deref(),
        )
        .await?;
    Ok(HttpResponse::Ok().json(answers::Data::new(usage)))
}
