//! `/api/admin/payments` and `/api/admin/invoices`: refunds (the rule is in
//! `billing::refunds`), and any user's invoices and credit notes as PDFs.

use actix_web::{web, HttpRequest, HttpResponse};
use chat_contract::answers;
use serde::Deserialize;

use super::AdminUser;
use crate::billing::refunds::RefundRequest;
use crate::error::{ErrorCode, Result};
use crate::http::{self, JsonAfterAuth};
use crate::state::AppState;

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/payments/{id}/refund", web::post().to(refund))
        .route("/invoices/{id}.pdf", web::get().to(pdf));
}

type Data = web::Data<AppState>;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RefundBody {
    /// Major units, like the payment's; absent: what remains.
    amount: Option<f64>,
    #[serde(default)]
    reason: String,
    #[serde(default)]
    end_plan: bool,
}

/// `POST /api/admin/payments/{id}/refund {amount?, reason, endPlan}`: refunds and issues
/// the credit note. An `Idempotency-Key` header makes a retried request answer the same
/// refund; without one, the same request within a minute does.
async fn refund(
    state: Data,
    req: HttpRequest,
    admin: AdminUser,
    id: web::Path<String>,
    body: JsonAfterAuth<RefundBody>,
) -> Result<HttpResponse> {
    let body = http::body(body)?;
    let idempotency_key = req
        .headers()
        .get("Idempotency-Key")
        .and_then(|h| h.to_str().ok())
        .map(|k| k.trim().chars().take(200).collect::<String>())
        .filter(|k| !k.is_empty());
    let request = RefundRequest {
        amount: body.amount,
        reason: body.reason,
        end_plan: body.end_plan,
        idempotency_key,
    };
    let refunded = state.billing.refund_payment(admin.actor(), &id, request).await?;
    let answer = crate::views::refund(&refunded.refund, &refunded.credit_note, &refunded.payment);
    Ok(HttpResponse::Ok().json(answers::Data::new(answer)))
}

/// `GET /api/admin/invoices/{id}.pdf`: any user's invoice or credit note, for support (a
/// deleted account's too: they are kept detached).
async fn pdf(state: Data, _admin: AdminUser, id: web::Path<String>) -> Result<HttpResponse> {
    let invoice = state.billing.invoice(&id).await?.ok_or(ErrorCode::NotFound)?;
    crate::http::invoices::pdf_answer(&state, &invoice)
}
