//! `PUT /api/admin/users/{id}/suspension`: an admin suspends an account or lifts it. The
//! rules are in `accounts::suspension`.

use actix_web::{web, HttpResponse};
use chat_contract::admin::AdminSuspension;
use chat_contract::answers;

use super::AdminUser;
use crate::accounts::suspension::SuspensionForm;
use crate::clock::iso;
use crate::error::Result;
use crate::http::{self, JsonAfterAuth};
use crate::state::AppState;

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/users/{id}/suspension", web::put().to(set_suspension));
}

async fn set_suspension(
    state: web::Data<AppState>,
    admin: AdminUser,
    path: web::Path<String>,
    body: JsonAfterAuth<SuspensionForm>,
) -> Result<HttpResponse> {
    let body = http::body(body)?;
    let user = state
        .accounts
        .set_suspension(&state.billing, &admin.actor(), &path, &body)
        .await?;
    Ok(HttpResponse::Ok().json(answers::Data::new(AdminSuspension {
        suspended: user.suspended_at.is_some(),
        suspended_at: user.suspended_at.map(iso),
    })))
}
