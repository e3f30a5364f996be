//! `/api/projects` and `PUT /api/conversations/{id}/project`: reads the requests and
//! writes the answers; the rules are in `crate::projects`.

use actix_web::{web, HttpResponse};
use chat_contract::answers;
use chat_contract::frames::ServerFrame;
use serde::Deserialize;

use crate::db::projects::ProjectRow;
use crate::error::{ErrorCode, Result};
use crate::http::auth_user::AuthUser;
use crate::http::{self, JsonAfterAuth};
use crate::projects::ProjectChange;
use crate::state::AppState;
use crate::views::{attachment_view, project_view};

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

#[derive(Deserialize)]
struct ProjectBody {
    name: Option<String>,
    instructions: Option<String>,
}

impl ProjectBody {
    fn change(&self) -> ProjectChange<'_> {
        ProjectChange {
            name: self.name.as_deref(),
            instructions: self.instructions.as_deref(),
        }
    }
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
    let project = state.projects.own(user.id(), &id).await?;
    Ok(HttpResponse::Ok().json(answers::Data::new(with_files(&state, &project).await?)))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AddFileBody {
    file_id: Option<String>,
}

async fn add_file(
    state: Data,
    user: AuthUser,
    id: web::Path<String>,
    body: JsonAfterAuth<AddFileBody>,
) -> Result<HttpResponse> {
    let body = http::body(body)?;
    let mut project = state.projects.own(user.id(), &id).await?;
    if state
        .projects
        .add_file(user.id(), &project, body.file_id.as_deref())
        .await?
    {
        project = state.announce.project(user.id(), &project.id).await?;
    }
    Ok(HttpResponse::Ok().json(answers::Data::new(with_files(&state, &project).await?)))
}

async fn create(state: Data, user: AuthUser, body: JsonAfterAuth<ProjectBody>) -> Result<HttpResponse> {
    let body = http::body(body)?;
    let id = state.projects.create(user.id(), body.change()).await?;
    let project = state.announce.project(user.id(), &id).await?;
    Ok(HttpResponse::Created().json(answers::Data::new(project_view(&project))))
}

async fn update(
    state: Data,
    user: AuthUser,
    id: web::Path<String>,
    body: JsonAfterAuth<ProjectBody>,
) -> Result<HttpResponse> {
    let body = http::body(body)?;
    state.projects.update(user.id(), &id, body.change()).await?;
    let project = state.announce.project(user.id(), &id).await?;
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
    state.projects.own(user.id(), &id).await?;
    let conversations = state.db.project_conversations(user.id(), &id).await?;
    if query.delete_conversations {
        for conversation in &conversations {
            crate::chat::delete_conversation(&state.chat, user.id(), conversation).await?;
        }
    }
    state.projects.delete(user.id(), &id).await?;
    // Its files go from the store now rather than at the next sweep.
    state.files.store.sweep_soon();
    if !query.delete_conversations {
        // Each conversation that left the project is shown where it now is.
        for conversation in &conversations {
            state.announce.conversation(user.id(), conversation).await?;
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
    let into = body.project_id.as_deref().filter(|p| !p.is_empty());
    let before = state.projects.move_conversation(user.id(), &id, into).await?;
    let view = state
        .announce
        .conversation(user.id(), &id)
        .await?
        .ok_or(ErrorCode::NotFound)?;
    // Both projects' conversation counts changed.
    if before.as_deref() != into {
        for project in [before.as_deref(), into].into_iter().flatten() {
            // A project deleted meanwhile has nothing to announce.
            let _ = state.announce.project(user.id(), project).await;
        }
    }
    Ok(HttpResponse::Ok().json(answers::Data::new(view)))
}
