//! The profile: name, image and password, and deleting the account's own row.

use serde::Deserialize;

use crate::db::users::UserRow;
use crate::domain::{Name, Password};
use crate::error::{ErrorCode, Result};

use super::codes::new_token;
use super::{Accounts, Session};

#[derive(Deserialize)]
pub struct ProfileChange {
    name: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PasswordChange {
    current_password: Option<String>,
    new_password: Option<String>,
    confirm_password: Option<String>,
}

/// Where profile images are served from (`uploads/avatars/`).
pub const AVATAR_URL_PREFIX: &str = "/uploads/avatars/";

impl Accounts {
    /// Renames the user; the updated row.
    pub async fn update_profile(&self, user_id: &str, change: &ProfileChange) -> Result<UserRow> {
        let name = Name::parse(change.name.as_deref())?;
        self.db
            .update_user_name(user_id, name.as_str(), self.now())
            .await?;
        let updated = self.db.user_by_id(user_id).await?;
        Ok(updated.ok_or(ErrorCode::Unauthorized)?)
    }

    /// Deletes the account's row (what hangs off it goes with it; invoices are kept,
    /// detached), ends its tabs and removes its image. A paid plan's renewal must be ended
    /// first, by billing.
    pub async fn delete(&self, user: &UserRow) -> Result<()> {
        self.db.delete_user(&user.id, self.now()).await?;
        self.revoke_sessions(&user.id, "account_deleted");
        self.remove_avatar_file(user.profile_image.as_deref()).await;
        tracing::info!(user = %user.id, "account deleted");
        Ok(())
    }

    async fn remove_avatar_file(&self, url: Option<&str>) {
        let Some(file) = url.and_then(|u| u.strip_prefix(AVATAR_URL_PREFIX)) else {
            return;
        };
        // Names are ours (`<random>.jpg`), but never follow a path out of the folder.
        if file.contains(['/', '\\']) || file.starts_with('.') {
            return;
        }
        let path = self.settings.uploads_dir().join("avatars").join(file);
        if let Err(e) = tokio::fs::remove_file(&path).await {
            tracing::warn!(error = %e, path = %path.display(), "could not remove an old profile image");
        }
    }

    /// The largest profile image taken (`uploads.avatar_max_mb`); the upload is read no
    /// further (`image_too_large`).
    pub fn profile_image_max_bytes(&self) -> usize {
        self.settings.uploads.avatar_max_mb * 1024 * 1024
    }

    /// Makes `bytes` (an uploaded image) the user's square profile picture; its URL.
    pub async fn set_profile_image(&self, user: &UserRow, bytes: Vec<u8>) -> Result<String> {
        let px = self.settings.uploads.avatar_px;
        let jpeg = self.images.run(move |d| d.avatar(&bytes, px)).await?;
        let dir = self.settings.uploads_dir().join("avatars");
        tokio::fs::create_dir_all(&dir)
            .await
            .map_err(anyhow::Error::from)?;
        // A new name each time, so browsers and caches never show the old picture.
        let file = format!("{}.jpg", &new_token()[..22]);
        tokio::fs::write(dir.join(&file), jpeg)
            .await
            .map_err(anyhow::Error::from)?;
        let url = format!("{AVATAR_URL_PREFIX}{file}");
        self.db
            .set_profile_image(&user.id, Some(&url), self.now())
            .await?;
        self.remove_avatar_file(user.profile_image.as_deref()).await;
        Ok(url)
    }

    pub async fn remove_profile_image(&self, user: &UserRow) -> Result<()> {
        self.db.set_profile_image(&user.id, None, self.now()).await?;
        self.remove_avatar_file(user.profile_image.as_deref()).await;
        Ok(())
    }

    /// The user's row as it is now, if it still exists (for telling the other tabs).
    pub async fn current(&self, user_id: &str) -> Result<Option<UserRow>> {
        Ok(self.db.user_by_id(user_id).await?)
    }

    /// Changes the password and revokes every earlier token; the caller gets a fresh token
    /// with the lifetime its old one had (`old_token`), so this tab stays signed in.
    pub async fn change_password(
        &self,
        user: &UserRow,
        change: &PasswordChange,
        old_token: Option<&str>,
        client: Option<&str>,
    ) -> Result<Session> {
        let current = change.current_password.as_deref().unwrap_or("");
        if current.is_empty() {
            return Err(ErrorCode::CurrentPasswordRequired.into());
        }
        let new = Password::parse(change.new_password.as_deref(), ErrorCode::NewPasswordRequired)?;
        if change
            .confirm_password
            .as_deref()
            .is_some_and(|c| c != new.expose())
        {
            return Err(ErrorCode::PasswordsMismatch.into());
        }
        let attempt = self.limits.attempt_from(client, &user.email).await?;
        if !self.hasher.verify(current, Some(&user.password_hash)).await? {
            return Err(ErrorCode::WrongPassword.into());
        }
        self.limits.succeeded(attempt).await;
        let hash = self.hasher.hash(new.expose()).await?;
        let version = self.db.set_password(&user.id, &hash, self.now()).await?;
        self.revoke_sessions(&user.id, "password_changed");
        let days = old_token
            .and_then(|t| self.tokens.verify(t, self.now()))
            .map_or(self.settings.auth.session_days, |c| {
                ((c.exp - c.iat) / 86_400).max(1)
            });
        self.session(&user.id, version, days)
    }
}
