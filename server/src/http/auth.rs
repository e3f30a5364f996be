//! `/api/auth`: registration, login, password reset, profile, profile image and password
//! change (SPEC §4, §5, §7). Reads requests and writes answers; the rules are in
//! `crate::accounts`.

use actix_multipart::Multipart;
use actix_web::cookie::{Cookie, SameSite};
use actix_web::{web, HttpRequest, HttpResponse};
use chat_contract::answers::{self, NewToken, ProfileImage, SignedIn};

use crate::accounts::login::Login;
use crate::accounts::profile::{PasswordChange, ProfileChange};
use crate::accounts::registration::{SendCode, Verify};
use crate::accounts::reset::{Forgot, NewPassword, VerifyReset};
use crate::accounts::Session;
use crate::clock::DAY_MS;
use crate::db::users::UserRow;
use crate::error::{ErrorCode, Result};
use crate::http::auth_user::{request_token, AuthUser};
use crate::http::{self, JsonAfterAuth};
use crate::state::AppState;
use serde::Deserialize;

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::scope("/auth")
            .route("/register/send-code", web::post().to(register_send_code))
            .route("/register/verify", web::post().to(register_verify))
            .route("/register/resend-code", web::post().to(register_resend_code))
            .route("/login", web::post().to(login))
            .route("/forgot-password", web::post().to(forgot_password))
            .route("/verify-reset-code", web::post().to(verify_reset_code))
            .route("/reset-password", web::post().to(reset_password))
            .route("/profile", web::get().to(get_profile))
            .route("/profile", web::put().to(update_profile))
            .route("/profile", web::delete().to(delete_profile))
            .route("/profile/image", web::post().to(upload_profile_image))
            .route("/profile/image", web::delete().to(delete_profile_image))
            .route("/password", web::put().to(change_password)),
    );
}

type Data = web::Data<AppState>;

/// The caller's rate-limit key (its address).
fn client(state: &AppState, req: &HttpRequest) -> Option<String> {
    state.limits.client_key(req)
}

/// The user with a fresh token and when it expires, and the `token` cookie set to it.
fn signed_in(state: &AppState, user: &UserRow, session: Session) -> HttpResponse {
    let cookie = token_cookie(state, &session.token, session.days);
    HttpResponse::Ok().cookie(cookie).json(SignedIn {
        user: crate::views::user(user),
        token: session.token,
        expires_at: crate::quota::iso(session.now + session.days * DAY_MS),
    })
}

/// The `token` cookie for a token that lives `days`. `SameSite=Strict` keeps other sites'
/// pages from sending it; `Secure` (on an https site) keeps it off plain http. Not
/// `HttpOnly`: the web client reads it to put the token in its `Authorization` header.
fn token_cookie<'a>(state: &AppState, token: &'a str, days: i64) -> Cookie<'a> {
    let https = state
        .settings
        .server
        .public_url
        .get(..8)
        .is_some_and(|scheme| scheme.eq_ignore_ascii_case("https://"));
    Cookie::build("token", token)
        .path("/")
        .max_age(actix_web::cookie::time::Duration::days(days))
        .same_site(SameSite::Strict)
        .secure(https)
        .finish()
}

fn new_token(token: String, success: Option<bool>) -> HttpResponse {
    HttpResponse::Ok().json(NewToken {
        success,
        token,
        expires_at: None,
    })
}

#[tracing::instrument(skip_all)]
async fn register_send_code(
    state: Data,
    req: HttpRequest,
    body: web::Json<SendCode>,
) -> Result<HttpResponse> {
    let client = client(&state, &req);
    let token = state
        .accounts
        .send_registration_code(&body, client.as_deref())
        .await?;
    Ok(new_token(token, None))
}

#[derive(Deserialize)]
struct TokenBody {
    token: Option<String>,
}

async fn register_resend_code(
    state: Data,
    req: HttpRequest,
    body: web::Json<TokenBody>,
) -> Result<HttpResponse> {
    let client = client(&state, &req);
    let accounts = &state.accounts;
    let token = accounts
        .resend_registration_code(body.token.as_deref(), client.as_deref())
        .await?;
    Ok(new_token(token, None))
}

