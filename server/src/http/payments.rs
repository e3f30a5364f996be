//! `/api/payments`: the user's payments (invoices), what the web client needs to take a
//! card, Stripe's webhook, and the demo provider's checkout page. The demo page and its
//! buttons need the payment owner's login (the `token` cookie from the web client) and
//! exist only while the demo provider runs; its buttons complete or cancel the payment
//! and send the browser to the client's payment status or cancel page.

use actix_web::http::header::{CONTENT_SECURITY_POLICY, LOCATION};
use actix_web::{web, HttpRequest, HttpResponse};
use chat_contract::answers;

use crate::error::Result;
use crate::http;
use crate::http::auth_user::AuthUser;
use crate::state::AppState;
use crate::views;

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::scope("/payments")
            .route("", web::get().to(list))
            .route("/config", web::get().to(config))
            .route("/stripe/webhook", web::post().to(stripe_webhook))
            .route("/demo/{id}", web::get().to(demo_checkout))
            .route("/demo/{id}/pay", web::post().to(demo_pay))
            .route("/demo/{id}/cancel", web::post().to(demo_cancel))
            .route("/{id}", web::get().to(get_one)),
    );
}

type Data = web::Data<AppState>;

async fn list(state: Data, user: AuthUser) -> Result<HttpResponse> {
    let payments = state.billing.payments_of(user.id()).await?;
    let data: Vec<_> = payments.iter().map(views::payment).collect();
    Ok(HttpResponse::Ok().json(answers::Data::new(data)))
}

/// Which provider takes payments, for the web client's checkout (no login needed).
async fn config(state: Data) -> HttpResponse {
    HttpResponse::Ok().json(answers::Data::new(state.billing.provider().client_config()))
}

/// Stripe's events; refused (400) unless signed with our webhook secret.
async fn stripe_webhook(state: Data, req: HttpRequest, body: web::Bytes) -> Result<HttpResponse> {
    let signature = req
        .headers()
        .get("Stripe-Signature")
        .and_then(|h| h.to_str().ok());
    state.billing.receive_stripe_event(&body, signature).await?;
    Ok(HttpResponse::Ok().json(answers::Done::new()))
}

/// One of the user's payments; another user's is a 404.
async fn get_one(state: Data, user: AuthUser, id: web::Path<String>) -> Result<HttpResponse> {
    let payment = state.billing.payment_of_user(user.id(), &id).await?;
    Ok(HttpResponse::Ok().json(answers::Data::new(views::payment(&payment))))
}

async fn demo_checkout(state: Data, user: AuthUser, id: web::Path<String>) -> Result<HttpResponse> {
    let payment = state.billing.demo_payment(user.id(), &id).await?;
    Ok(HttpResponse::Ok()
        .content_type("text/html; charset=utf-8")
        .insert_header((CONTENT_SECURITY_POLICY, http::headers::STATIC_PAGE_POLICY))
        .body(http::demo_checkout::page(
            crate::i18n::current(),
            &payment,
            state.billing.plan_name(&payment),
        )))
}

fn see_other(location: String) -> HttpResponse {
    HttpResponse::SeeOther()
        .insert_header((LOCATION, location))
        .finish()
}

async fn demo_pay(state: Data, user: AuthUser, id: web::Path<String>) -> Result<HttpResponse> {
    state.billing.pay_demo(user.id(), &id).await?;
    Ok(see_other(format!("/payment/status?paymentId={id}")))
}

async fn demo_cancel(state: Data, user: AuthUser, id: web::Path<String>) -> Result<HttpResponse> {
    state.billing.cancel_demo(user.id(), &id).await?;
    Ok(see_other(format!("/payment-cancel?paymentId={id}")))
}
