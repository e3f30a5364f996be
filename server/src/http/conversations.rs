//! `/api/conversations`: the user's conversations, newest first, with their messages.
//! Another user's conversation is a 404, as on the websocket.

use actix_web::{web, HttpResponse};
use chat_contract::answers;
use serde::Deserialize;

use crate::auth::AuthUser;
use crate::error::{ErrorCode, Result};
use crate::http::{self, JsonAfterAuth};
use crate::state::AppState;
use crate::views::{conversation_view, message_with_files};

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::scope("/conversations")
            .route("", web::get().to(list))
            .route("/{id}", web::get().to(get_one))
            .route("/{id}", web::patch().to(rename))
            .route("/{id}", web::delete().to(delete))
            .route("/{id}/project", web::put().to(super::projects::move_conversation)),
    );
}

type Data = web::Data<AppState>;

const DEFAULT_PAGE: i64 = 20;
const MAX_PAGE: i64 = 100;
const MAX_TITLE_CHARS: usize = 200;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Page {
    limit: Option<i64>,
    cursor: Option<String>,
    /// Only the conversations of this project.
    project_id: Option<String>,
}

/// A cursor is the last conversation's `updated_at` and id: `1763800000000_<id>`.
fn parse_cursor(cursor: &str) -> Result<(i64, &str)> {
    let (time, id) = cursor.split_once('_').ok_or(ErrorCode::ValidationError)?;
    Ok((time.parse().map_err(|_| ErrorCode::ValidationError)?, id))
}

async fn list(state: Data, user: AuthUser, page: web::Query<Page>) -> Result<HttpResponse> {
    let limit = page.limit.unwrap_or(DEFAULT_PAGE).clamp(1, MAX_PAGE);
    let after = page
        .cursor
        .as_deref()
        .filter(|c| !c.is_empty())
        .map(parse_cursor)
        .transpose()?;
    let project = page.project_id.as_deref().filter(|p| !p.is_empty());
    let mut rows = state
        .db
        .conversations(user.id(), project, after, limit + 1)
        .await?;
    let next_cursor = if rows.len() as i64 > limit {
        rows.truncate(limit as usize);
        rows.last().map(|c| format!("{}_{}", c.updated_at, c.id))
    } else {
        None
    };
    let data: Vec<_> = rows.iter().map(conversation_view).collect();
    Ok(HttpResponse::Ok().json(answers::Page {
        success: true,
        data,
        next_cursor,
    }))
}

async fn get_one(state: Data, user: AuthUser, id: web::Path<String>) -> Result<HttpResponse> {
    let conversation = state
        .db
        .conversation(user.id(), &id)
        .await?
        .ok_or(ErrorCode::NotFound)?;
    let (messages, files) = futures_util::join!(
        state.db.messages(&conversation.id),
        state.db.files_of_conversation(&conversation.id),
    );
    let files = files?;
    let messages: Vec<_> = messages?.iter().map(|m| message_with_files(m, &files)).collect();
    Ok(
        HttpResponse::Ok().json(answers::Data::new(answers::ConversationWithMessages {
            conversation: conversation_view(&conversation),
            messages,
        })),
    )
}

#[derive(Deserialize)]
struct RenameBody {
    title: Option<String>,
}

async fn rename(
    state: Data,
    user: AuthUser,
    id: web::Path<String>,
    body: JsonAfterAuth<RenameBody>,
) -> Result<HttpResponse> {
    let body = http::body(body)?;
    let title = http::one_line(body.title.as_deref(), "title", MAX_TITLE_CHARS)?;
    if !state
        .db
        .rename_conversation(user.id(), &id, &title, state.now())
        .await?
    {
        return Err(ErrorCode::NotFound.into());
    }
    let view = crate::announce::conversation(&state, user.id(), &id)
        .await?
        .ok_or(ErrorCode::NotFound)?;
    Ok(HttpResponse::Ok().json(answers::Data::new(view)))
}

async fn delete(state: Data, user: AuthUser, id: web::Path<String>) -> Result<HttpResponse> {
    if !crate::chat::delete_conversation(&state, user.id(), &id).await? {
        return Err(ErrorCode::NotFound.into());
    }
    Ok(HttpResponse::Ok().json(answers::Done::new()))
}
