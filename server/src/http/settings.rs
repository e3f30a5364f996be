//! `/api/settings`: language, AI personalisation and billing info (SPEC §3, §5, §7).
//! Theme, font size and notifications stay in the browser, as the spec says.

use actix_web::{web, HttpResponse};
use chat_contract::answers::{BillingInfoAnswer, SettingsAnswer};

use crate::accounts::settings::SettingsChange;
use crate::billing::vat_checks::BillingChange;
use crate::error::Result;
use crate::http::auth_user::AuthUser;
use crate::http::{self, JsonAfterAuth};
use crate::i18n;
use crate::state::AppState;
use crate::views;

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::scope("/settings")
            .route("", web::get().to(get_settings))
            .route("", web::put().to(put_settings))
            .route("/billing-info", web::put().to(put_billing_info)),
    );
}

type Data = web::Data<AppState>;

async fn get_settings(state: Data, user: AuthUser) -> Result<HttpResponse> {
    let billing = state.db.billing_info(user.id()).await?;
    Ok(HttpResponse::Ok().json(SettingsAnswer {
        success: true,
        settings: views::settings(&user.user),
        billing_info: Some(billing.as_ref().map(views::billing_info)),
    }))
}

/// Takes `{language}`, `{aiPersonalization}` or both (`accounts::settings`).
async fn put_settings(
    state: Data,
    user: AuthUser,
    body: JsonAfterAuth<SettingsChange>,
) -> Result<HttpResponse> {
    let change = http::body(body)?;
    let language_chosen = change.sets_language();
    let updated = state.accounts.update_settings(&user.user, change).await?;
    if language_chosen {
        // What this call says from here on is in the language just chosen.
        i18n::set_current(updated.language);
    }
    state.announce.settings(&updated).await?;
    Ok(HttpResponse::Ok().json(SettingsAnswer {
        success: true,
        settings: views::settings(&updated),
        billing_info: None,
    }))
}

/// Stores the billing info whole (`billing::vat_checks`); the answer's `vatCheck` tells
/// the buyer why they pay VAT if VIES did not confirm their number.
async fn put_billing_info(
    state: Data,
    user: AuthUser,
    body: JsonAfterAuth<BillingChange>,
) -> Result<HttpResponse> {
    let change = http::body(body)?;
    let row = state.billing.put_billing_info(user.id(), change).await?;
    state.announce.settings(&user.user).await?;
    Ok(HttpResponse::Ok().json(BillingInfoAnswer {
        success: true,
        billing_info: views::billing_info(&row),
    }))
}
