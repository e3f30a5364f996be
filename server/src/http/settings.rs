//! `/api/settings`: language, AI personalisation and billing info (SPEC §3, §5, §7).
//! Theme, font size and notifications stay in the browser, as the spec says.

use actix_web::{web, HttpResponse};
use chat_contract::answers::{BillingInfoAnswer, SettingsAnswer};
use chat_contract::views::BillingType;
use serde::Deserialize;

use crate::db::billing::BillingRow;
use crate::db::users::AiPersonalization;
use crate::error::{ApiError, ErrorCode, Result};
use crate::http::auth_user::AuthUser;
use crate::http::{self, JsonAfterAuth};
use crate::i18n::{self, Lang};
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

pub const MAX_AI_USER_NAME: usize = 100;
pub const MAX_AI_USER_INFO: usize = 2000;
const MAX_BILLING_FIELD: usize = 200;

async fn get_settings(state: Data, user: AuthUser) -> Result<HttpResponse> {
    let billing = state.db.billing_info(user.id()).await?;
    Ok(HttpResponse::Ok().json(SettingsAnswer {
        success: true,
        settings: views::settings(&user.user),
        billing_info: Some(billing.as_ref().map(views::billing_info)),
    }))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct AiBody {
    enabled: Option<bool>,
    user_name: Option<String>,
    user_info: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SettingsBody {
    language: Option<String>,
    ai_personalization: Option<AiBody>,
}

/// Trimmed text of at most `max` characters; line breaks and tabs are the only control
/// characters allowed (in the free-text "about you"), and no invisible ones
/// ([`crate::domain::check_visible`]).
fn bounded(value: &str, field: &'static str, max: usize) -> Result<String> {
    let value = value.trim();
    if let Some(refused) = value
        .split(['\n', '\r', '\t'])
        .find_map(|line| crate::domain::check_visible(line, field).err())
    {
        Err(refused)
    } else if value.chars().count() > max {
        Err(ApiError::with_max(
            ErrorCode::FieldTooLong,
            Some(field),
            max as u64,
        ))
    } else {
        Ok(value.to_owned())
    }
}

/// Takes `{language}`, `{aiPersonalization}` or both; fields left out keep their value.
/// Everything is checked before anything is written.
async fn put_settings(
    state: Data,
    user: AuthUser,
    body: JsonAfterAuth<SettingsBody>,
) -> Result<HttpResponse> {
    let body = http::body(body)?;
    if body.language.is_none() && body.ai_personalization.is_none() {
        return Err(ErrorCode::ValidationError.into());
    }
    let language = body
        .language
        .as_deref()
        .map(|l| Lang::parse(l).ok_or(ErrorCode::InvalidLanguage))
        .transpose()?;
    let ai = body
        .ai_personalization
        .map(|ai| -> Result<(bool, String, String)> {
            Ok((
                ai.enabled.unwrap_or(user.user.ai_enabled),
                bounded(
                    ai.user_name.as_deref().unwrap_or(&user.user.ai_user_name),
                    "userName",
                    MAX_AI_USER_NAME,
                )?,
                bounded(
                    ai.user_info.as_deref().unwrap_or(&user.user.ai_user_info),
                    "userInfo",
                    MAX_AI_USER_INFO,
                )?,
            ))
        })
        .transpose()?;
    let now = state.now();
    if let Some(lang) = language {
        state.db.set_language(user.id(), lang, now).await?;
        i18n::set_current(lang);
    }
    if let Some((enabled, user_name, user_info)) = &ai {
        let ai = AiPersonalization {
            enabled: *enabled,
            user_name,
            user_info,
        };
        state.db.set_ai_personalization(user.id(), &ai, now).await?;
    }
    let updated = state
        .db
        .user_by_id(user.id())
        .await?
        .ok_or(ErrorCode::Unauthorized)?;
    state.announce.settings(&updated).await?;
    Ok(HttpResponse::Ok().json(SettingsAnswer {
        success: true,
        settings: views::settings(&updated),
        billing_info: None,
    }))
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct BillingFields {
    billing_type: Option<String>,
    name: Option<String>,
    company_name: Option<String>,
    address: Option<String>,
    city: Option<String>,
    postal_code: Option<String>,
    country: Option<String>,
    vat_number: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct BillingBody {
    billing_info: Option<BillingFields>,
    billing_type: Option<String>,
}

fn required(value: Option<&str>, field: &'static str) -> Result<String> {
    let value = value.map(str::trim).unwrap_or("");
    if value.is_empty() {
        return Err(ApiError::field(ErrorCode::FieldRequired, field));
    }
    bounded(value, field, MAX_BILLING_FIELD)
}

fn country(value: Option<&str>) -> Result<String> {
    let value = required(value, "country")?;
    crate::billing::vat::country_code(&value)
        .ok_or_else(|| ApiError::field(ErrorCode::InvalidCountry, "country"))
}

/// Billing info is stored whole: the required fields of its type must all be there.
/// Company name and VAT number belong to company billing only and are dropped otherwise.
/// The country is an ISO code (VAT depends on it). The VAT number's rules and its VIES
/// check are billing's ([`crate::billing::Billing::put_billing_info`]); the answer
/// (`vatCheck`) tells the buyer why they pay VAT if VIES did not confirm it.
async fn put_billing_info(
    state: Data,
    user: AuthUser,
    body: JsonAfterAuth<BillingBody>,
) -> Result<HttpResponse> {
    let body = http::body(body)?;
    let info = body.billing_info.unwrap_or_default();
    let billing_type = body
        .billing_type
        .or(info.billing_type.clone())
        .unwrap_or_default();
    let billing_type = BillingType::parse(&billing_type).ok_or(ErrorCode::InvalidBillingType)?;
    let company = billing_type == BillingType::Company;
    let row = BillingRow {
        billing_type,
        name: required(info.name.as_deref(), "name")?,
        company_name: company
            .then(|| required(info.company_name.as_deref(), "companyName"))
            .transpose()?,
        address: required(info.address.as_deref(), "address")?,
        city: required(info.city.as_deref(), "city")?,
        postal_code: required(info.postal_code.as_deref(), "postalCode")?,
        country: country(info.country.as_deref())?,
        vat_number: company
            .then(|| required(info.vat_number.as_deref(), "vatNumber"))
            .transpose()?,
        vat_check: None,
    };
    let row = state.billing.put_billing_info(user.id(), row).await?;
    state.announce.settings(&user.user).await?;
    Ok(HttpResponse::Ok().json(BillingInfoAnswer {
        success: true,
        billing_info: views::billing_info(&row),
    }))
}
