//! `/api/payments`: the user's payments (invoices), and the demo provider's checkout page.
//! The demo page is reached by its unguessable payment id, as a provider's hosted
//! checkout would be; its buttons complete or cancel the payment and send the browser to
//! the client's payment status or cancel page.

use actix_web::http::header::LOCATION;
use actix_web::{web, HttpResponse};
use serde_json::json;

use crate::auth::AuthUser;
use crate::error::{ErrorCode, Result};
use crate::state::AppState;
use crate::subscriptions::{self, payment_json};

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::scope("/payments")
            .route("", web::get().to(list))
            .route("/demo/{id}", web::get().to(demo_checkout))
            .route("/demo/{id}/pay", web::post().to(demo_pay))
            .route("/demo/{id}/cancel", web::post().to(demo_cancel))
            .route("/{id}", web::get().to(get_one)),
    );
}

type Data = web::Data<AppState>;

async fn list(state: Data, user: AuthUser) -> Result<HttpResponse> {
    let payments = state.db.payments_of(user.id()).await?;
    let data: Vec<_> = payments.iter().map(payment_json).collect();
    Ok(HttpResponse::Ok().json(json!({ "success": true, "data": data })))
}

/// One of the user's payments; another user's is a 404.
async fn get_one(state: Data, user: AuthUser, id: web::Path<String>) -> Result<HttpResponse> {
    let payment = state
        .db
        .payment(&id)
        .await?
        .filter(|p| p.user_id.as_deref() == Some(user.id()))
        .ok_or(ErrorCode::NotFound)?;
    Ok(HttpResponse::Ok().json(json!({ "success": true, "data": payment_json(&payment) })))
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

async fn demo_checkout(state: Data, id: web::Path<String>) -> Result<HttpResponse> {
    let payment = state.db.payment(&id).await?.ok_or(ErrorCode::NotFound)?;
    let amount = |minor: i64| format!("{:.2} {}", minor as f64 / 100.0, payment.currency);
    let id = html_escape(&payment.id);
    let open = payment.status == "pending";
    let page = format!(
        r#"<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>Demo checkout</title>
<style>body{{font-family:system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem}}
table{{width:100%;margin:1rem 0}}td:last-child{{text-align:right}}button{{font-size:1rem;padding:.6rem 1.2rem;margin-right:.5rem}}</style>
</head><body><h1>Demo checkout</h1>
<p>This is the built-in demo payment provider: no card is charged.</p>
<table><tr><td>Plan</td><td>{plan} ({cycle})</td></tr>
<tr><td>Net</td><td>{net}</td></tr><tr><td>VAT {vat_pct}%</td><td>{vat}</td></tr>
<tr><td><strong>Total</strong></td><td><strong>{total}</strong></td></tr></table>
{actions}</body></html>"#,
        plan = html_escape(&payment.plan_type),
        cycle = html_escape(&payment.billing_cycle),
        net = amount(payment.net_amount),
        vat_pct = (payment.vat_rate * 100.0).round(),
        vat = amount(payment.vat_amount),
        total = amount(payment.total_amount),
        actions = if open {
            format!(
                r#"<form method="post" action="/api/payments/demo/{id}/pay" style="display:inline"><button>Pay</button></form>
<form method="post" action="/api/payments/demo/{id}/cancel" style="display:inline"><button>Cancel</button></form>"#
            )
        } else {
            format!("<p>This payment is {}.</p>", html_escape(&payment.status))
        },
    );
    Ok(HttpResponse::Ok()
        .content_type("text/html; charset=utf-8")
        .body(page))
}

fn see_other(location: String) -> HttpResponse {
    HttpResponse::SeeOther()
        .insert_header((LOCATION, location))
        .finish()
}

async fn demo_pay(state: Data, id: web::Path<String>) -> Result<HttpResponse> {
    subscriptions::complete_payment(&state, &id).await?;
    Ok(see_other(format!("/payment/status?paymentId={id}")))
}

async fn demo_cancel(state: Data, id: web::Path<String>) -> Result<HttpResponse> {
    state.db.payment(&id).await?.ok_or(ErrorCode::NotFound)?;
    subscriptions::abandon_payment(&state, &id).await?;
    Ok(see_other(format!("/payment-cancel?paymentId={id}")))
}
