//! The user's settings kept on the server (SPEC §3, §5): the language, and what the
//! assistant is told about the user (AI personalisation). Theme, font size and
//! notifications stay in the browser, as the spec says.

use chat_contract::limits::{MAX_AI_USER_INFO_CHARS, MAX_AI_USER_NAME_CHARS};
use serde::Deserialize;

use crate::db::users::{AiPersonalization, UserRow};
use crate::domain::bounded_text;
use crate::error::{ErrorCode, Result};
use crate::i18n::Lang;

use super::Accounts;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AiChange {
    enabled: Option<bool>,
    user_name: Option<String>,
    user_info: Option<String>,
}

/// `{language}`, `{aiPersonalization}` or both; what is left out keeps its value.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SettingsChange {
    language: Option<String>,
    ai_personalization: Option<AiChange>,
}

impl SettingsChange {
    pub fn sets_language(&self) -> bool {
        self.language.is_some()
    }
}

impl Accounts {
    /// Applies `change` to `user`'s settings, every field checked before anything is
    /// written; the updated row.
    pub async fn update_settings(&self, user: &UserRow, change: SettingsChange) -> Result<UserRow> {
        if change.language.is_none() && change.ai_personalization.is_none() {
            return Err(ErrorCode::ValidationError.into());
        }
        let language = change
            .language
            .as_deref()
            .map(|l| Lang::parse(l).ok_or(ErrorCode::InvalidLanguage))
            .transpose()?;
        let ai = change
            .ai_personalization
            .map(|ai| -> Result<(bool, String, String)> {
                Ok((
                    ai.enabled.unwrap_or(user.ai_enabled),
                    bounded_text(
                        ai.user_name.as_deref().unwrap_or(&user.ai_user_name),
                        "userName",
                        MAX_AI_USER_NAME_CHARS as usize,
                    )?,
                    bounded_text(
                        ai.user_info.as_deref().unwrap_or(&user.ai_user_info),
                        "userInfo",
                        MAX_AI_USER_INFO_CHARS as usize,
                    )?,
                ))
            })
            .transpose()?;
        let now = self.now();
        if let Some(lang) = language {
            self.db.set_language(&user.id, lang, now).await?;
        }
        if let Some((enabled, user_name, user_info)) = &ai {
            let ai = AiPersonalization {
                enabled: *enabled,
                user_name,
                user_info,
            };
            self.db.set_ai_personalization(&user.id, &ai, now).await?;
        }
        let updated = self.db.user_by_id(&user.id).await?;
        Ok(updated.ok_or(ErrorCode::Unauthorized)?)
    }
}
