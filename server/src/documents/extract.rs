//! A document's text: which format an upload is (from its content, the name only telling
//! text formats apart), whether it can be read at all (checked while the upload waits,
//! so a broken file is refused and nothing is stored), and its text page by page.
//!
//! Every step is bounded: a PDF page's content may inflate to [`MAX_PAGE_INFLATED`], a
//! DOCX's text part to [`MAX_DOCX_XML`], and no more than [`MAX_TEXT_CHARS`] of any
//! document are kept. What the parsers allocate is bounded from outside: this runs in a
//! reader process of its own, under a memory limit ([`super::reader`]).

use std::io::Read;

/// What a document is stored and shown as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Pdf,
    Docx,
    Markdown,
    Csv,
    Text,
}

impl Format {
    pub fn mime(self) -> &'static str {
        match self {
            Format::Pdf => "application/pdf",
            Format::Docx => "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
            Format::Markdown => "text/markdown",
            Format::Csv => "text/csv",
            Format::Text => "text/plain",
        }
    }

    /// The format stored with [`Format::extension`] `ext`.
    pub fn from_extension(ext: &str) -> Option<Format> {
        [
            Format::Pdf,
            Format::Docx,
            Format::Markdown,
            Format::Csv,
            Format::Text,
        ]
        .into_iter()
        .find(|f| f.extension() == ext)
    }

    pub fn extension(self) -> &'static str {
        match self {
            Format::Pdf => "pdf",
            Format::Docx => "docx",
            Format::Markdown => "md",
            Format::Csv => "csv",
            Format::Text => "txt",
        }
    }
}

/// Text kept of one document (about 500 pages): the rest is not searched.
pub const MAX_TEXT_CHARS: usize = 2_000_000;
/// Most a PDF page's content streams may inflate to (a decompression bomb stops here).
const MAX_PAGE_INFLATED: usize = 16 * 1024 * 1024;
/// Most a DOCX's `word/document.xml` may inflate to.
const MAX_DOCX_XML: u64 = 64 * 1024 * 1024;

/// Why a document cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum Unreadable {
    #[error("not a document type we read")]
    Unsupported,
    #[error("damaged or unreadable: {0}")]
    Broken(String),
    #[error("password-protected")]
    Encrypted,
    #[error("no text in it (a scan?)")]
    NoText,
    /// Its reader ran out of memory or time: a bomb, or more than a document may take.
    #[error("over the memory or time a document may take")]
    TooDemanding,
}

fn broken(e: impl std::fmt::Display) -> Unreadable {
    Unreadable::Broken(e.to_string())
}

/// The format of `bytes`, from their content: a PDF, a zip that is a Word document, or
/// UTF-8 text (Markdown or CSV when the uploaded name says so).
pub fn detect(bytes: &[u8], name: &str) -> Option<Format> {
    if bytes.starts_with(b"%PDF-") {
        return Some(Format::Pdf);
    }
    if bytes.starts_with(b"PK\x03\x04") {
        return Some(Format::Docx);
    }
    if bytes.contains(&0) {
        return None;
    }
    let ext = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    Some(match ext.as_deref() {
        Some("md" | "markdown") => Format::Markdown,
        Some("csv") => Format::Csv,
        _ => Format::Text,
    })
}

/// A document opened far enough to know it can be read; its text comes from
/// [`Opened::pages`].
pub enum Opened {
    Pdf(Box<lopdf::Document>),
    /// DOCX and text formats: read whole while opening (cheap next to a PDF).
    Text(String),
}

impl Opened {
    /// A PDF's page count; `None` for formats without pages.
    pub fn page_count(&self) -> Option<u32> {
        match self {
            Opened::Pdf(doc) => Some(doc.get_pages().len() as u32),
            Opened::Text(_) => None,
        }
    }

    /// The text, page by page (`(page number, text)`; one page numbered `None` for
    /// formats without pages), at most [`MAX_TEXT_CHARS`] in all. `progress` hears the
    /// share of pages read so far.
    pub fn pages(self, mut progress: impl FnMut(f32)) -> Result<Vec<(Option<u32>, String)>, Unreadable> {
        let doc = match self {
            Opened::Text(text) => {
                progress(1.0);
                return Ok(vec![(None, cut(text, MAX_TEXT_CHARS))]);
            }
            Opened::Pdf(doc) => doc,
        };
        let numbers: Vec<u32> = doc.get_pages().keys().copied().collect();
        let mut pages = Vec::with_capacity(numbers.len());
        let mut kept = 0;
        for (i, &n) in numbers.iter().enumerate() {
            // A page that cannot be read (an odd font, a bomb) is skipped, not the document.
            let text = match doc.extract_text_with_limit(&[n], MAX_PAGE_INFLATED) {
                Ok(text) => text,
                Err(e) => {
                    tracing::debug!(page = n, error = %e, "skipping an unreadable PDF page");
                    continue;
                }
            };
            let text = cut(text, MAX_TEXT_CHARS - kept);
            kept += text.chars().count();
            if !text.trim().is_empty() {
                pages.push((Some(n), text));
            }
            progress((i + 1) as f32 / numbers.len() as f32);
            if kept >= MAX_TEXT_CHARS {
                break;
            }
        }
        if pages.is_empty() {
            return Err(Unreadable::NoText);
        }
        Ok(pages)
    }
}

fn cut(mut text: String, max_chars: usize) -> String {
    if let Some((at, _)) = text.char_indices().nth(max_chars) {
        text.truncate(at);
    }
    text
}

