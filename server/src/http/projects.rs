//! `/api/projects`: folders of conversations with their own instructions (plans with
//! `projectManagement`), and `PUT /api/conversations/{id}/project` to move a conversation
//! in or out. Another user's project is a 404. A user whose plan lost the feature still
//! reads, empties and deletes their projects, but creates, changes and fills none.

use actix_web::{web, HttpResponse};
use chat_contract::answers;
use chat_contract::frames::ServerFrame;
use chat_contract::states::FileKind;
use serde::Deserialize;

use crate::auth::AuthUser;
use crate::db::projects::ProjectRow;
use crate::error::{ApiError, ErrorCode, Result};
use crate::http::{self, JsonAfterAuth};
use crate::state::AppState;
use crate::views::attachment_view;
use crate::views::project_view;

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::scope("/projects")
            .route("", web::get().to(list))
            .route("", web::post().to(create))
            .route("/{id}", web::get().to(get_one))
            .route("/{id}", web::patch().to(update))
            .route("/{id}", web::delete().to(delete))
            .route("/{id}/files", web::post().to(add_file)),
    );
}

type Data = web::Data<AppState>;

/// The most projects one user keeps.
pub const MAX_PROJECTS: i64 = 100;
const MAX_NAME_CHARS: usize = 100;
const MAX_INSTRUCTIONS_CHARS: usize = 8000;
/// The most documents one project holds.
pub const MAX_PROJECT_FILES: usize = 20;

/// Refused with `premium_required` unless the user's plan has projects.
async fn require_projects(state: &AppState, user_id: &str) -> Result<()> {
    let subscription = state.db.subscription(user_id, state.now()).await?;
    let plan = state.catalogue.plan(subscription.plan_type);
    if plan.features.project_management {
        Ok(())
    } else {
        Err(ApiError::field(ErrorCode::PremiumRequired, "projectManagement"))
    }
}

#[derive(Deserialize)]
struct ProjectBody {
    name: Option<String>,
    instructions: Option<String>,
}

/// Checked instructions: trimmed, at most 8,000 characters; lines and tabs are kept,
/// other control and format characters refused.
fn checked_instructions(instructions: Option<&str>) -> Result<String> {
    let instructions = instructions.map(str::trim).unwrap_or("");
    for line in instructions.split(['\n', '\r', '\t']) {
        crate::domain::check_visible(line, "instructions")?;
    }
    if instructions.chars().count() > MAX_INSTRUCTIONS_CHARS {
        return Err(ApiError::with_max(
            ErrorCode::FieldTooLong,
            Some("instructions"),
            MAX_INSTRUCTIONS_CHARS as u64,
        ));
    }
    Ok(instructions.to_owned())
}

async fn list(state: Data, user: AuthUser) -> Result<HttpResponse> {
    let projects = state.db.projects(user.id()).await?;
    let data: Vec<_> = projects.iter().map(project_view).collect();
    Ok(HttpResponse::Ok().json(answers::Data::new(data)))
}

/// The project with its files.
async fn with_files(state: &AppState, project: &ProjectRow) -> Result<answers::ProjectWithFiles> {
    let files = state.db.files_of_project(&project.id).await?;
    Ok(answers::ProjectWithFiles {
        project: project_view(project),
        files: files.iter().map(attachment_view).collect(),
    })
}

