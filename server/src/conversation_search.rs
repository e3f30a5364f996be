//! Searching one's own conversations (`GET /api/conversations/search`): what a query is,
//! and the snippet shown for a hit. The indexes are in the database (`db::search`).
//!
//! A query is its words, each required, the last one a prefix (search as you type). Case
//! and accents do not count: the indexes fold them (`unicode61 remove_diacritics 2`,
//! `unaccent`), and the snippet's highlights fold them the same way.

use chat_contract::answers::{Highlight, SearchHit};
use unicode_normalization::char::is_combining_mark;
use unicode_normalization::UnicodeNormalization;

use crate::db::search::SearchRow;
use crate::db::Db;
use crate::error::{ApiError, ErrorCode, Result};
use crate::quota::iso;

/// The longest query, in characters.
pub const MAX_QUERY_CHARS: usize = chat_contract::limits::MAX_SEARCH_QUERY_CHARS as usize;
/// A snippet's length at most, in characters.
const SNIPPET_CHARS: usize = 200;
/// How much of the text before the first match the snippet shows.
const LEAD_CHARS: usize = 60;

#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    /// Folded words; the last is matched as a prefix.
    words: Vec<String>,
}

impl Query {
    /// `q` as typed: empty (or only punctuation) is `field_required`, over
    /// [`MAX_QUERY_CHARS`] `field_too_long`, both about `q`.
    pub fn parse(q: Option<&str>) -> Result<Query> {
        let q = crate::domain::one_line(q, "q", MAX_QUERY_CHARS)?;
        let words: Vec<String> = words(&q).map(|(_, w)| fold(w)).collect();
        if words.is_empty() {
            return Err(ApiError::field(ErrorCode::FieldRequired, "q"));
        }
        Ok(Query { words })
    }

    /// For FTS5: quoted words (implicitly all required), the last with `*`.
    pub fn fts5(&self) -> String {
        let mut out: Vec<String> = self.words.iter().map(|w| format!("\"{w}\"")).collect();
        if let Some(last) = out.last_mut() {
            last.push('*');
        }
        out.join(" ")
    }

    /// For Postgres's `to_tsquery`: `a & b:*`. The words are letters and digits only, so
    /// nothing in them is tsquery syntax.
    pub fn tsquery(&self) -> String {
        let mut out = self.words.join(" & ");
        out.push_str(":*");
        out
    }

    /// Whether a word of a text (folded) is one the query looks for.
    fn matches(&self, folded: &str) -> bool {
        let last = self.words.len() - 1;
        self.words
            .iter()
            .enumerate()
            .any(|(i, w)| folded == w || (i == last && folded.starts_with(w.as_str())))
    }
}

/// The words of a text and where each starts (a byte offset): runs of letters and
/// digits, as the indexes' tokenizers split them.
fn words(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut rest = text.char_indices().peekable();
    std::iter::from_fn(move || {
        while let Some(&(_, c)) = rest.peek() {
            if c.is_alphanumeric() {
                break;
            }
            rest.next();
        }
        let (start, _) = *rest.peek()?;
        let mut end = start;
        while let Some(&(i, c)) = rest.peek() {
            if !c.is_alphanumeric() {
                break;
            }
            end = i + c.len_utf8();
            rest.next();
        }
        Some((start, &text[start..end]))
    })
}

/// Lower case without accents: "ÁRVÍZTŰRŐ" → "arvizturo".
pub fn fold(word: &str) -> String {
    word.nfd()
        .filter(|c| !is_combining_mark(*c))
        .flat_map(char::to_lowercase)
        .collect()
}

/// Markdown's marks out, whitespace as single spaces: the text a reader sees.
fn plain(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len().min(64 * 1024));
    for line in markdown.lines() {
        let line = line.trim_start();
        if line.starts_with("```") {
            continue;
        }
        let line = line.trim_start_matches(['#', '>', ' ']);
        let line = line
            .strip_prefix("- ")
            .or_else(|| line.strip_prefix("* "))
            .unwrap_or(line);
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '*' | '`' | '|' => {}
                // A link's address: `[text](url)` shows as its text.
                ']' if chars.peek() == Some(&'(') => {
                    for c in chars.by_ref() {
                        if c == ')' {
                            break;
                        }
                    }
                }
                '[' | ']' => {}
                c if c.is_whitespace() => push_space(&mut out),
                c => out.push(c),
            }
        }
        push_space(&mut out);
    }
    out.trim_end().to_owned()
}

fn push_space(out: &mut String) {
    if !out.is_empty() && !out.ends_with(' ') {
        out.push(' ');
    }
}

