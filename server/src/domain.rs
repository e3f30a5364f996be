//! Input becomes these types at the handler edge; an invalid value cannot be built.
//! Each constructor fails with the error code of SPEC §5 for that field.

use unicode_properties::{GeneralCategory, UnicodeEmoji, UnicodeGeneralCategory};

use crate::error::{ApiError, ErrorCode, Result};

use chat_contract::limits;

pub const MIN_PASSWORD_CHARS: usize = limits::MIN_PASSWORD_CHARS as usize;
pub const MAX_PASSWORD_CHARS: usize = limits::MAX_PASSWORD_CHARS as usize;
pub const MAX_NAME_CHARS: usize = limits::MAX_NAME_CHARS as usize;
const MAX_EMAIL_CHARS: usize = limits::MAX_EMAIL_CHARS as usize;

/// A trimmed, lower-cased, plausible e-mail address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Email(String);

impl Email {
    pub fn parse(raw: Option<&str>) -> Result<Email> {
        let value = raw.map(str::trim).unwrap_or("");
        if value.is_empty() {
            return Err(ErrorCode::EmailRequired.into());
        }
        let value = value.to_lowercase();
        let valid = value.chars().count() <= MAX_EMAIL_CHARS
            && !value.chars().any(char::is_whitespace)
            && !has_hidden_chars(&value)
            && match value.split_once('@') {
                Some((local, domain)) => {
                    !local.is_empty()
                        && !domain.contains('@')
                        && domain.contains('.')
                        && !domain.starts_with('.')
                        && !domain.ends_with('.')
                        && !domain.contains("..")
                }
                None => false,
            };
        if valid {
            Ok(Email(value))
        } else {
            Err(ErrorCode::EmailInvalid.into())
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A password of acceptable length (not trimmed: spaces are legitimate characters).
#[derive(Clone)]
pub struct Password(String);

impl Password {
    /// `missing` is the code for an absent value (e.g. `new_password_required`).
    pub fn parse(raw: Option<&str>, missing: ErrorCode) -> Result<Password> {
        let value = raw.unwrap_or("");
        let chars = value.chars().count();
        if chars == 0 {
            Err(missing.into())
        } else if chars < MIN_PASSWORD_CHARS {
            Err(ErrorCode::PasswordTooShort.into())
        } else if chars > MAX_PASSWORD_CHARS {
            Err(ErrorCode::PasswordTooLong.into())
        } else {
            Ok(Password(value.to_owned()))
        }
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Password {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Password(REDACTED)")
    }
}

const ZWJ: char = '\u{200d}';
const ZWNJ: char = '\u{200c}';
const EMOJI_PRESENTATION: char = '\u{fe0f}';

/// Whether `c`, between `before` and `after`, is a character nobody sees that changes
/// how the text shows: a control character, or a format character (Unicode category Cf:
/// bidi overrides and isolates, zero-width spaces, soft hyphens…), with which
/// `\u{202e}gnp.exe` shows as `exe.png`. Kept are the format characters that writing
/// needs where it needs them: a zero-width joiner inside an emoji (👩‍💻), a non-joiner
/// between letters (Persian, Indic scripts), and the tags of a subdivision flag (🏴 + tags).
fn is_hidden(before: Option<char>, c: char, after: Option<char>) -> bool {
    if c.is_control() {
        return true;
    }
    if c.general_category() != GeneralCategory::Format {
        return false;
    }
    let emoji = |c: Option<char>| c.is_some_and(|c| c.is_emoji_char() || c == EMOJI_PRESENTATION);
    let letter = |c: Option<char>| c.is_some_and(char::is_alphabetic);
    let tag = |c: char| ('\u{e0020}'..='\u{e007f}').contains(&c);
    match c {
        ZWJ => !(emoji(before) && emoji(after)),
        ZWNJ => !(letter(before) && letter(after)),
        c if tag(c) => !before.is_some_and(|b| tag(b) || b.is_emoji_char()),
        _ => true,
    }
}

/// Whether `text` holds a character [`is_hidden`] refuses.
pub fn has_hidden_chars(text: &str) -> bool {
    let chars: Vec<char> = text.chars().collect();
    (0..chars.len()).any(|i| {
        let before = i.checked_sub(1).map(|b| chars[b]);
        is_hidden(before, chars[i], chars.get(i + 1).copied())
    })
}

/// Refuses a field's `value` holding a control character (`validation_error`) or another
/// character nobody sees ([`is_hidden`]: `invisible_characters`, which says what to remove).
pub fn check_visible(value: &str, field: &'static str) -> Result<()> {
    if value.chars().any(char::is_control) {
        return Err(ApiError::field(ErrorCode::ValidationError, field));
    }
    if has_hidden_chars(value) {
        return Err(ApiError::field(ErrorCode::InvisibleCharacters, field));
    }
    Ok(())
}

/// Trimmed free text of at most `max` characters: line breaks and tabs are the only
/// control characters allowed, and no invisible ones ([`check_visible`]).
pub fn bounded_text(value: &str, field: &'static str, max: usize) -> Result<String> {
    let value = value.trim();
    if let Some(refused) = value
        .split(['\n', '\r', '\t'])
        .find_map(|line| check_visible(line, field).err())
    {
        Err(refused)
    } else if value.chars().count() > max {
        Err(ApiError::with_max(
            ErrorCode::FieldTooLong,
            Some(field),
            max as u64,
        ))
    } else {
        Ok(value.to_owned())
    }
}

/// `text` without the characters [`is_hidden`] refuses: for names nobody typed here
/// (an uploaded file's, a generated title).
pub fn without_hidden_chars(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    (0..chars.len())
        .filter(|&i| {
            let before = i.checked_sub(1).map(|b| chars[b]);
            !is_hidden(before, chars[i], chars.get(i + 1).copied())
        })
        .map(|i| chars[i])
        .collect()
}

/// A display name: trimmed, non-empty, at most [`MAX_NAME_CHARS`] characters.
#[derive(Debug, Clone)]
pub struct Name(String);

impl Name {
    pub fn parse(raw: Option<&str>) -> Result<Name> {
        let value = raw.map(str::trim).unwrap_or("");
        if value.is_empty() {
            Err(ErrorCode::NameRequired.into())
        } else if let Err(refused) = check_visible(value, "name") {
            Err(refused)
        } else if value.chars().count() > MAX_NAME_CHARS {
            Err(ApiError::with_max(
                ErrorCode::FieldTooLong,
                Some("name"),
                MAX_NAME_CHARS as u64,
            ))
        } else {
            Ok(Name(value.to_owned()))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A verification code of [`limits::CODE_DIGITS`] digits.
#[derive(Debug, Clone)]
pub struct Code(String);

impl Code {
    pub fn parse(raw: Option<&str>) -> Result<Code> {
        let value = raw.map(str::trim).unwrap_or("");
        if value.is_empty() {
            Err(ErrorCode::CodeRequired.into())
        } else if value.len() == limits::CODE_DIGITS as usize && value.chars().all(|c| c.is_ascii_digit()) {
            Ok(Code(value.to_owned()))
        } else {
            Err(ErrorCode::CodeFormat.into())
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The longest reason an admin may give for an action (kept in the audit log).
pub const MAX_REASON_CHARS: usize = 500;

/// The reason an admin gives for a change (plan, suspension, usage reset, refund): the
/// same rule everywhere, a [`one_line`] of at most [`MAX_REASON_CHARS`].
pub fn admin_reason(value: Option<&str>) -> Result<String, ApiError> {
    one_line(value, "reason", MAX_REASON_CHARS)
}

/// A one-line text field: trimmed, required (`field_required`), without control or
/// invisible characters ([`check_visible`]), at most `max` characters
/// (`field_too_long`).
pub fn one_line(value: Option<&str>, field: &'static str, max: usize) -> Result<String, ApiError> {
    let value = value.map(str::trim).unwrap_or("");
    if value.is_empty() {
        return Err(ApiError::field(ErrorCode::FieldRequired, field));
    }
    check_visible(value, field)?;
    if value.chars().count() > max {
        return Err(ApiError::with_max(
            ErrorCode::FieldTooLong,
            Some(field),
            max as u64,
        ));
    }
    Ok(value.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code_of<T: std::fmt::Debug>(r: Result<T>) -> &'static str {
        r.unwrap_err().code().as_str()
    }

    #[test]
    fn emails_are_normalised_and_checked() {
        assert_eq!(
            Email::parse(Some("  Ann@Example.COM ")).unwrap().as_str(),
            "ann@example.com"
        );
        assert_eq!(code_of(Email::parse(None)), "email_required");
        assert_eq!(code_of(Email::parse(Some("   "))), "email_required");
        for bad in [
            "ann",
            "ann@",
            "@example.com",
            "ann@example",
            "a b@example.com",
            "a@b@c.com",
            "a@.com",
            "a@x..com",
        ] {
            assert_eq!(code_of(Email::parse(Some(bad))), "email_invalid", "{bad}");
        }
    }

    #[test]
    fn passwords_need_six_characters() {
        assert_eq!(
            code_of(Password::parse(Some(""), ErrorCode::PasswordRequired)),
            "password_required"
        );
        assert_eq!(
            code_of(Password::parse(None, ErrorCode::NewPasswordRequired)),
            "new_password_required"
        );
        assert_eq!(
            code_of(Password::parse(Some("12345"), ErrorCode::PasswordRequired)),
            "password_too_short"
        );
        assert!(Password::parse(Some("éáűőüö"), ErrorCode::PasswordRequired).is_ok());
        assert_eq!(
            code_of(Password::parse(
                Some(&"x".repeat(129)),
                ErrorCode::PasswordRequired
            )),
            "password_too_long"
        );
        assert_eq!(
            format!(
                "{:?}",
                Password::parse(Some("secret1"), ErrorCode::PasswordRequired).unwrap()
            ),
            "Password(REDACTED)"
        );
    }

    #[test]
    fn names_and_codes() {
        assert_eq!(Name::parse(Some("  Ann ")).unwrap().as_str(), "Ann");
        assert_eq!(code_of(Name::parse(Some(" "))), "name_required");
        assert_eq!(code_of(Name::parse(Some(&"n".repeat(101)))), "field_too_long");
        assert_eq!(code_of(Name::parse(Some("Ann\u{7}"))), "validation_error");
        assert_eq!(Code::parse(Some("012345")).unwrap().as_str(), "012345");
        assert_eq!(code_of(Code::parse(None)), "code_required");
        for bad in ["12345", "1234567", "12a456"] {
            assert_eq!(code_of(Code::parse(Some(bad))), "code_format", "{bad}");
        }
    }

    #[test]
    fn bidi_controls_and_invisible_characters_are_hidden_but_emoji_and_scripts_keep_theirs() {
        for spoof in [
            "\u{202e}gnp.exe",
            "a\u{2066}b",
            "zero\u{200b}width",
            "soft\u{ad}hyphen",
            "\u{feff}bom",
            "line\nbreak",
            "lone\u{200d}joiner",
            "\u{e0067}tag",
        ] {
            assert!(has_hidden_chars(spoof), "{spoof:?}");
        }
        for fine in [
            "Ann Smith",
            "👩\u{200d}💻 coder",
            "❤\u{fe0f}\u{200d}🔥",
            "\u{645}\u{6cc}\u{200c}\u{62e}\u{648}\u{627}\u{647}\u{645}",
            "🏴\u{e0067}\u{e0062}\u{e0073}\u{e0063}\u{e0074}\u{e007f}",
            "Árvíztűrő tükörfúrógép",
        ] {
            assert!(!has_hidden_chars(fine), "{fine:?}");
        }
        assert_eq!(without_hidden_chars("\u{202e}gnp.exe"), "gnp.exe");
        assert_eq!(without_hidden_chars("👩\u{200d}💻\u{200b}"), "👩\u{200d}💻");
    }
}
