//! A document's text cut into pieces a prompt can carry, and the pieces ranked against a
//! question: by cosine similarity of embeddings when they exist, else by BM25.
//! Pure functions: the pipeline around them is in `documents`.

use bm25::{SearchEngineBuilder, Tokenizer};

/// A piece's length in characters: about 250 tokens, so that the best few fit a prompt
/// next to the conversation.
pub const CHUNK_CHARS: usize = 1000;
/// What a piece repeats of the one before it, so that a sentence cut between two pieces is
/// whole in one of them.
const OVERLAP_CHARS: usize = 150;

/// A piece of a document.
#[derive(Debug, Clone, PartialEq)]
pub struct Chunk {
    /// The PDF page it is on (pieces never span pages); `None` without pages.
    pub page: Option<u32>,
    pub text: String,
}

/// Cuts pages into pieces of at most about [`CHUNK_CHARS`], at line ends where it can,
/// else at sentence ends or spaces. A CSV's pieces each start with its header line, so
/// that every piece says what its columns are.
pub fn chunk(pages: Vec<(Option<u32>, String)>, csv: bool) -> Vec<Chunk> {
    let mut chunks = Vec::new();
    for (page, text) in pages {
        let mut lines = text.lines().map(str::trim_end).filter(|l| !l.trim().is_empty());
        let header = if csv {
            lines.next().map(str::to_owned)
        } else {
            None
        };
        let mut units: Vec<&str> = Vec::new();
        for line in lines {
            split_long(line, &mut units);
        }
        let mut current = String::new();
        let mut last_unit = "";
        for unit in units {
            if !current.is_empty() && chars(&current) + 1 + chars(unit) > CHUNK_CHARS {
                chunks.push(Chunk {
                    page,
                    text: with_header(&header, &current),
                });
                current.clear();
                // The piece before's last line again, when it is short enough to repeat.
                if chars(last_unit) <= OVERLAP_CHARS {
                    current.push_str(last_unit);
                }
            }
            if !current.is_empty() {
                current.push('\n');
            }
            current.push_str(unit);
            last_unit = unit;
        }
        if !current.trim().is_empty() {
            chunks.push(Chunk {
                page,
                text: with_header(&header, &current),
            });
        }
    }
    chunks
}

fn chars(s: &str) -> usize {
    s.chars().count()
}

fn with_header(header: &Option<String>, body: &str) -> String {
    match header {
        Some(h) => format!("{h}\n{body}"),
        None => body.to_owned(),
    }
}

/// A line longer than a piece, in parts of at most [`CHUNK_CHARS`]: cut after the last
/// sentence end in reach, else the last space, else anywhere (on a character boundary).
fn split_long<'a>(mut line: &'a str, out: &mut Vec<&'a str>) {
    while chars(line) > CHUNK_CHARS {
        let limit = line
            .char_indices()
            .nth(CHUNK_CHARS)
            .map_or(line.len(), |(i, _)| i);
        let window = &line[..limit];
        let at = window
            .rfind(". ")
            .map(|i| i + 1)
            .or_else(|| window.rfind(' '))
            .filter(|&i| i > 0)
            .unwrap_or(limit);
        out.push(line[..at].trim());
        line = line[at..].trim_start();
    }
    if !line.trim().is_empty() {
        out.push(line);
    }
}

/// Words, lowercased, without punctuation, for BM25: language-neutral (the crate's own
/// tokenizer, with stemming and stop words per language, is left out for its weight).
#[derive(Default)]
struct Words;

impl Tokenizer for Words {
    fn tokenize(&self, text: &str) -> Vec<String> {
        text.split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect()
    }
}

/// A piece is kept when it scores at least this share of the best one: a piece that
/// shares only "the" and "is" with the question is noise in the prompt and its sources.
const BM25_CUTOFF: f32 = 0.5;
/// The same for cosine similarity, whose scores lie closer together.
const COSINE_CUTOFF: f32 = 0.75;

