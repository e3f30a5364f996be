//! `/api/subscription` (SPEC §7) and the public plan catalogue `/api/plans`.

use actix_web::{web, HttpRequest, HttpResponse};

use crate::billing::subscriptions::{ChangeOutcome, PlanChange};
use crate::error::Result;
use crate::http::auth_user::{self, AuthUser};
use crate::http::{self, JsonAfterAuth};
use crate::state::AppState;
use crate::views;
use chat_contract::answers::{PaymentRequired, PlansAnswer, SubscriptionAnswer};
use chat_contract::views::{VatBasis, VatEstimate};

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/plans", web::get().to(plans)).service(
        web::scope("/subscription")
            .route("", web::get().to(get_subscription))
            .route("/change", web::put().to(change))
            .route("/cancel", web::put().to(cancel))
            .route("/cancel-pending", web::put().to(cancel_pending)),
    );
}

type Data = web::Data<AppState>;

/// The catalogue for plan cards: features, limits, models, and prices with the VAT this
/// caller would pay. Public: without a (valid) token, or without billing info, the VAT
/// is the seller's domestic rate, as an estimate.
async fn plans(state: Data, req: HttpRequest) -> Result<HttpResponse> {
    let user = match auth_user::request_token(&req) {
        Some(token) => state.accounts.authenticate(&token).await?,
        None => None,
    };
    let billing = match &user {
        Some(user) => state.db.billing_info(&user.id).await?,
        None => None,
    };
    let vat = state.billing.vat_for(billing.as_ref());
    let data: Vec<_> = state
        .catalogue
        .all()
        .into_iter()
        .map(|p| state.plans.plan(p, vat.rate))
        .collect();
    Ok(HttpResponse::Ok().json(PlansAnswer {
        success: true,
        data,
        vat_rate: vat.rate,
        vat: VatEstimate {
            rate: vat.rate,
            treatment: vat.treatment,
            basis: if billing.is_some() {
                VatBasis::BillingInfo
            } else {
                VatBasis::Seller
            },
            country: billing.map_or_else(|| state.billing.seller_country().to_owned(), |b| b.country),
        },
    }))
}

async fn get_subscription(state: Data, user: AuthUser) -> Result<HttpResponse> {
    let sub = state.db.subscription(user.id(), state.now()).await?;
    Ok(HttpResponse::Ok().json(subscription_answer(&state, &sub, None)))
}

/// The subscription as REST answers it.
fn subscription_answer(
    state: &AppState,
    sub: &crate::db::subscriptions::SubscriptionRow,
    requires_payment: Option<bool>,
) -> SubscriptionAnswer {
    SubscriptionAnswer {
        success: true,
        subscription: state.plans.subscription(sub),
        requires_payment,
    }
}

/// Upgrades answer with a payment to make (`checkoutUrl` for the demo provider's page,
/// `clientSecret` for Stripe.js to confirm); downgrades with the
/// subscription and its scheduled change. An `Idempotency-Key` header makes a retried
/// upgrade return the same payment instead of a second one.
async fn change(
    state: Data,
    req: HttpRequest,
    user: AuthUser,
    body: JsonAfterAuth<PlanChange>,
) -> Result<HttpResponse> {
    let idempotency_key = req.headers().get("Idempotency-Key").and_then(|h| h.to_str().ok());
    let request = http::body(body)?.request(user.user.language, idempotency_key)?;
    match state.billing.change_plan(user.id(), request).await? {
        ChangeOutcome::PaymentRequired { payment, checkout } => {
            Ok(HttpResponse::Ok().json(PaymentRequired {
                success: true,
                requires_payment: true,
                payment: views::payment(&payment),
                checkout_url: checkout.url,
                client_secret: checkout.client_secret,
            }))
        }
        ChangeOutcome::Scheduled(sub) => {
            Ok(HttpResponse::Ok().json(subscription_answer(&state, &sub, Some(false))))
        }
    }
}

async fn cancel(state: Data, user: AuthUser) -> Result<HttpResponse> {
    let sub = state.billing.cancel(user.id()).await?;
    Ok(HttpResponse::Ok().json(subscription_answer(&state, &sub, None)))
}

async fn cancel_pending(state: Data, user: AuthUser) -> Result<HttpResponse> {
    let sub = state.billing.cancel_pending(user.id()).await?;
    Ok(HttpResponse::Ok().json(subscription_answer(&state, &sub, None)))
}
