//! `/api/messages/{id}`: what the user thinks of an answer. Another user's message is a
//! 404, as everywhere.

use actix_web::{web, HttpResponse};
use chat_contract::answers;
use chat_contract::frames::Rating;
use serde::Deserialize;

use crate::chat::tree;
use crate::error::Result;
use crate::http::auth_user::AuthUser;
use crate::http::{self, JsonAfterAuth};
use crate::state::AppState;

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/messages/{id}/feedback", web::put().to(feedback));
}

#[derive(Deserialize)]
struct FeedbackBody {
    /// `up`, `down`, or `null` to take the rating back.
    rating: Option<Rating>,
    comment: Option<String>,
}

/// `PUT /api/messages/{id}/feedback`: answers `{success, data: feedback | null}`; every
/// tab of the user gets `message.feedback`.
async fn feedback(
    state: web::Data<AppState>,
    user: AuthUser,
    id: web::Path<String>,
    body: JsonAfterAuth<FeedbackBody>,
) -> Result<HttpResponse> {
    let body = http::body(body)?;
    let feedback =
        tree::set_feedback(&state.chat, user.id(), &id, body.rating, body.comment.as_deref()).await?;
    Ok(HttpResponse::Ok().json(answers::Data::new(feedback)))
}