/// The indexes of the `k` pieces that best answer `question` by BM25, best first; pieces
/// that share no word with it, or score far below the best, are left out.
pub fn rank_bm25(question: &str, texts: &[&str], k: usize) -> Vec<usize> {
    if texts.is_empty() {
        return Vec::new();
    }
    let engine = SearchEngineBuilder::<u32, u32, Words>::with_tokenizer_and_corpus(
        Words,
        texts.iter().map(|t| t.to_string()),
    )
    .build();
    let found = engine.search(question, k);
    let best = found.first().map_or(0.0, |r| r.score);
    found
        .into_iter()
        .filter(|r| r.score > 0.0 && r.score >= best * BM25_CUTOFF)
        .map(|r| r.document.id as usize)
        .collect()
}

/// The indexes of the `k` embeddings nearest `question` by cosine similarity, best first.
pub fn rank_cosine(question: &[f32], embeddings: &[&[f32]], k: usize) -> Vec<usize> {
    let mut scored: Vec<(usize, f32)> = embeddings
        .iter()
        .enumerate()
        .filter(|(_, e)| e.len() == question.len())
        .map(|(i, e)| (i, cosine(question, e)))
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1));
    let best = scored.first().map_or(0.0, |s| s.1);
    scored
        .into_iter()
        .take(k)
        .filter(|(_, score)| *score > 0.0 && *score >= best * COSINE_CUTOFF)
        .map(|(i, _)| i)
        .collect()
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let (mut dot, mut na, mut nb) = (0f32, 0f32, 0f32);
    for (x, y) in a.iter().zip(b) {
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na.sqrt() * nb.sqrt())
    }
}

/// An embedding as stored: little-endian f32s.
pub fn to_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub fn from_blob(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_stay_within_their_page_and_size() {
        let long = "word ".repeat(700);
        let pages = vec![
            (Some(1), format!("{long}\nshort line")),
            (Some(2), "page two".into()),
        ];
        let chunks = chunk(pages, false);
        assert!(chunks
            .iter()
            .all(|c| chars(&c.text) <= CHUNK_CHARS + OVERLAP_CHARS + 1));
        assert_eq!(
            chunks.last().unwrap(),
            &Chunk {
                page: Some(2),
                text: "page two".into()
            }
        );
        assert!(chunks.iter().filter(|c| c.page == Some(1)).count() >= 4);
    }

    #[test]
    fn a_line_without_spaces_is_cut_on_character_boundaries() {
        let line = "é".repeat(2500);
        let chunks = chunk(vec![(None, line)], false);
        assert_eq!(chunks.len(), 3);
        assert_eq!(chunks.iter().map(|c| chars(&c.text)).sum::<usize>(), 2500);
    }

    #[test]
    fn every_csv_piece_starts_with_the_header() {
        let mut csv = String::from("city,population\n");
        for i in 0..200 {
            csv.push_str(&format!("town number {i},{}\n", i * 1000));
        }
        let chunks = chunk(vec![(None, csv)], true);
        assert!(chunks.len() > 2);
        assert!(chunks.iter().all(|c| c.text.starts_with("city,population\n")));
    }

    #[test]
    fn bm25_finds_the_piece_that_shares_the_rare_words() {
        let texts = [
            "The weather was mild and the harbour quiet.",
            "The secret harbour code is LIGHTHOUSE-42.",
            "Nothing about codes here, only weather.",
        ];
        let ranked = rank_bm25("What is the secret harbour code?", &texts, 2);
        assert_eq!(ranked.first(), Some(&1));
        assert!(rank_bm25("zebra", &texts, 3).is_empty());
    }

    #[test]
    fn cosine_ranks_the_nearest_first_and_skips_other_dimensions() {
        let a = [1.0, 0.0];
        let b = [0.6, 0.8];
        let c = [0.0, 1.0, 0.0];
        let d = [0.3, 1.0];
        assert_eq!(rank_cosine(&[0.0, 1.0], &[&a, &b, &c, &d], 3), vec![3, 1]);
        assert_eq!(from_blob(&to_blob(&[1.5, -2.0])), vec![1.5, -2.0]);
    }
}
