//! Projects: a user's folders of conversations, with the instructions their conversations
//! are given.

use super::{on_pool, on_writer, Db};

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct ProjectRow {
    pub id: String,
    pub user_id: String,
    pub name: String,
    pub instructions: String,
    pub created_at: i64,
    pub updated_at: i64,
    /// How many conversations it holds (when listed).
    #[sqlx(default)]
    pub conversations: i64,
}

const PROJECT_COLUMNS: &str = "id, user_id, name, instructions, created_at, updated_at";

impl Db {
    pub async fn insert_project(&self, p: &ProjectRow) -> sqlx::Result<()> {
        let sql = format!("INSERT INTO projects ({PROJECT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6)");
        let p = p.clone();
        on_writer!(self, conn => sqlx::query(&sql)
            .bind(&p.id)
            .bind(&p.user_id)
            .bind(&p.name)
            .bind(&p.instructions)
            .bind(p.created_at)
            .bind(p.updated_at)
            .execute(&mut *conn)
            .await
            .map(|r| r.rows_affected()))
        .map(drop)
    }

    /// The user's projects, most recently changed first, with their conversation counts.
    pub async fn projects(&self, user_id: &str) -> sqlx::Result<Vec<ProjectRow>> {
        let sql = "SELECT p.id, p.user_id, p.name, p.instructions, p.created_at, p.updated_at, \
                   (SELECT COUNT(*) FROM conversations c WHERE c.project_id = p.id) AS conversations \
                   FROM projects p WHERE p.user_id = $1 ORDER BY p.updated_at DESC, p.id DESC";
        on_pool!(self, pool => sqlx::query_as(sql).bind(user_id).fetch_all(pool).await)
    }

    /// The user's project; another user's is `None`, like a missing one.
    pub async fn project(&self, user_id: &str, id: &str) -> sqlx::Result<Option<ProjectRow>> {
        let sql = "SELECT p.id, p.user_id, p.name, p.instructions, p.created_at, p.updated_at, \
                   (SELECT COUNT(*) FROM conversations c WHERE c.project_id = p.id) AS conversations \
                   FROM projects p WHERE p.id = $1 AND p.user_id = $2";
        on_pool!(self, pool => sqlx::query_as(sql).bind(id).bind(user_id).fetch_optional(pool).await)
    }

    pub async fn count_projects(&self, user_id: &str) -> sqlx::Result<i64> {
        let sql = "SELECT COUNT(*) FROM projects WHERE user_id = $1";
        on_pool!(self, pool => sqlx::query_scalar(sql).bind(user_id).fetch_one(pool).await)
    }

    /// Changes the name and instructions of the user's project; `false` when it is not
    /// the user's.
    pub async fn update_project(
        &self,
        user_id: &str,
        id: &str,
        name: &str,
        instructions: &str,
        now: i64,
    ) -> sqlx::Result<bool> {
        let sql = "UPDATE projects SET name = $3, instructions = $4, updated_at = $5 WHERE id = $1 AND user_id = $2";
        let (id, user_id, name, instructions) = (
            id.to_owned(),
            user_id.to_owned(),
            name.to_owned(),
            instructions.to_owned(),
        );
        let done = on_writer!(self, conn => sqlx::query(sql)
            .bind(id)
            .bind(user_id)
            .bind(name)
            .bind(instructions)
            .bind(now)
            .execute(&mut *conn)
            .await
            .map(|r| r.rows_affected()))?;
        Ok(done == 1)
    }

    /// The ids of the conversations in the user's project.
    pub async fn project_conversations(&self, user_id: &str, id: &str) -> sqlx::Result<Vec<String>> {
        let sql = "SELECT id FROM conversations WHERE project_id = $1 AND user_id = $2";
        on_pool!(self, pool => sqlx::query_scalar(sql).bind(id).bind(user_id).fetch_all(pool).await)
    }

    /// Deletes the user's project; its conversations leave it (they are deleted first by
    /// the caller when asked). `false` when it is not the user's.
    pub async fn delete_project(&self, user_id: &str, id: &str) -> sqlx::Result<bool> {
        let (id, user_id) = (id.to_owned(), user_id.to_owned());
        let done = on_writer!(self, conn => {
            sqlx::query("UPDATE conversations SET project_id = NULL WHERE project_id = $1 AND user_id = $2")
                .bind(&id)
                .bind(&user_id)
                .execute(&mut *conn)
                .await?;
            sqlx::query("DELETE FROM projects WHERE id = $1 AND user_id = $2")
                .bind(&id)
                .bind(&user_id)
                .execute(&mut *conn)
                .await
                .map(|r| r.rows_affected())
        })?;
        Ok(done == 1)
    }
}
