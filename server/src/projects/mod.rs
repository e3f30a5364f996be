//! Projects: folders of conversations with their own instructions and documents (plans
//! with `projectManagement`). Another user's project does not exist for the caller (404).
//! A user whose plan lost the feature still reads, empties and deletes their projects, but
//! creates, changes and fills none. `http/projects.rs` reads the requests; the rules are here.

use std::sync::Arc;

use chat_contract::limits::{MAX_PROJECTS, MAX_PROJECT_FILES};
use chat_contract::states::FileKind;

use crate::clock::SharedClock;
use crate::db::projects::ProjectRow;
use crate::db::Db;
use crate::domain::one_line;
use crate::error::{ApiError, ErrorCode, Result};
use crate::plans::Catalogue;

const MAX_NAME_CHARS: usize = chat_contract::limits::MAX_PROJECT_NAME_CHARS as usize;
const MAX_INSTRUCTIONS_CHARS: usize = chat_contract::limits::MAX_PROJECT_INSTRUCTIONS_CHARS as usize;

/// The projects service.
#[derive(Clone)]
pub struct Projects {
    pub db: Db,
    pub clock: SharedClock,
    pub catalogue: Arc<Catalogue>,
}

/// What a project's name and instructions become (each left out stays as it is).
pub struct ProjectChange<'a> {
    pub name: Option<&'a str>,
    pub instructions: Option<&'a str>,
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

impl Projects {
    /// Refused with `premium_required` unless the user's plan has projects.
    pub async fn require_feature(&self, user_id: &str) -> Result<()> {
        let subscription = self.db.subscription(user_id, self.clock.now_ms()).await?;
        let plan = self.catalogue.plan(subscription.plan_type);
        crate::entitlements::projects(plan)
    }

    /// The user's project, or `not_found`.
    pub async fn own(&self, user_id: &str, id: &str) -> Result<ProjectRow> {
        Ok(self.db.project(user_id, id).await?.ok_or(ErrorCode::NotFound)?)
    }

    /// A new project; its id. At most [`MAX_PROJECTS`] a user.
    pub async fn create(&self, user_id: &str, change: ProjectChange<'_>) -> Result<String> {
        self.require_feature(user_id).await?;
        let name = one_line(change.name, "name", MAX_NAME_CHARS)?;
        let instructions = checked_instructions(change.instructions)?;
        // Counted before the insert: two creates at once may pass 100 by one, which costs
        // nothing (the limit keeps lists short, not a quota anyone pays for).
        if self.db.count_projects(user_id).await? >= MAX_PROJECTS as i64 {
            return Err(ApiError::with_max(ErrorCode::TooManyProjects, None, MAX_PROJECTS));
        }
        let now = self.clock.now_ms();
        let row = ProjectRow {
            id: uuid::Uuid::now_v7().to_string(),
            user_id: user_id.to_owned(),
            name,
            instructions,
            created_at: now,
            updated_at: now,
            conversations: 0,
        };
        self.db.insert_project(&row).await?;
        Ok(row.id)
    }

    pub async fn update(&self, user_id: &str, id: &str, change: ProjectChange<'_>) -> Result<()> {
        let current = self.own(user_id, id).await?;
        self.require_feature(user_id).await?;
        let name = match change.name {
            Some(name) => one_line(Some(name), "name", MAX_NAME_CHARS)?,
            None => current.name,
        };
        let instructions = match change.instructions {
            Some(instructions) => checked_instructions(Some(instructions))?,
            None => current.instructions,
        };
        let now = self.clock.now_ms();
        if !self
            .db
            .update_project(user_id, id, &name, &instructions, now)
            .await?
        {
            return Err(ErrorCode::NotFound.into());
        }
        Ok(())
    }

    /// Makes an uploaded document (not sent in a message) one of the project's: every
    /// conversation of the project retrieves from it. `false` when it was added already.
    pub async fn add_file(&self, user_id: &str, project: &ProjectRow, file_id: Option<&str>) -> Result<bool> {
        self.require_feature(user_id).await?;
        let file_id = file_id
            .filter(|f| !f.is_empty())
            .ok_or_else(|| ApiError::field(ErrorCode::FieldRequired, "fileId"))?;
        let file = self.db.file(user_id, file_id).await?.ok_or(ErrorCode::NotFound)?;
        if file.project_id.as_deref() == Some(project.id.as_str()) {
            return Ok(false);
        }
        if file.message_id.is_some() || file.project_id.is_some() {
            return Err(ErrorCode::FileInUse.into());
        }
        if file.kind != FileKind::Document {
            return Err(ApiError::field(ErrorCode::ValidationError, "fileId"));
        }
        if self.db.files_of_project(&project.id).await?.len() as u64 >= MAX_PROJECT_FILES {
            return Err(ApiError::with_max(
                ErrorCode::TooManyProjectFiles,
                None,
                MAX_PROJECT_FILES,
            ));
        }
        if !self.db.add_project_file(user_id, &project.id, &file.id).await? {
            // Sent, deleted or added elsewhere meanwhile.
            return Err(ErrorCode::FileInUse.into());
        }
        Ok(true)
    }

    /// Deletes the project (its conversations must have been deleted or left first); its
    /// files are marked gone for the store's sweep.
    pub async fn delete(&self, user_id: &str, id: &str) -> Result<()> {
        if !self.db.delete_project(user_id, id).await? {
            return Err(ErrorCode::NotFound.into());
        }
        self.db.mark_project_files_gone(user_id, id).await?;
        Ok(())
    }

    /// Moves the user's conversation into `into` (`None`: out of any project); the project
    /// it was in before.
    pub async fn move_conversation(
        &self,
        user_id: &str,
        id: &str,
        into: Option<&str>,
    ) -> Result<Option<String>> {
        let before = self
            .db
            .conversation(user_id, id)
            .await?
            .ok_or(ErrorCode::NotFound)?;
        if let Some(project) = into {
            self.require_feature(user_id).await?;
            self.own(user_id, project).await?;
        }
        if !self.db.move_conversation(user_id, id, into).await? {
            // The project was deleted meanwhile.
            return Err(ErrorCode::NotFound.into());
        }
        Ok(before.project_id)
    }
}