/// At most [`SNIPPET_CHARS`] characters of `text` around its first match, with every
/// match in it. A text whose match is not in its plain form (a link's address) starts
/// at its beginning, without highlights.
pub fn snippet(text: &str, query: &Query) -> (String, Vec<Highlight>) {
    let text = plain(text);
    let found: Vec<(usize, usize)> = words(&text)
        .filter(|(_, w)| query.matches(&fold(w)))
        .map(|(start, w)| (start, start + w.len()))
        .collect();
    let first = found.first().map_or(0, |&(start, _)| start);
    // Start a little before the first match, at a word's beginning.
    let mut from = text[..first]
        .char_indices()
        .rev()
        .nth(LEAD_CHARS - 1)
        .map_or(0, |(i, _)| i);
    if from > 0 {
        from = text[from..first].find(' ').map_or(from, |s| from + s + 1);
    }
    let lead = if from > 0 { "…" } else { "" };
    let room = SNIPPET_CHARS - lead.chars().count();
    let rest = &text[from..];
    let (body, cut) = if rest.chars().count() <= room {
        (rest, false)
    } else {
        // Too long: end at the last word that fits beside the ellipsis.
        let end = rest.char_indices().nth(room - 1).map_or(rest.len(), |(i, _)| i);
        let end = rest[..end].rfind(' ').filter(|&s| s > 0).unwrap_or(end);
        (&rest[..end], true)
    };
    let snippet = format!("{lead}{body}{}", if cut { "…" } else { "" });
    let base = lead.len();
    let utf16 = |byte: usize| snippet[..byte].encode_utf16().count() as u32;
    let highlights = found
        .into_iter()
        .filter(|&(start, end)| start >= from && end <= from + body.len())
        .map(|(start, end)| Highlight {
            start: utf16(base + start - from),
            end: utf16(base + end - from),
        })
        .collect();
    (snippet, highlights)
}

/// A page of hits and whether there are more.
pub async fn search(
    db: &Db,
    user_id: &str,
    query: &Query,
    limit: i64,
    offset: u32,
) -> Result<(Vec<SearchHit>, bool)> {
    let mut rows = db
        .search(user_id, &query.fts5(), &query.tsquery(), limit + 1, offset.into())
        .await?;
    let more = rows.len() as i64 > limit;
    rows.truncate(limit as usize);
    Ok((rows.iter().map(|r| hit(r, query)).collect(), more))
}

fn hit(row: &SearchRow, query: &Query) -> SearchHit {
    let (snippet, highlights) = snippet(&row.text, query);
    SearchHit {
        conversation_id: row.conversation_id.clone(),
        title: row.title.clone(),
        message_id: row.message_id.clone(),
        snippet,
        highlights,
        archived: row.archived,
        updated_at: iso(row.updated_at),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(q: &str) -> Query {
        Query::parse(Some(q)).expect("a query")
    }

    fn marked(snippet: &str, highlights: &[Highlight]) -> Vec<String> {
        let units: Vec<u16> = snippet.encode_utf16().collect();
        highlights
            .iter()
            .map(|h| String::from_utf16(&units[h.start as usize..h.end as usize]).unwrap())
            .collect()
    }

    #[test]
    fn words_are_folded_and_the_last_is_a_prefix() {
        let q = query("  ÁRVÍZTŰRŐ, tükör ");
        assert_eq!(q.fts5(), "\"arvizturo\" \"tukor\"*");
        assert_eq!(q.tsquery(), "arvizturo & tukor:*");
        assert!(q.matches("tukorfurogep"));
        assert!(!q.matches("arvizturok"), "only the last word is a prefix");
    }

    #[test]
    fn an_empty_or_long_query_names_q() {
        for q in [None, Some(""), Some("   "), Some("?! -")] {
            let e = Query::parse(q).unwrap_err();
            assert_eq!(e.code(), ErrorCode::FieldRequired, "{q:?}");
        }
        let e = Query::parse(Some(&"a".repeat(MAX_QUERY_CHARS + 1))).unwrap_err();
        assert_eq!(e.code(), ErrorCode::FieldTooLong);
        assert!(Query::parse(Some(&"a".repeat(MAX_QUERY_CHARS))).is_ok());
    }

    #[test]
    fn a_snippet_shows_every_match_around_the_first() {
        let text = format!(
            "{} Az **árvíztűrő** tükörfúrógép [itt](https://arvizturo.example) van. {}",
            "előtte ".repeat(30),
            "utána ".repeat(60)
        );
        let (snippet, highlights) = snippet(&text, &query("arvizturo tukor"));
        assert!(snippet.chars().count() <= SNIPPET_CHARS, "{snippet}");
        assert!(snippet.starts_with('…') && snippet.ends_with('…'), "{snippet}");
        assert!(!snippet.contains("**") && !snippet.contains("https"), "{snippet}");
        assert_eq!(marked(&snippet, &highlights), ["árvíztűrő", "tükörfúrógép"]);
    }

    #[test]
    fn highlights_count_utf16_units() {
        let (snippet, highlights) = snippet("😀 naïve text", &query("NAIVE"));
        assert_eq!(snippet, "😀 naïve text");
        assert_eq!(highlights.len(), 1);
        assert_eq!((highlights[0].start, highlights[0].end), (3, 8));
        assert_eq!(marked(&snippet, &highlights), ["naïve"]);
    }

    #[test]
    fn a_short_text_is_whole() {
        let (snippet, highlights) = snippet("Budapest trip", &query("bud"));
        assert_eq!(snippet, "Budapest trip");
        assert_eq!(marked(&snippet, &highlights), ["Budapest"]);
    }
}