async fn get_one(state: Data, user: AuthUser, id: web::Path<String>) -> Result<HttpResponse> {
    let project = state
        .db
        .project(user.id(), &id)
        .await?
        .ok_or(ErrorCode::NotFound)?;
    Ok(HttpResponse::Ok().json(answers::Data::new(with_files(&state, &project).await?)))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AddFileBody {
    file_id: Option<String>,
}

/// Makes an uploaded document (not sent in a message) one of the project's: every
/// conversation of the project retrieves from it.
async fn add_file(
    state: Data,
    user: AuthUser,
    id: web::Path<String>,
    body: JsonAfterAuth<AddFileBody>,
) -> Result<HttpResponse> {
    let body = http::body(body)?;
    let project = state
        .db
        .project(user.id(), &id)
        .await?
        .ok_or(ErrorCode::NotFound)?;
    require_projects(&state, user.id()).await?;
    let file_id = body
        .file_id
        .filter(|f| !f.is_empty())
        .ok_or_else(|| ApiError::field(ErrorCode::FieldRequired, "fileId"))?;
    let file = state
        .db
        .file(user.id(), &file_id)
        .await?
        .ok_or(ErrorCode::NotFound)?;
    if file.project_id.as_deref() == Some(project.id.as_str()) {
        // Added already: nothing to do.
        return Ok(HttpResponse::Ok().json(answers::Data::new(with_files(&state, &project).await?)));
    }
    if file.message_id.is_some() || file.project_id.is_some() {
        return Err(ErrorCode::FileInUse.into());
    }
    if file.kind != FileKind::Document {
        return Err(ApiError::field(ErrorCode::ValidationError, "fileId"));
    }
    if state.db.files_of_project(&project.id).await?.len() >= MAX_PROJECT_FILES {
        return Err(ApiError::with_max(
            ErrorCode::TooManyProjectFiles,
            None,
            MAX_PROJECT_FILES as u64,
        ));
    }
    if !state
        .db
        .add_project_file(user.id(), &project.id, &file.id)
        .await?
    {
        // Sent, deleted or added elsewhere meanwhile.
        return Err(ErrorCode::FileInUse.into());
    }
    let project = crate::announce::project(&state, user.id(), &project.id).await?;
    Ok(HttpResponse::Ok().json(answers::Data::new(with_files(&state, &project).await?)))
}

async fn create(state: Data, user: AuthUser, body: JsonAfterAuth<ProjectBody>) -> Result<HttpResponse> {
    let body = http::body(body)?;
    require_projects(&state, user.id()).await?;
    let name = http::one_line(body.name.as_deref(), "name", MAX_NAME_CHARS)?;
    let instructions = checked_instructions(body.instructions.as_deref())?;
    // Counted before the insert: two creates at once may pass 100 by one, which costs
    // nothing (the limit keeps lists short, not a quota anyone pays for).
    if state.db.count_projects(user.id()).await? >= MAX_PROJECTS {
        return Err(ApiError::with_max(
            ErrorCode::TooManyProjects,
            None,
            MAX_PROJECTS as u64,
        ));
    }
    let now = state.now();
    let row = ProjectRow {
        id: uuid::Uuid::now_v7().to_string(),
        user_id: user.id().to_owned(),
        name,
        instructions,
        created_at: now,
        updated_at: now,
        conversations: 0,
    };
    state.db.insert_project(&row).await?;
    let project = crate::announce::project(&state, user.id(), &row.id).await?;
    Ok(HttpResponse::Created().json(answers::Data::new(project_view(&project))))
}

async fn update(
    state: Data,
    user: AuthUser,
    id: web::Path<String>,
    body: JsonAfterAuth<ProjectBody>,
) -> Result<HttpResponse> {
    let body = http::body(body)?;
    let current = state
        .db
        .project(user.id(), &id)
        .await?
        .ok_or(ErrorCode::NotFound)?;
    require_projects(&state, user.id()).await?;
    // Each field is optional: what is left out stays.
    let name = match body.name.as_deref() {
        Some(name) => http::one_line(Some(name), "name", MAX_NAME_CHARS)?,
        None => current.name,
    };
    let instructions = match body.instructions.as_deref() {
        Some(instructions) => checked_instructions(Some(instructions))?,
        None => current.instructions,
    };
    if !state
        .db
        .update_project(user.id(), &id, &name, &instructions, state.now())
        .await?
    {
        return Err(ErrorCode::NotFound.into());
    }
    let project = crate::announce::project(&state, user.id(), &id).await?;
    Ok(HttpResponse::Ok().json(answers::Data::new(project_view(&project))))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct DeleteQuery {
    /// `true`: its conversations are deleted too; otherwise they leave it.
    #[serde(default)]
    delete_conversations: bool,
}

async fn delete(
    state: Data,
    user: AuthUser,
    id: web::Path<String>,
    query: web::Query<DeleteQuery>,
) -> Result<HttpResponse> {
    state
        .db
        .project(user.id(), &id)
        .await?
        .ok_or(ErrorCode::NotFound)?;
    let conversations = state.db.project_conversations(user.id(), &id).await?;
    if query.delete_conversations {
        for conversation in &conversations {
            crate::chat::delete_conversation(&state, user.id(), conversation).await?;
        }
    }
    if !state.db.delete_project(user.id(), &id).await? {
        return Err(ErrorCode::NotFound.into());
    }
    // Its files go with it, from the store now rather than at the next sweep.
    state.db.mark_project_files_gone(user.id(), &id).await?;
    state.files.sweep_soon();
    if !query.delete_conversations {
        // Each conversation that left the project is shown where it now is.
        for conversation in &conversations {
            crate::announce::conversation(&state, user.id(), conversation).await?;
        }
    }
    state.realtime.publish(
        user.id(),
        &ServerFrame::ProjectDeleted {
            project_id: id.to_string(),
        },
    );
    Ok(HttpResponse::Ok().json(answers::Done::new()))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MoveBody {
    /// The project to move into; `null` moves the conversation out of any.
    project_id: Option<String>,
}

/// `PUT /api/conversations/{id}/project` (routed with the conversations).
pub async fn move_conversation(
    state: Data,
    user: AuthUser,
    id: web::Path<String>,
    body: JsonAfterAuth<MoveBody>,
) -> Result<HttpResponse> {
    let body = http::body(body)?;
    let before = state
        .db
        .conversation(user.id(), &id)
        .await?
        .ok_or(ErrorCode::NotFound)?;
    let into = body.project_id.as_deref().filter(|p| !p.is_empty());
    if let Some(project) = into {
        require_projects(&state, user.id()).await?;
        state
            .db
            .project(user.id(), project)
            .await?
            .ok_or(ErrorCode::NotFound)?;
    }
    if !state.db.move_conversation(user.id(), &id, into).await? {
        // The project was deleted meanwhile.
        return Err(ErrorCode::NotFound.into());
    }
    let view = crate::announce::conversation(&state, user.id(), &id)
        .await?
        .ok_or(ErrorCode::NotFound)?;
    // Both projects' conversation counts changed.
    if before.project_id.as_deref() != into {
        for project in [before.project_id.as_deref(), into].into_iter().flatten() {
            // A project deleted meanwhile has nothing to announce.
            let _ = crate::announce::project(&state, user.id(), project).await;
        }
    }
    Ok(HttpResponse::Ok().json(answers::Data::new(view)))
}
