//! `GET /api/health`: whether this instance can reach what it depends on.

use std::time::Duration;

use actix_web::{web, HttpResponse};
use chat_contract::answers::Health;

use crate::error::ErrorCode;
use crate::i18n;
use crate::state::AppState;

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/health", web::get().to(health));
}

const CHECK_TIMEOUT: Duration = Duration::from_secs(2);

async fn health(state: web::Data<AppState>) -> HttpResponse {
    let database_ok = matches!(
        tokio::time::timeout(CHECK_TIMEOUT, state.db.ping()).await,
        Ok(Ok(()))
    );
    let redis = match &state.redis {
        None => "none",
        Some(conn) => {
            let mut conn = conn.clone();
            let cmd = redis::cmd("PING");
            let ping = cmd.query_async::<String>(&mut conn);
            match tokio::time::timeout(CHECK_TIMEOUT, ping).await {
                Ok(Ok(_)) => "ok",
                _ => "error",
            }
        }
    };
    let mut body = Health {
        status: "ok".into(),
        database: state.db.backend().into(),
        database_status: if database_ok { "ok" } else { "error" }.into(),
        redis: redis.into(),
        success: None,
        code: None,
        message: None,
    };
    if database_ok && redis != "error" {
        return HttpResponse::Ok().json(body);
    }
    let code = ErrorCode::ServiceUnavailable;
    body.status = "error".into();
    body.success = Some(false);
    body.code = Some(code.as_str().into());
    body.message = Some(code.template(i18n::current()).into());
    HttpResponse::ServiceUnavailable().json(body)
}