/// Opens a document of `format`: refuses what is damaged, encrypted, not really of the
/// format, or holds no text.
pub fn open(bytes: &[u8], format: Format) -> Result<Opened, Unreadable> {
    let opened = match format {
        Format::Pdf => {
            // A PDF ends with `%%EOF`; the parser would recover what it can of a cut one,
            // and a cut upload is refused rather than half read.
            let tail = &bytes[bytes.len().saturating_sub(1024)..];
            if !tail.windows(5).any(|w| w == b"%%EOF") {
                return Err(Unreadable::Broken("cut short: no %%EOF".into()));
            }
            let doc = lopdf::Document::load_mem(bytes).map_err(|e| match e {
                lopdf::Error::Decryption(_) => Unreadable::Encrypted,
                e => broken(e),
            })?;
            if doc.is_encrypted() {
                return Err(Unreadable::Encrypted);
            }
            if doc.get_pages().is_empty() {
                return Err(Unreadable::NoText);
            }
            Opened::Pdf(Box::new(doc))
        }
        Format::Docx => Opened::Text(docx_text(bytes)?),
        Format::Markdown | Format::Csv | Format::Text => {
            let text = std::str::from_utf8(bytes).map_err(|_| Unreadable::Unsupported)?;
            Opened::Text(text.trim_start_matches('\u{feff}').to_owned())
        }
    };
    if let Opened::Text(text) = &opened {
        if text.trim().is_empty() {
            return Err(Unreadable::NoText);
        }
    }
    Ok(opened)
}

/// The paragraphs of a Word document (`word/document.xml`), one a line.
fn docx_text(bytes: &[u8]) -> Result<String, Unreadable> {
    use quick_xml::events::Event;

    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes)).map_err(broken)?;
    let part = match zip.by_name("word/document.xml") {
        Ok(part) => part,
        // A zip, but not a Word document.
        Err(zip::result::ZipError::FileNotFound) => return Err(Unreadable::Unsupported),
        Err(e) => return Err(broken(e)),
    };
    if part.size() > MAX_DOCX_XML {
        return Err(Unreadable::Broken("its text part is too large".into()));
    }
    let mut xml = String::new();
    // The declared size can lie: the read itself is bounded too.
    part.take(MAX_DOCX_XML).read_to_string(&mut xml).map_err(broken)?;

    let mut reader = quick_xml::Reader::from_str(&xml);
    let mut text = String::new();
    let mut in_text = false;
    loop {
        match reader.read_event().map_err(broken)? {
            Event::Start(e) if e.local_name().as_ref() == b"t" => in_text = true,
            Event::End(e) => match e.local_name().as_ref() {
                b"t" => in_text = false,
                b"p" => text.push('\n'),
                _ => {}
            },
            Event::Empty(e) => match e.local_name().as_ref() {
                b"tab" => text.push('\t'),
                b"br" | b"cr" => text.push('\n'),
                _ => {}
            },
            Event::Text(t) if in_text => text.push_str(&t.decode().map_err(broken)?),
            Event::GeneralRef(r) if in_text => {
                let c = match r.resolve_char_ref().map_err(broken)? {
                    Some(c) => c,
                    None => match &*r {
                        b"amp" => '&',
                        b"lt" => '<',
                        b"gt" => '>',
                        b"quot" => '"',
                        b"apos" => '\'',
                        _ => continue,
                    },
                };
                text.push(c);
            }
            Event::Eof => break,
            _ => {}
        }
        if text.len() > MAX_TEXT_CHARS * 4 {
            break;
        }
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_come_from_the_content_and_text_kinds_from_the_name() {
        assert_eq!(detect(b"%PDF-1.7\n", "notes.txt"), Some(Format::Pdf));
        assert_eq!(detect(b"PK\x03\x04rest", "a.pdf"), Some(Format::Docx));
        assert_eq!(detect(b"# Title\n", "README.MD"), Some(Format::Markdown));
        assert_eq!(detect(b"a,b\n1,2\n", "t.csv"), Some(Format::Csv));
        assert_eq!(detect(b"plain", "noextension"), Some(Format::Text));
        assert_eq!(detect(b"bin\0ary", "a.txt"), None);
    }

    #[test]
    fn text_must_be_utf8_and_not_blank() {
        assert!(matches!(
            open(b"\xff\xfe\x00", Format::Text),
            Err(Unreadable::Unsupported)
        ));
        assert!(matches!(
            open(b" \n\t ", Format::Markdown),
            Err(Unreadable::NoText)
        ));
        let opened = open("\u{feff}hello".as_bytes(), Format::Text).unwrap();
        let pages = opened.pages(|_| {}).unwrap();
        assert_eq!(pages, vec![(None, "hello".to_owned())]);
    }

    #[test]
    fn a_truncated_pdf_or_a_zip_that_is_no_word_file_is_refused() {
        assert!(matches!(
            open(b"%PDF-1.7\n1 0 obj <<", Format::Pdf),
            Err(Unreadable::Broken(_))
        ));
        assert!(matches!(
            open(b"PK\x03\x04trunc", Format::Docx),
            Err(Unreadable::Broken(_))
        ));
    }

    #[test]
    fn long_text_is_cut_on_a_character_boundary() {
        assert_eq!(cut("ééé".into(), 2), "éé");
        assert_eq!(cut("ab".into(), 5), "ab");
    }
}
