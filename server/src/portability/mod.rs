//! Data portability (GDPR Art. 20, issue 31): the account's export as a zip streamed to
//! the user ([`export`]), and conversations imported from our own export or ChatGPT's
//! ([`import`]). The zip's layout and `conversations.json` are documented in
//! docs/export-format.md; `format` holds the file's types.

pub mod export;
pub mod format;
pub mod import;

use chrono::DateTime;

use crate::db::conversations::ConversationRow;
use crate::db::files::FileRow;

/// The longest part of a name kept in a path of the zip.
const MAX_NAME_CHARS: usize = 60;

/// `text` as a part of a path that every unzip tool and file system takes: letters and
/// digits of any script, `-` for everything else (no separators, dots or spaces that a
/// tool could read as a path), cut to [`MAX_NAME_CHARS`]; `fallback` when nothing is left.
pub fn safe_name(text: &str, keep: &[char], fallback: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_alphanumeric() || keep.contains(&c) {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let out: String = out
        .trim_matches(['-', '.'])
        .chars()
        .take(MAX_NAME_CHARS)
        .collect();
    let out = out.trim_end_matches(['-', '.']);
    if out.is_empty() {
        fallback.to_owned()
    } else {
        out.to_owned()
    }
}

/// Where a file's bytes are in the export: `files/<id>-<name>`.
pub fn file_path(f: &FileRow) -> String {
    format!("files/{}-{}", f.id, safe_name(&f.name, &['.', '_'], "file"))
}

/// Where a conversation's Markdown is: `conversations/<date>-<title>-<id>.md`.
pub fn markdown_path(c: &ConversationRow) -> String {
    let title = safe_name(c.title.as_deref().unwrap_or(""), &[], "untitled");
    format!("conversations/{}-{title}-{}.md", date(c.created_at), c.id)
}

/// `YYYY-MM-DD` (UTC) of a time in milliseconds.
pub fn date(ms: i64) -> String {
    DateTime::from_timestamp_millis(ms)
        .unwrap_or_default()
        .format("%Y-%m-%d")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::safe_name;

    #[test]
    fn names_in_the_zip_keep_letters_of_any_script_and_nothing_that_makes_a_path() {
        assert_eq!(
            safe_name("Árvíztűrő tükörfúrógép", &[], "x"),
            "Árvíztűrő-tükörfúrógép"
        );
        assert_eq!(safe_name("../../etc/passwd", &['.'], "x"), "etc-passwd");
        assert_eq!(safe_name("a\\b:c*?", &[], "x"), "a-b-c");
        assert_eq!(safe_name("photo.png", &['.', '_'], "file"), "photo.png");
        assert_eq!(safe_name("  ", &[], "untitled"), "untitled");
        assert_eq!(safe_name(&"x".repeat(100), &[], "u").chars().count(), 60);
    }
}