async fn register_verify(state: Data, req: HttpRequest, body: web::Json<Verify>) -> Result<HttpResponse> {
    let client = client(&state, &req);
    let (user, session) = state
        .accounts
        .verify_registration(&body, client.as_deref())
        .await?;
    Ok(signed_in(&state, &user, session))
}

#[tracing::instrument(skip_all)]
async fn login(state: Data, req: HttpRequest, body: web::Json<Login>) -> Result<HttpResponse> {
    let client = client(&state, &req);
    let (user, session) = state.accounts.login(&body, client.as_deref()).await?;
    Ok(signed_in(&state, &user, session))
}

async fn forgot_password(state: Data, req: HttpRequest, body: web::Json<Forgot>) -> Result<HttpResponse> {
    let client = client(&state, &req);
    let token = state.accounts.forgot_password(&body, client.as_deref()).await?;
    Ok(new_token(token, None))
}

async fn verify_reset_code(
    state: Data,
    req: HttpRequest,
    body: web::Json<VerifyReset>,
) -> Result<HttpResponse> {
    let client = client(&state, &req);
    let token = state.accounts.verify_reset_code(&body, client.as_deref()).await?;
    Ok(new_token(token, Some(true)))
}

async fn reset_password(state: Data, req: HttpRequest, body: web::Json<NewPassword>) -> Result<HttpResponse> {
    let client = client(&state, &req);
    state.accounts.reset_password(&body, client.as_deref()).await?;
    Ok(HttpResponse::Ok().json(answers::Done::new()))
}

async fn get_profile(user: AuthUser) -> Result<HttpResponse> {
    Ok(HttpResponse::Ok().json(crate::views::user(&user.user)))
}

async fn update_profile(
    state: Data,
    user: AuthUser,
    body: JsonAfterAuth<ProfileChange>,
) -> Result<HttpResponse> {
    let body = http::body(body)?;
    let updated = state.accounts.update_profile(user.id(), &body).await?;
    state.announce.profile(&updated);
    Ok(HttpResponse::Ok().json(crate::views::user(&updated)))
}

async fn delete_profile(state: Data, user: AuthUser) -> Result<HttpResponse> {
    // A paid plan must stop renewing before the account goes (nothing is deleted if the
    // payment provider cannot be reached).
    state.billing.end_for_deleted_account(user.id()).await?;
    state.accounts.delete(&user.user).await?;
    // The account's attachments go from the store now rather than at the next sweep.
    state.files.store.sweep_soon();
    Ok(HttpResponse::Ok().json(answers::Done::new()))
}

/// Tells the user's other tabs about a changed profile; the change is saved, so this is
/// best effort.
async fn announce_profile(state: &AppState, user_id: &str) {
    if let Ok(Some(updated)) = state.accounts.current(user_id).await {
        state.announce.profile(&updated);
    }
}

async fn upload_profile_image(state: Data, user: AuthUser, payload: Multipart) -> Result<HttpResponse> {
    let max = state.accounts.profile_image_max_bytes();
    let (_, bytes) =
        http::read_file_part(payload, max, ErrorCode::ImageTooLarge, ErrorCode::ImageRequired).await?;
    let url = state.accounts.set_profile_image(&user.user, bytes).await?;
    announce_profile(&state, user.id()).await;
    Ok(HttpResponse::Ok().json(ProfileImage {
        success: None,
        profile_image: Some(url),
    }))
}

async fn delete_profile_image(state: Data, user: AuthUser) -> Result<HttpResponse> {
    state.accounts.remove_profile_image(&user.user).await?;
    announce_profile(&state, user.id()).await;
    Ok(HttpResponse::Ok().json(ProfileImage {
        success: Some(true),
        profile_image: None,
    }))
}

async fn change_password(
    state: Data,
    req: HttpRequest,
    user: AuthUser,
    body: JsonAfterAuth<PasswordChange>,
) -> Result<HttpResponse> {
    let body = http::body(body)?;
    let (client, old_token) = (client(&state, &req), request_token(&req));
    let session = state
        .accounts
        .change_password(&user.user, &body, old_token.as_deref(), client.as_deref())
        .await?;
    let expires_at = crate::quota::iso(session.now + session.days * DAY_MS);
    Ok(HttpResponse::Ok()
        .cookie(token_cookie(&state, &session.token, session.days))
        .json(NewToken {
            success: Some(true),
            token: session.token,
            expires_at: Some(expires_at),
        }))
}
