//! `/api/auth`: registration with an e-mailed code, login, password reset, profile,
//! profile image and password change (SPEC §4, §5, §7).

use actix_multipart::Multipart;
use actix_web::cookie::{Cookie, SameSite};
use actix_web::{web, HttpRequest, HttpResponse};
use chat_contract::answers::{self, NewToken, ProfileImage, SignedIn};
use chat_contract::views::User;
use serde::Deserialize;

use crate::auth::codes::{new_code, new_token, same_digest};
use crate::auth::AuthUser;
use crate::clock::{DAY_MS, MINUTE_MS};
use crate::db::registrations::PendingRegistration;
use crate::db::users::{NewUser, UserRow};
use crate::domain::{Code, Email, Name, Password};
use crate::error::{ApiError, ErrorCode, OnUniqueViolation, Result};
use crate::http::{self, JsonAfterAuth};
use crate::i18n::{self, Lang};
use crate::mail;
use crate::state::AppState;
use chat_contract::frames::ServerFrame;

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

// Registration and reset tokens are hashed under these purposes; codes under CODE.
const REGISTRATION: &str = "registration";
const RESET: &str = "reset";
const CODE: &str = "code";

/// The user with a fresh token and when it expires, and the `token` cookie set to it.
fn with_token(state: &AppState, user: User, token: String, now: i64, days: i64) -> HttpResponse {
    let cookie = token_cookie(state, &token, days);
    HttpResponse::Ok().cookie(cookie).json(SignedIn {
        user,
        token,
        expires_at: crate::quota::iso(now + days * DAY_MS),
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

/// Code checks per account and flow are counted in windows of an hour.
const CODE_WINDOW_MS: i64 = 60 * MINUTE_MS;

/// Claims one code check for `subject` (the account, or the e-mail of a registration) in
/// `flow`. New tokens from resends or new requests share the budget, so a guesser gets
/// `max_code_attempts_per_hour` tries an hour, not 5 per token.
async fn claim_code_check(state: &AppState, subject: &str, flow: &str) -> Result<()> {
    let max = state.settings.auth.max_code_attempts_per_hour;
    let now = state.now();
    let claimed = state
        .db
        .claim_code_attempt(subject, flow, now, CODE_WINDOW_MS, max)
        .await?;
    if claimed.is_some() {
        return Ok(());
    }
    Err(code_checks_locked(state, subject, flow)
        .await?
        .unwrap_or_else(dead_token))
}

/// The 429 for a flow whose code checks are used up for this window, if they are.
async fn code_checks_locked(state: &AppState, subject: &str, flow: &str) -> Result<Option<ApiError>> {
    let now = state.now();
    let max = state.settings.auth.max_code_attempts_per_hour;
    let until = state
        .db
        .code_attempts_locked_until(subject, flow, now, CODE_WINDOW_MS, max)
        .await?;
    Ok(until.map(|until| {
        ApiError::retry_after(
            ErrorCode::TooManyAttempts,
            ((until - now + 999) / 1000).max(1) as u64,
        )
    }))
}

fn code_ttl_ms(state: &AppState) -> i64 {
    state.settings.auth.code_ttl_minutes * MINUTE_MS
}

/// A token that saw too many wrong codes: the client must start over (send-code or
/// forgot-password), which the per-e-mail rate limit lets it do after about a minute.
fn dead_token() -> ApiError {
    ApiError::retry_after(ErrorCode::TooManyAttempts, 60)
}

/// Checks `code` against a stored code hash, counting a failure; the token is dead once
/// `max_code_attempts` wrong codes were tried.
async fn check_code<F, Fut>(
    state: &AppState,
    stored: &str,
    attempts: i64,
    expires_at: i64,
    code: &Code,
    count_failure: F,
) -> Result<()>
where
    F: FnOnce() -> Fut,
    Fut: std::future::Future<Output = sqlx::Result<i64>>,
{
    let max = state.settings.auth.max_code_attempts;
    if attempts >= max {
        return Err(dead_token());
    }
    if expires_at <= state.now() {
        return Err(ErrorCode::CodeExpired.into());
    }
    if same_digest(stored, &state.codes.hash(CODE, code.as_str())) {
        return Ok(());
    }
    if count_failure().await? >= max {
        Err(dead_token())
    } else {
        Err(ErrorCode::InvalidCode.into())
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SendCodeBody {
    name: Option<String>,
    email: Option<String>,
    password: Option<String>,
    confirm_password: Option<String>,
    privacy_accepted: Option<bool>,
    language: Option<String>,
}

#[tracing::instrument(skip_all)]
async fn register_send_code(
    state: Data,
    req: HttpRequest,
    body: web::Json<SendCodeBody>,
) -> Result<HttpResponse> {
    let lang = body.language.as_deref().and_then(crate::i18n::from_hint);
    if let Some(lang) = lang {
        i18n::set_current(lang);
    }
    let lang = lang.unwrap_or_else(i18n::current);
    state.limits.call(&req).await?;
    let name = Name::parse(body.name.as_deref())?;
    let email = Email::parse(body.email.as_deref())?;
    let password = Password::parse(body.password.as_deref(), ErrorCode::PasswordRequired)?;
    if body
        .confirm_password
        .as_deref()
        .is_some_and(|c| c != password.expose())
    {
        return Err(ErrorCode::PasswordsMismatch.into());
    }
    if body.privacy_accepted != Some(true) {
        return Err(ErrorCode::PrivacyNotAccepted.into());
    }
    state.limits.mail(email.as_str()).await?;
    // Hashed for a taken e-mail too, so the answer takes as long either way.
    let password_hash = state.hasher.hash(password.expose()).await?;
    let (token, code) = (new_token(), new_code());
    let now = state.now();
    let owner = state.db.user_by_email(email.as_str()).await?;
    let registration = PendingRegistration {
        token_hash: state.codes.hash(REGISTRATION, &token),
        name: name.as_str().to_owned(),
        email: email.as_str().to_owned(),
        password_hash,
        language: lang,
        // A taken e-mail gets a registration whose code never matches (an empty digest
        // equals no hash), so verify and resend answer as they would for a new e-mail.
        code_hash: if owner.is_some() {
            String::new()
        } else {
            state.codes.hash(CODE, &code)
        },
        attempts: 0,
        expires_at: now + code_ttl_ms(&state),
    };
    state
        .db
        .put_registration(&registration, now, now - DAY_MS)
        .await?;
    let mail = match &owner {
        Some(owner) => registration_notice(&state, owner),
        None => mail::registration_code(
            lang,
            email.as_str(),
            name.as_str(),
            &code,
            state.settings.auth.code_ttl_minutes,
        ),
    };
    state.mailer.send(mail).await?;
    Ok(HttpResponse::Ok().json(NewToken {
        success: None,
        token,
        expires_at: None,
    }))
}

/// The mail to an account's owner when someone tries to register with their address,
/// in the owner's language.
fn registration_notice(state: &AppState, owner: &UserRow) -> mail::Mail {
    let lang = owner.language;
    mail::registration_attempt(lang, &owner.email, &owner.name, &state.settings.server.public_url)
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
    state.limits.call(&req).await?;
    let old_hash = state
        .codes
        .hash(REGISTRATION, body.token.as_deref().unwrap_or(""));
    let registration = state
        .db
        .registration(&old_hash)
        .await?
        .ok_or(ErrorCode::VerificationFailed)?;
    let lang = registration.language;
    i18n::set_current(lang);
    if let Some(locked) = code_checks_locked(&state, &registration.email, REGISTRATION).await? {
        return Err(locked);
    }
    if registration.attempts >= state.settings.auth.max_code_attempts {
        return Err(dead_token());
    }
    state.limits.mail(&registration.email).await?;
    // Mail first: if sending fails, the client still holds a working token and may retry.
    let (token, code) = (new_token(), new_code());
    let owner = state.db.user_by_email(&registration.email).await?;
    let (mail, code_hash) = match &owner {
        Some(owner) => (registration_notice(&state, owner), String::new()),
        None => (
            mail::registration_code(
                lang,
                &registration.email,
                &registration.name,
                &code,
                state.settings.auth.code_ttl_minutes,
            ),
            state.codes.hash(CODE, &code),
        ),
    };
    state.mailer.send(mail).await?;
    let rotated = state
        .db
        .rotate_registration(
            &old_hash,
            &state.codes.hash(REGISTRATION, &token),
            &code_hash,
            state.now() + code_ttl_ms(&state),
        )
        .await?;
    if !rotated {
        // A concurrent resend or verify got there first.
        return Err(ErrorCode::VerificationFailed.into());
    }
    Ok(HttpResponse::Ok().json(NewToken {
        success: None,
        token,
        expires_at: None,
    }))
}

#[derive(Deserialize)]
struct VerifyBody {
    token: Option<String>,
    code: Option<String>,
}

async fn register_verify(state: Data, req: HttpRequest, body: web::Json<VerifyBody>) -> Result<HttpResponse> {
    state.limits.call(&req).await?;
    let code = Code::parse(body.code.as_deref())?;
    let token_hash = state
        .codes
        .hash(REGISTRATION, body.token.as_deref().unwrap_or(""));
    let registration = state
        .db
        .registration(&token_hash)
        .await?
        .ok_or(ErrorCode::VerificationFailed)?;
    let lang = registration.language;
    i18n::set_current(lang);
    let attempt = state.limits.attempt(&req, &registration.email).await?;
    claim_code_check(&state, &registration.email, REGISTRATION).await?;
    check_code(
        &state,
        &registration.code_hash,
        registration.attempts,
        registration.expires_at,
        &code,
        || state.db.registration_failed_attempt(&token_hash),
    )
    .await?;
    state.limits.succeeded(attempt).await;
    let now = state.now();
    let id = uuid::Uuid::now_v7().to_string();
    let new_user = NewUser {
        id: &id,
        name: &registration.name,
        email: &registration.email,
        password_hash: &registration.password_hash,
        language: lang,
        now,
    };
    state
        .db
        .create_user_from_registration(&new_user, &token_hash)
        .await
        .on_unique_violation(ErrorCode::EmailTaken)?;
    let user = state
        .db
        .user_by_id(&id)
        .await?
        .ok_or_else(|| anyhow::anyhow!("new user vanished"))?;
    let days = state.settings.auth.remember_days;
    let token = state.tokens.issue(&id, user.token_version, now, days)?;
    Ok(with_token(&state, crate::views::user(&user), token, now, days))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct LoginBody {
    email: Option<String>,
    password: Option<String>,
    remember_me: Option<bool>,
}

#[tracing::instrument(skip_all)]
async fn login(state: Data, req: HttpRequest, body: web::Json<LoginBody>) -> Result<HttpResponse> {
    state.limits.call(&req).await?;
    let email = Email::parse(body.email.as_deref())?;
    let password = body.password.as_deref().unwrap_or("");
    if password.is_empty() {
        return Err(ErrorCode::PasswordRequired.into());
    }
    let attempt = state.limits.attempt(&req, email.as_str()).await?;
    let user = state.db.user_by_email(email.as_str()).await?;
    let hash = user.as_ref().map(|u| u.password_hash.as_str());
    if !state.hasher.verify(password, hash).await? {
        return Err(ErrorCode::InvalidCredentials.into());
    }
    let user = user.ok_or(ErrorCode::InvalidCredentials)?;
    state.limits.succeeded(attempt).await;
    i18n::set_current(user.language);
    let auth = &state.settings.auth;
    let days = if body.remember_me == Some(true) {
        auth.remember_days
    } else {
        auth.session_days
    };
    let now = state.now();
    let token = state.tokens.issue(&user.id, user.token_version, now, days)?;
    Ok(with_token(&state, crate::views::user(&user), token, now, days))
}

#[derive(Deserialize)]
struct ForgotBody {
    email: Option<String>,
    lang: Option<String>,
}

/// Always answers `{token}`, known e-mail or not, so nobody can probe which e-mails are
/// registered; only a known one gets a stored reset and a mail. Both happen after the
/// answer, so its timing does not tell either.
async fn forgot_password(state: Data, req: HttpRequest, body: web::Json<ForgotBody>) -> Result<HttpResponse> {
    if let Some(lang) = body.lang.as_deref().and_then(crate::i18n::from_hint) {
        i18n::set_current(lang);
    }
    let lang = i18n::current();
    state.limits.call(&req).await?;
    let email = Email::parse(body.email.as_deref())?;
    state.limits.mail(email.as_str()).await?;
    let token = new_token();
    let token_hash = state.codes.hash(RESET, &token);
    let worker = state.clone();
    let email = email.as_str().to_owned();
    actix_web::rt::spawn(async move {
        if let Err(e) = start_reset(&worker, &email, &token_hash, lang).await {
            tracing::error!(error = ?e, "could not start a password reset");
        }
    });
    Ok(HttpResponse::Ok().json(NewToken {
        success: None,
        token,
        expires_at: None,
    }))
}

/// Stores a reset for `email` and mails its code, if the e-mail belongs to a user.
async fn start_reset(state: &AppState, email: &str, token_hash: &str, lang: Lang) -> anyhow::Result<()> {
    let Some(user) = state.db.user_by_email(email).await? else {
        return Ok(());
    };
    let code = new_code();
    let now = state.now();
    let expires_at = now + code_ttl_ms(state);
    let code_hash = state.codes.hash(CODE, &code);
    state
        .db
        .put_reset(token_hash, &user.id, &code_hash, expires_at, now)
        .await?;
    let ttl = state.settings.auth.code_ttl_minutes;
    state
        .mailer
        .send(mail::reset_code(lang, &user.email, &user.name, &code, ttl))
        .await
}

#[derive(Deserialize)]
struct VerifyResetBody {
    email: Option<String>,
    code: Option<String>,
    token: Option<String>,
}

async fn verify_reset_code(
    state: Data,
    req: HttpRequest,
    body: web::Json<VerifyResetBody>,
) -> Result<HttpResponse> {
    state.limits.call(&req).await?;
    let email = Email::parse(body.email.as_deref())?;
    let code = Code::parse(body.code.as_deref())?;
    let attempt = state.limits.attempt(&req, email.as_str()).await?;
    let token_hash = state.codes.hash(RESET, body.token.as_deref().unwrap_or(""));
    // An unknown token (e.g. from a forgot-password call for an unregistered e-mail)
    // answers like a wrong code.
    let reset = state
        .db
        .reset(&token_hash)
        .await?
        .filter(|r| !r.verified)
        .ok_or(ErrorCode::InvalidCode)?;
    let stored = if reset.email == email.as_str() {
        reset.code_hash.as_str()
    } else {
        ""
    };
    claim_code_check(&state, &reset.user_id, RESET).await?;
    check_code(&state, stored, reset.attempts, reset.expires_at, &code, || {
        state.db.reset_failed_attempt(&token_hash)
    })
    .await?;
    state.limits.succeeded(attempt).await;
    let token = new_token();
    let verified = state
        .db
        .verify_reset(
            &token_hash,
            &state.codes.hash(RESET, &token),
            state.now() + code_ttl_ms(&state),
        )
        .await?;
    if !verified {
        return Err(ErrorCode::VerificationFailed.into());
    }
    Ok(HttpResponse::Ok().json(NewToken {
        success: Some(true),
        token,
        expires_at: None,
    }))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ResetBody {
    token: Option<String>,
    new_password: Option<String>,
    confirm_password: Option<String>,
    lang: Option<String>,
}

async fn reset_password(state: Data, req: HttpRequest, body: web::Json<ResetBody>) -> Result<HttpResponse> {
    if let Some(lang) = body.lang.as_deref().and_then(crate::i18n::from_hint) {
        i18n::set_current(lang);
    }
    state.limits.call(&req).await?;
    let password = Password::parse(body.new_password.as_deref(), ErrorCode::NewPasswordRequired)?;
    if body
        .confirm_password
        .as_deref()
        .is_some_and(|c| c != password.expose())
    {
        return Err(ErrorCode::PasswordsMismatch.into());
    }
    let token_hash = state.codes.hash(RESET, body.token.as_deref().unwrap_or(""));
    let reset = state
        .db
        .reset(&token_hash)
        .await?
        .filter(|r| r.verified)
        .ok_or(ErrorCode::VerificationFailed)?;
    if reset.expires_at <= state.now() {
        return Err(ErrorCode::CodeExpired.into());
    }
    let hash = state.hasher.hash(password.expose()).await?;
    // Bumps the token version (every session ends) and deletes the reset (single use).
    state.db.set_password(&reset.user_id, &hash, state.now()).await?;
    revoke_sessions(&state, &reset.user_id, "password_reset");
    Ok(HttpResponse::Ok().json(answers::Done::new()))
}

/// Ends every open tab of the user (their tokens no longer work).
fn revoke_sessions(state: &AppState, user_id: &str, reason: &str) {
    state.realtime.publish(
        user_id,
        &ServerFrame::SessionRevoked {
            reason: reason.to_owned(),
        },
    );
}

async fn get_profile(user: AuthUser) -> Result<HttpResponse> {
    Ok(HttpResponse::Ok().json(crate::views::user(&user.user)))
}

#[derive(Deserialize)]
struct ProfileBody {
    name: Option<String>,
}

async fn update_profile(
    state: Data,
    user: AuthUser,
    body: JsonAfterAuth<ProfileBody>,
) -> Result<HttpResponse> {
    let body = http::body(body)?;
    let name = Name::parse(body.name.as_deref())?;
    state
        .db
        .update_user_name(user.id(), name.as_str(), state.now())
        .await?;
    let updated = state
        .db
        .user_by_id(user.id())
        .await?
        .ok_or(ErrorCode::Unauthorized)?;
    crate::announce::profile(&state, &updated);
    Ok(HttpResponse::Ok().json(crate::views::user(&updated)))
}

async fn delete_profile(state: Data, user: AuthUser) -> Result<HttpResponse> {
    crate::subscriptions::end_for_deleted_account(&state, user.id()).await?;
    state.db.delete_user(user.id()).await?;
    // The account's attachments go from the store now rather than at the next sweep.
    state.files.sweep_soon();
    revoke_sessions(&state, user.id(), "account_deleted");
    remove_avatar_file(&state, user.user.profile_image.as_deref()).await;
    tracing::info!(user = %user.id(), "account deleted");
    Ok(HttpResponse::Ok().json(answers::Done::new()))
}

const AVATAR_URL_PREFIX: &str = "/uploads/avatars/";

async fn remove_avatar_file(state: &AppState, url: Option<&str>) {
    let Some(file) = url.and_then(|u| u.strip_prefix(AVATAR_URL_PREFIX)) else {
        return;
    };
    // Names are ours (`<random>.jpg`), but never follow a path out of the folder.
    if file.contains(['/', '\\']) || file.starts_with('.') {
        return;
    }
    let path = state.settings.uploads_dir().join("avatars").join(file);
    if let Err(e) = tokio::fs::remove_file(&path).await {
        tracing::warn!(error = %e, path = %path.display(), "could not remove an old profile image");
    }
}

async fn upload_profile_image(state: Data, user: AuthUser, payload: Multipart) -> Result<HttpResponse> {
    let uploads = &state.settings.uploads;
    let max = uploads.avatar_max_mb * 1024 * 1024;
    let (_, bytes) =
        http::read_file_part(payload, max, ErrorCode::ImageTooLarge, ErrorCode::ImageRequired).await?;
    let px = uploads.avatar_px;
    let jpeg = state.images.run(move |d| d.avatar(&bytes, px)).await?;
    let dir = state.settings.uploads_dir().join("avatars");
    tokio::fs::create_dir_all(&dir)
        .await
        .map_err(anyhow::Error::from)?;
    // A new name each time, so browsers and caches never show the old picture.
    let file = format!("{}.jpg", &new_token()[..22]);
    tokio::fs::write(dir.join(&file), jpeg)
        .await
        .map_err(anyhow::Error::from)?;
    let url = format!("{AVATAR_URL_PREFIX}{file}");
    state
        .db
        .set_profile_image(user.id(), Some(&url), state.now())
        .await?;
    remove_avatar_file(&state, user.user.profile_image.as_deref()).await;
    // The change is saved; telling the other tabs is best effort.
    if let Ok(Some(updated)) = state.db.user_by_id(user.id()).await {
        crate::announce::profile(&state, &updated);
    }
    Ok(HttpResponse::Ok().json(ProfileImage {
        success: None,
        profile_image: Some(url),
    }))
}

async fn delete_profile_image(state: Data, user: AuthUser) -> Result<HttpResponse> {
    state.db.set_profile_image(user.id(), None, state.now()).await?;
    remove_avatar_file(&state, user.user.profile_image.as_deref()).await;
    // The change is saved; telling the other tabs is best effort.
    if let Ok(Some(updated)) = state.db.user_by_id(user.id()).await {
        crate::announce::profile(&state, &updated);
    }
    Ok(HttpResponse::Ok().json(ProfileImage {
        success: Some(true),
        profile_image: None,
    }))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PasswordBody {
    current_password: Option<String>,
    new_password: Option<String>,
    confirm_password: Option<String>,
}

/// Changes the password and revokes every earlier token; the caller gets a fresh token
/// with the lifetime its old one had, so this tab stays signed in.
async fn change_password(
    state: Data,
    req: HttpRequest,
    user: AuthUser,
    body: JsonAfterAuth<PasswordBody>,
) -> Result<HttpResponse> {
    let body = http::body(body)?;
    let current = body.current_password.as_deref().unwrap_or("");
    if current.is_empty() {
        return Err(ErrorCode::CurrentPasswordRequired.into());
    }
    let new = Password::parse(body.new_password.as_deref(), ErrorCode::NewPasswordRequired)?;
    if body
        .confirm_password
        .as_deref()
        .is_some_and(|c| c != new.expose())
    {
        return Err(ErrorCode::PasswordsMismatch.into());
    }
    let attempt = state.limits.attempt(&req, &user.user.email).await?;
    if !state
        .hasher
        .verify(current, Some(&user.user.password_hash))
        .await?
    {
        return Err(ErrorCode::WrongPassword.into());
    }
    state.limits.succeeded(attempt).await;
    let hash = state.hasher.hash(new.expose()).await?;
    let now = state.now();
    let version = state.db.set_password(user.id(), &hash, now).await?;
    revoke_sessions(&state, user.id(), "password_changed");
    let days = crate::auth::request_token(&req)
        .and_then(|t| state.tokens.verify(&t, now))
        .map_or(state.settings.auth.session_days, |c| {
            ((c.exp - c.iat) / 86_400).max(1)
        });
    let token = state.tokens.issue(user.id(), version, now, days)?;
    let expires_at = crate::quota::iso(now + days * DAY_MS);
    Ok(HttpResponse::Ok()
        .cookie(token_cookie(&state, &token, days))
        .json(NewToken {
            success: Some(true),
            token,
            expires_at: Some(expires_at),
        }))
}
