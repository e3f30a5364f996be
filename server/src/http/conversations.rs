//! `/api/conversations`: the user's conversations, newest first, with their messages.
//! Another user's conversation is a 404, as on the websocket.

use actix_web::{web, HttpResponse};
use chat_contract::answers;
use serde::Deserialize;

use crate::chat::ConversationEdit;
use crate::conversation_search;
use crate::error::{ApiError, ErrorCode, Result};
use crate::http::auth_user::AuthUser;
use crate::http::{self, JsonAfterAuth};
use crate::state::AppState;
use crate::views::{conversation_view, message_with_files};

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::scope("/conversations")
            .route("", web::get().to(list))
            .route("/search", web::get().to(search))
            .route("/{id}", web::get().to(get_one))
            .route("/{id}", web::patch().to(change))
            .route("/{id}", web::delete().to(delete))
            .route("/{id}/project", web::put().to(super::projects::move_conversation)),
    );
}

type Data = web::Data<AppState>;

const DEFAULT_PAGE: i64 = 20;
const MAX_PAGE: i64 = 100;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Page {
    limit: Option<i64>,
    cursor: Option<String>,
    /// Only the conversations of this project.
    project_id: Option<String>,
    /// Only the archived conversations (else only the others).
    #[serde(default)]
    archived: bool,
}

/// A cursor is the last conversation's pinned flag, `updated_at` and id:
/// `0_1763800000000_<id>`.
fn parse_cursor(cursor: &str) -> Result<(bool, i64, &str)> {
    let bad = || ApiError::field(ErrorCode::ValidationError, "cursor");
    let (pinned, rest) = cursor.split_once('_').ok_or_else(bad)?;
    let (time, id) = rest.split_once('_').ok_or_else(bad)?;
    let pinned = match pinned {
        "0" => false,
        "1" => true,
        _ => return Err(bad()),
    };
    Ok((pinned, time.parse().map_err(|_| bad())?, id))
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
        .conversations(user.id(), project, page.archived, after, limit + 1)
        .await?;
    let next_cursor = if rows.len() as i64 > limit {
        rows.truncate(limit as usize);
        rows.last()
            .map(|c| format!("{}_{}_{}", u8::from(c.pinned), c.updated_at, c.id))
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

/// Renames, pins or unpins, archives or unarchives (`chat::edit_conversation`).
async fn change(
    state: Data,
    user: AuthUser,
    id: web::Path<String>,
    body: JsonAfterAuth<ConversationEdit>,
) -> Result<HttpResponse> {
    let edit = http::body(body)?;
    let view = crate::chat::edit_conversation(&state.chat, user.id(), &id, edit).await?;
    Ok(HttpResponse::Ok().json(answers::Data::new(view)))
}

#[derive(Deserialize)]
struct SearchParams {
    q: Option<String>,
    limit: Option<i64>,
    cursor: Option<String>,
}

/// Full-text search over the user's titles and messages (every branch, archived ones
/// too), best first; the cursor is the number of hits already shown.
async fn search(state: Data, user: AuthUser, params: web::Query<SearchParams>) -> Result<HttpResponse> {
    let query = conversation_search::Query::parse(params.q.as_deref())?;
    let limit = params.limit.unwrap_or(DEFAULT_PAGE).clamp(1, MAX_PAGE);
    let offset = match params.cursor.as_deref().filter(|c| !c.is_empty()) {
        Some(c) => c
            .parse::<u32>()
            .map_err(|_| ApiError::field(ErrorCode::ValidationError, "cursor"))?,
        None => 0,
    };
    let (hits, more) = conversation_search::search(&state.db, user.id(), &query, limit, offset).await?;
    let next_cursor = more.then(|| (offset as usize + hits.len()).to_string());
    Ok(HttpResponse::Ok().json(answers::Page {
        success: true,
        data: hits,
        next_cursor,
    }))
}

async fn delete(state: Data, user: AuthUser, id: web::Path<String>) -> Result<HttpResponse> {
    if !crate::chat::delete_conversation(&state.chat, user.id(), &id).await? {
        return Err(ErrorCode::NotFound.into());
    }
    Ok(HttpResponse::Ok().json(answers::Done::new()))
}
