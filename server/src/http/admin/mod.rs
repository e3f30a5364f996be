//! `/api/admin`: the operator console's calls. Every one takes [`AdminUser`]: 401 without a
//! valid token, 403 `forbidden` for anyone but an admin. The role is read with the user on
//! every call, so a revoked admin is refused at once.

use std::future::Future;
use std::pin::Pin;

use actix_web::{web, FromRequest, HttpRequest, HttpResponse};
use chat_contract::answers;
use serde::Deserialize;

use crate::db::audit::{Actor, AuditFilter};
use crate::db::users::UserRow;
use crate::error::{ApiError, ErrorCode, Result};
use crate::http::auth_user::AuthUser;
use crate::state::AppState;
use chat_contract::states::UserRole;

mod payments;
mod stats;
mod suspension;
mod users;

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::scope("/admin")
            .route("/audit", web::get().to(audit))
            .configure(users::routes)
            .configure(suspension::routes)
            .configure(payments::routes)
            .configure(stats::routes),
    );
}

type Data = web::Data<AppState>;

/// Rows of a page of the log.
const AUDIT_PAGE: i64 = 50;

/// A caller who is an admin now.
#[derive(Debug)]
pub struct AdminUser {
    pub user: UserRow,
}

impl AdminUser {
    /// The audit log's actor: this admin.
    pub fn actor(&self) -> Actor {
        Actor::Admin {
            id: self.user.id.clone(),
            email: self.user.email.clone(),
        }
    }
}

impl FromRequest for AdminUser {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, Self::Error>>>>;

    fn from_request(req: &HttpRequest, payload: &mut actix_web::dev::Payload) -> Self::Future {
        let caller = AuthUser::from_request(req, payload);
        Box::pin(async move {
            let AuthUser { user } = caller.await?;
            if user.role != UserRole::Admin {
                return Err(ErrorCode::Forbidden.into());
            }
            Ok(AdminUser { user })
        })
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct AuditQuery {
    user_id: Option<String>,
    actor: Option<String>,
    cursor: Option<String>,
}

/// `GET /api/admin/audit?userId=&actor=&cursor=`: newest first; `actor` is an admin's id.
async fn audit(state: Data, _admin: AdminUser, query: web::Query<AuditQuery>) -> Result<HttpResponse> {
    let nonempty = |v: &Option<String>| v.as_deref().filter(|s| !s.is_empty()).map(str::to_owned);
    let filter = AuditFilter {
        target_user_id: nonempty(&query.user_id),
        actor_id: nonempty(&query.actor),
        before_id: nonempty(&query.cursor),
    };
    let mut rows = state.db.audit_page(&filter, AUDIT_PAGE + 1).await?;
    let next_cursor = if rows.len() as i64 > AUDIT_PAGE {
        rows.truncate(AUDIT_PAGE as usize);
        rows.last().map(|r| r.id.clone())
    } else {
        None
    };
    Ok(HttpResponse::Ok().json(answers::Page {
        success: true,
        data: rows.iter().map(crate::views::audit_entry).collect(),
        next_cursor,
    }))
}
