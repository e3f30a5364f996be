//! Documents are read in a process of their own: `chat-server read-document FORMAT`, the
//! server's own binary, started for each document with no environment, the document on
//! its standard input and the result as JSON lines on its standard output ([`Line`]).
//!
//! Why a process: parsers can be driven far past any budget that is checked from inside
//! them. A 21 KB PDF whose object stream lists K objects at one offset of a 20 MiB
//! string makes lopdf build K copies of it (K = 2,000 asks for 40 GB), and an array of
//! small numbers grows some 30 times when parsed. Counting every allocation of another
//! crate's parser is not possible from outside it; the kernel can. The reader sets its
//! own limits before it reads a byte (`RLIMIT_DATA`, the heap and every private mapping,
//! at [`Limits::memory_bytes`]; `RLIMIT_CPU`), so a bomb ends the reader (an allocation
//! fails and it aborts), never the server: the upload is refused as unreadable and the
//! memory goes back with the process. The server also kills a reader past its wall-clock
//! time.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use super::extract::{self, Format, Unreadable};

/// The command that reads a document (hidden from `chat-server --help`).
pub const COMMAND: &str = "read-document";

/// CPU seconds a reader may use (the kernel stops it past them).
const CPU_SECS: u64 = 120;
/// Longest a reader may take to say whether a document can be read.
const CHECK_TIMEOUT: Duration = Duration::from_secs(60);
/// Longest a reader may take to give a document's text.
const READ_TIMEOUT: Duration = Duration::from_secs(10 * 60);

/// What a reader writes, one JSON object a line.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
enum Line {
    /// The document opened: its page count (formats with pages).
    Opened { pages: Option<u32> },
    /// The share of pages read so far.
    Progress(f32),
    /// A page's text (`number` is `None` for formats without pages).
    Page { number: Option<u32>, text: String },
    /// It cannot be read, and why.
    Unreadable(Why),
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
enum Why {
    Unsupported,
    Broken(String),
    Encrypted,
    NoText,
}

impl From<Unreadable> for Why {
    fn from(e: Unreadable) -> Self {
        match e {
            Unreadable::Unsupported => Why::Unsupported,
            Unreadable::Broken(why) => Why::Broken(why),
            Unreadable::Encrypted => Why::Encrypted,
            Unreadable::NoText => Why::NoText,
            Unreadable::TooDemanding => Why::Broken("over its limits".into()),
        }
    }
}

impl From<Why> for Unreadable {
    fn from(why: Why) -> Self {
        match why {
            Why::Unsupported => Unreadable::Unsupported,
            Why::Broken(why) => Unreadable::Broken(why),
            Why::Encrypted => Unreadable::Encrypted,
            Why::NoText => Unreadable::NoText,
        }
    }
}

/// How readers are started, and what they may use.
#[derive(Debug, Clone)]
pub struct Limits {
    /// The reader's program: this server's own binary unless set (tests run the server
    /// inside the test binary, and name the built `chat-server`).
    pub program: PathBuf,
    /// Memory one reader may allocate, in bytes.
    pub memory_bytes: u64,
}

impl Limits {
    pub fn new(program: &str, memory_mb: u64) -> anyhow::Result<Limits> {
        let program = match program.trim() {
            "" => std::env::current_exe()?,
            set => PathBuf::from(set),
        };
        Ok(Limits {
            program,
            memory_bytes: memory_mb.max(16) * 1024 * 1024,
        })
    }

    /// Whether `bytes` of `format` can be read, and the page count if so.
    pub async fn check(&self, bytes: Vec<u8>, format: Format) -> (Result<Option<u32>, Unreadable>, Vec<u8>) {
        let (said, bytes) = self.run(bytes, format, true, CHECK_TIMEOUT, |_| {}).await;
        let opened = said.and_then(|lines| {
            lines
                .into_iter()
                .find_map(|line| match line {
                    Line::Opened { pages } => Some(pages),
                    _ => None,
                })
                .ok_or_else(|| Unreadable::Broken("the reader said nothing".into()))
        });
        (opened, bytes)
    }

    /// The text of `bytes` of `format`, page by page, at most [`extract::MAX_TEXT_CHARS`]
    /// in all; `progress` hears the share read so far.
    pub async fn pages(
        &self,
        bytes: Vec<u8>,
        format: Format,
        progress: impl FnMut(f32),
    ) -> Result<Vec<(Option<u32>, String)>, Unreadable> {
        let (said, _) = self.run(bytes, format, false, READ_TIMEOUT, progress).await;
        let pages: Vec<_> = said?
            .into_iter()
            .filter_map(|line| match line {
                Line::Page { number, text } => Some((number, text)),
                _ => None,
            })
            .collect();
        if pages.is_empty() {
            return Err(Unreadable::NoText);
        }
        Ok(pages)
    }

    /// Starts a reader on `bytes`, and gathers what it says until it ends (and the bytes
    /// back). A reader that dies (over its memory or CPU), or takes longer than
    /// `timeout`, has read a document too demanding to read.
    async fn run(
        &self,
        bytes: Vec<u8>,
        format: Format,
        check: bool,
        timeout: Duration,
        mut progress: impl FnMut(f32),
    ) -> (Result<Vec<Line>, Unreadable>, Vec<u8>) {
        let mut command = tokio::process::Command::new(&self.program);
        command
            .arg(COMMAND)
            .arg(format.extension())
            .arg("--memory-bytes")
            .arg(self.memory_bytes.to_string())
            .env_clear()
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true);
        if check {
            command.arg("--check");
        }
        let mut child = match command.spawn() {
            Ok(child) => child,
            Err(e) => {
                tracing::error!(error = %e, program = %self.program.display(), "cannot start the document reader");
                return (Err(Unreadable::Broken("no reader".into())), bytes);
            }
        };
        let (Some(mut stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return (Err(Unreadable::Broken("no pipes".into())), bytes);
        };
        // Fed while its answer is read: a reader that answers before reading it all (a
        // broken file) must not leave the feeding stuck on a full pipe.
        let feeding = tokio::spawn(async move {
            // A reader that stopped reading (it failed, or had read enough) closes the pipe.
            let _ = stdin.write_all(&bytes).await;
            drop(stdin);
            bytes
        });
        let gathering = async {
            let mut said = Vec::new();
            let mut lines = BufReader::new(stdout).lines();
            while let Some(line) = lines.next_line().await? {
                match serde_json::from_str::<Line>(&line)? {
                    Line::Progress(share) => progress(share),
                    Line::Unreadable(why) => return Ok(Err(Unreadable::from(why))),
                    line => said.push(line),
                }
            }
            let status = child.wait().await?;
            anyhow::Ok(if status.success() {
                Ok(said)
            } else {
                tracing::info!(%status, "a document reader died: the document is over its limits");
                Err(Unreadable::TooDemanding)
            })
        };
        let said = match tokio::time::timeout(timeout, gathering).await {
            Ok(Ok(said)) => said,
            Ok(Err(e)) => {
                tracing::warn!(error = %e, "a document reader's answer could not be read");
                Err(Unreadable::Broken("unreadable answer".into()))
            }
            Err(_) => {
                tracing::info!(
                    ?timeout,
                    "a document reader took too long: the document is over its limits"
                );
                Err(Unreadable::TooDemanding)
            }
        };
        // Dropping the child kills a reader still running (kill_on_drop).
        drop(child);
        let bytes = feeding.await.unwrap_or_default();
        (said, bytes)
    }
}

/// The reader itself (`chat-server read-document FORMAT [--check]`): limits itself, then
/// reads the document on standard input and writes [`Line`]s. Exits 0 when it said
/// everything, even that the document is unreadable; any other end (an allocation over
/// the limit aborts) tells the server the document was too demanding.
pub fn read_document(format: &str, memory_bytes: u64, check: bool) -> anyhow::Result<()> {
    use rlimit::Resource;
    // Before the document's first byte: nothing of it runs unbounded.
    rlimit::setrlimit(Resource::DATA, memory_bytes, memory_bytes)?;
    rlimit::setrlimit(Resource::CPU, CPU_SECS, CPU_SECS)?;
    // A reader that runs out of memory aborts: no core file of its hundreds of MB.
    rlimit::setrlimit(Resource::CORE, 0, 0)?;
    let format = Format::from_extension(format).ok_or_else(|| anyhow::anyhow!("unknown format {format}"))?;
    let mut bytes = Vec::new();
    std::io::stdin().lock().read_to_end(&mut bytes)?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut say = |line: &Line| -> std::io::Result<()> {
        serde_json::to_writer(&mut out, line)?;
        out.write_all(b"\n")?;
        out.flush()
    };
    let opened = match extract::open(&bytes, format) {
        Ok(opened) => opened,
        Err(e) => return Ok(say(&Line::Unreadable(e.into()))?),
    };
    drop(bytes);
    say(&Line::Opened {
        pages: opened.page_count(),
    })?;
    if check {
        return Ok(());
    }
    let mut failed = None;
    let pages = opened.pages(|share| {
        if let Err(e) = say(&Line::Progress(share)) {
            failed.get_or_insert(e);
        }
    });
    if let Some(e) = failed {
        return Err(e.into());
    }
    match pages {
        Ok(pages) => {
            for (number, text) in pages {
                say(&Line::Page { number, text })?;
            }
        }
        Err(e) => say(&Line::Unreadable(e.into()))?,
    }
    Ok(())
}
