//! `GET /api/account/export`: the account as a zip, written while it downloads.
//!
//! A blocking task writes the zip (`ZipWriter::new_stream`: no seeking, so nothing of it
//! is kept) into a channel of a few 64 KiB chunks, which the response body reads. The
//! account is read in pages (conversations, each one's messages, files), so memory stays
//! bounded whatever the account holds: by the channel, a page, and the largest file. A
//! download that is closed fills no buffer: the next chunk finds no reader, and the task
//! ends. Database reads run on the server's runtime (`Handle::block_on`) from the task.

use std::io::{self, Write};
use std::sync::Arc;

use actix_web::web::Bytes;
use anyhow::Context;
use chat_contract::frames::Source;
use chat_contract::states::MessageRole;
use futures_util::Stream;
use serde::Serialize;
use tokio::runtime::Handle;
use tokio::sync::mpsc;
use zip::write::{SimpleFileOptions, StreamWriter};
use zip::{CompressionMethod, ZipWriter};

use super::format;
use crate::billing::Billing;
use crate::clock::SharedClock;
use crate::db::conversations::{ConversationRow, MessageRow};
use crate::db::files::FileRow;
use crate::db::portability::After;
use crate::db::users::UserRow;
use crate::db::Db;
use crate::files::store::FileStore;
use crate::quota::iso;
use crate::views::{self, PlanViews};

/// Bytes per chunk sent to the download.
const CHUNK: usize = 64 * 1024;
/// Chunks waiting for the download at most: what a slow client costs.
const CHUNKS_QUEUED: usize = 8;
const CONVERSATIONS_PAGE: i64 = 50;
const MESSAGES_PAGE: i64 = 500;
const FILES_PAGE: i64 = 100;

static README: &str = include_str!("README.txt");

/// What an export reads: the account's rows, its files' bytes, its invoices' PDFs.
pub struct Exporter {
    pub db: Db,
    pub clock: SharedClock,
    pub files: Arc<FileStore>,
    pub billing: Arc<Billing>,
    pub plans: Arc<PlanViews>,
}

/// The export of `user`, as the bytes of a zip; they are written as they are read.
pub fn stream(source: Arc<Exporter>, user: UserRow) -> impl Stream<Item = io::Result<Bytes>> {
    let (tx, rx) = mpsc::channel(CHUNKS_QUEUED);
    let runtime = Handle::current();
    let failed = tx.clone();
    tokio::task::spawn_blocking(move || {
        let out = ChannelWriter {
            tx,
            buf: Vec::with_capacity(CHUNK),
        };
        match write(&runtime, &source, &user, out) {
            Ok(counts) => tracing::info!(user = %user.id, ?counts, "account exported"),
            Err(e) if closed(&e) => tracing::info!(user = %user.id, "export download closed"),
            Err(e) => {
                tracing::error!(user = %user.id, error = ?e, "export failed");
                // The download ends with an error, not as a zip that looks whole.
                let _ = failed.blocking_send(Err(io::Error::other("the export failed")));
            }
        }
    });
    futures_util::stream::unfold(
        rx,
        |mut rx| async move { rx.recv().await.map(|chunk| (chunk, rx)) },
    )
}

/// Whether the export stopped because the download was closed.
fn closed(e: &anyhow::Error) -> bool {
    e.chain().any(|cause| {
        cause
            .downcast_ref::<io::Error>()
            .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
            || cause.downcast_ref::<zip::result::ZipError>().is_some_and(
                |e| matches!(e, zip::result::ZipError::Io(e) if e.kind() == io::ErrorKind::BrokenPipe),
            )
    })
}

/// The download's side of the zip: full chunks go to the channel, waiting for room.
struct ChannelWriter {
    tx: mpsc::Sender<io::Result<Bytes>>,
    buf: Vec<u8>,
}

impl ChannelWriter {
    fn send(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let chunk = std::mem::replace(&mut self.buf, Vec::with_capacity(CHUNK));
        self.tx
            .blocking_send(Ok(Bytes::from(chunk)))
            .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "the download was closed"))
    }
}

impl Write for ChannelWriter {
    /// Takes at most what fills the chunk (`write_all` calls again for the rest), so a
    /// large file leaves in chunks too.
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        let n = data.len().min(CHUNK - self.buf.len());
        self.buf.extend_from_slice(&data[..n]);
        if self.buf.len() == CHUNK {
            self.send()?;
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.send()
    }
}

type Zip = ZipWriter<StreamWriter<ChannelWriter>>;

/// What the export holds, for `manifest.json` and the log.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
struct Counts {
    conversations: u64,
    messages: u64,
    files: u64,
    invoices: u64,
    /// Files whose bytes the store no longer had (named, not included).
    missing_files: Vec<String>,
}

/// The parts of one export, and how each is read and written.
struct Export<'a> {
    runtime: &'a Handle,
    source: &'a Exporter,
    user: &'a UserRow,
    zip: Zip,
    /// Every entry's time: when the export was made.
    options: SimpleFileOptions,
    exported_at: String,
    counts: Counts,
}

fn write(runtime: &Handle, source: &Exporter, user: &UserRow, out: ChannelWriter) -> anyhow::Result<Counts> {
    let now = source.clock.now_ms();
    let options = SimpleFileOptions::default()
        .compression_method(CompressionMethod::Deflated)
        .last_modified_time(zip_time(now));
    let mut export = Export {
        runtime,
        source,
        user,
        zip: ZipWriter::new_stream(out),
        options,
        exported_at: iso(now),
        counts: Counts::default(),
    };
    export.entry("README.txt")?;
    export.zip.write_all(README.as_bytes())?;
    export.conversations_json()?;
    export.conversations_markdown()?;
    export.profile()?;
    export.billing_and_invoices()?;
    export.files()?;
    export.manifest()?;
    let mut out = export.zip.finish().context("finishing the zip")?.into_inner();
    out.flush()?;
    Ok(export.counts)
}

impl Export<'_> {
    fn entry(&mut self, name: &str) -> anyhow::Result<()> {
        self.zip
            .start_file(name, self.options)
            .with_context(|| format!("starting {name}"))
    }

    /// An entry stored as it is: images and PDFs are compressed already.
    fn stored_entry(&mut self, name: &str) -> anyhow::Result<()> {
        let options = self.options.compression_method(CompressionMethod::Stored);
        self.zip
            .start_file(name, options)
            .with_context(|| format!("starting {name}"))
    }

    fn json(&mut self, name: &str, value: &impl Serialize) -> anyhow::Result<()> {
        self.entry(name)?;
        serde_json::to_writer_pretty(&mut self.zip, value)?;
        self.zip.write_all(b"\n")?;
        Ok(())
    }

    fn read<T>(&self, query: impl std::future::Future<Output = sqlx::Result<T>>) -> anyhow::Result<T> {
        self.runtime
            .block_on(query)
            .context("reading the account to export")
    }

    /// Calls `each` with every conversation of the user, oldest first, a page at a time.
    fn each_conversation(
        &mut self,
        mut each: impl FnMut(&mut Self, &ConversationRow) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        let mut after: After = None;
        loop {
            let page = self.read(self.source.db.conversations_page(
                &self.user.id,
                &after,
                CONVERSATIONS_PAGE,
            ))?;
            for conversation in &page {
                each(self, conversation)?;
            }
            match page.last() {
                Some(last) if page.len() as i64 == CONVERSATIONS_PAGE => {
                    after = Some((last.created_at, last.id.clone()));
                }
                _ => return Ok(()),
            }
        }
    }

    /// Calls `each` with every message of a conversation (every branch), oldest first
    /// (so a message comes after the one it follows), a page at a time.
    fn each_message(
        &mut self,
        conversation_id: &str,
        mut each: impl FnMut(&mut Self, &MessageRow) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        let mut after: After = None;
        loop {
            let page = self.read(
                self.source
                    .db
                    .messages_page(conversation_id, &after, MESSAGES_PAGE),
            )?;
            for message in &page {
                each(self, message)?;
            }
            match page.last() {
                Some(last) if page.len() as i64 == MESSAGES_PAGE => {
                    after = Some((last.created_at, last.id.clone()));
                }
                _ => return Ok(()),
            }
        }
    }

    /// `conversations.json`: `{format, version, exportedAt, conversations: [...]}`, each
    /// conversation's fields then its `messages`, written as they are read.
    fn conversations_json(&mut self) -> anyhow::Result<()> {
        self.entry("conversations.json")?;
        let header = serde_json::to_vec(&format::Header {
            format: format::FORMAT,
            version: format::VERSION,
            exported_at: self.exported_at.clone(),
        })?;
        // The header's object stays open for the conversations.
        self.zip.write_all(&header[..header.len() - 1])?;
        self.zip.write_all(b",\"conversations\":[")?;
        let mut first = true;
        self.each_conversation(|export, conversation| {
            if !std::mem::take(&mut first) {
                export.zip.write_all(b",")?;
            }
            let files = export.read(export.source.db.files_of_conversation(&conversation.id))?;
            // Its fields without `messages` (empty, so left out), the object left open.
            let fields = serde_json::to_vec(&format::conversation(conversation))?;
            export.zip.write_all(b"\n")?;
            export.zip.write_all(&fields[..fields.len() - 1])?;
            export.zip.write_all(b",\"messages\":[")?;
            let mut first_message = true;
            export.each_message(&conversation.id, |export, message| {
                if !std::mem::take(&mut first_message) {
                    export.zip.write_all(b",")?;
                }
                export.zip.write_all(b"\n")?;
                serde_json::to_writer(&mut export.zip, &format::message(message, &files))?;
                export.counts.messages += 1;
                Ok(())
            })?;
            export.zip.write_all(b"]}")?;
            export.counts.conversations += 1;
            Ok(())
        })?;
        self.zip.write_all(b"\n]}\n")?;
        Ok(())
    }

    /// `conversations/<date>-<title>-<id>.md`: each conversation's shown branch.
    fn conversations_markdown(&mut self) -> anyhow::Result<()> {
        self.each_conversation(|export, conversation| {
            let branch = export.shown_branch(conversation)?;
            let files = export.read(export.source.db.files_of_conversation(&conversation.id))?;
            export.entry(&super::markdown_path(conversation))?;
            let title = conversation.title.as_deref().unwrap_or("Untitled");
            write!(
                export.zip,
                "# {title}\n\n- Started: {}\n- Last message: {}\n- Model: {}\n",
                when(conversation.created_at),
                when(conversation.updated_at),
                conversation.model
            )?;
            export.each_message(&conversation.id, |export, message| {
                if branch.contains(&message.id) {
                    markdown_message(&mut export.zip, message, &files)?;
                }
                Ok(())
            })
        })
    }

    /// The ids of the messages on the branch the conversation shows.
    fn shown_branch(
        &self,
        conversation: &ConversationRow,
    ) -> anyhow::Result<std::collections::HashSet<String>> {
        let links = self.read(self.source.db.message_links(&conversation.id))?;
        let parent: std::collections::HashMap<String, Option<String>> = links.into_iter().collect();
        let mut branch = std::collections::HashSet::new();
        let mut next = conversation.current_message_id.clone();
        // A message seen twice would be a loop (never written): the walk stops.
        while let Some(id) = next.take() {
            next = parent.get(&id).cloned().flatten();
            if !branch.insert(id) {
                break;
            }
        }
        Ok(branch)
    }

    /// `profile.json`: the user, their settings and their projects.
    fn profile(&mut self) -> anyhow::Result<()> {
        #[derive(Serialize)]
        struct Profile {
            user: chat_contract::views::User,
            projects: Vec<chat_contract::frames::Project>,
        }
        let projects = self.read(self.source.db.projects(&self.user.id))?;
        let profile = Profile {
            user: views::user(self.user),
            projects: projects.iter().map(views::project_view).collect(),
        };
        self.json("profile.json", &profile)
    }

    /// `billing.json` (billing info, the subscription, every payment and invoice) and
    /// `invoices/<number>.pdf`.
    fn billing_and_invoices(&mut self) -> anyhow::Result<()> {
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Billing {
            billing_info: Option<chat_contract::views::BillingInfo>,
            subscription: chat_contract::views::Subscription,
            /// Newest first: the plans paid for, and when.
            payments: Vec<chat_contract::views::Payment>,
            invoices: Vec<chat_contract::views::Invoice>,
        }
        let (source, user_id) = (self.source, &self.user.id);
        let billing_info = self.read(source.db.billing_info(user_id))?;
        let subscription = self.read(source.db.subscription(user_id, source.clock.now_ms()))?;
        let payments = self.read(source.db.payments_of(user_id))?;
        let invoices = self.read(source.db.invoices_of(user_id))?;
        let billing = Billing {
            billing_info: billing_info.as_ref().map(views::billing_info),
            subscription: source.plans.subscription(&subscription),
            payments: payments.iter().map(views::payment).collect(),
            invoices: invoices.iter().map(views::invoice).collect(),
        };
        self.json("billing.json", &billing)?;
        for invoice in &invoices {
            let pdf = source
                .billing
                .invoice_pdf(invoice)
                .with_context(|| format!("rendering invoice {}", invoice.number))?;
            self.stored_entry(&format!("invoices/{}.pdf", invoice.number))?;
            self.zip.write_all(&pdf)?;
            self.counts.invoices += 1;
        }
        Ok(())
    }

    /// `files/<id>-<name>`: every file of the user's, one at a time.
    fn files(&mut self) -> anyhow::Result<()> {
        let mut after: After = None;
        loop {
            let page = self.read(self.source.db.files_page(&self.user.id, &after, FILES_PAGE))?;
            for file in &page {
                self.file(file)?;
            }
            match page.last() {
                Some(last) if page.len() as i64 == FILES_PAGE => {
                    after = Some((last.created_at, last.id.clone()))
                }
                _ => return Ok(()),
            }
        }
    }

    fn file(&mut self, file: &FileRow) -> anyhow::Result<()> {
        let path = super::file_path(file);
        let Some(bytes) = self
            .runtime
            .block_on(self.source.files.get(file, false))
            .with_context(|| format!("reading file {}", file.id))?
        else {
            tracing::warn!(file = %file.id, "a file to export is not in the store");
            self.counts.missing_files.push(path);
            return Ok(());
        };
        if file.mime.starts_with("text/") {
            self.entry(&path)?;
        } else {
            self.stored_entry(&path)?;
        }
        self.zip.write_all(&bytes)?;
        self.counts.files += 1;
        Ok(())
    }

    /// `manifest.json`: the format, when, and what the export holds.
    fn manifest(&mut self) -> anyhow::Result<()> {
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Manifest<'a> {
            format: &'a str,
            version: u32,
            exported_at: &'a str,
            user_id: &'a str,
            contents: &'a Counts,
        }
        let manifest = Manifest {
            format: format::FORMAT,
            version: format::VERSION,
            exported_at: &self.exported_at,
            user_id: &self.user.id,
            contents: &self.counts,
        };
        let bytes = serde_json::to_vec_pretty(&manifest)?;
        self.entry("manifest.json")?;
        self.zip.write_all(&bytes)?;
        Ok(())
    }
}

/// A time as a zip entry keeps it (UTC, to the even second, 1980–2107).
fn zip_time(ms: i64) -> zip::DateTime {
    use chrono::{Datelike, Timelike};
    let t = chrono::DateTime::from_timestamp_millis(ms).unwrap_or_default();
    let year = u16::try_from(t.year()).unwrap_or(1980);
    // The parts of a valid time are in range for `u8`.
    let part = |n: u32| n as u8;
    zip::DateTime::from_date_and_time(
        year,
        part(t.month()),
        part(t.day()),
        part(t.hour()),
        part(t.minute()),
        part(t.second()),
    )
    .unwrap_or_default()
}

/// A time as the Markdown shows it: `2026-05-01 14:03 UTC`.
fn when(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .unwrap_or_default()
        .format("%Y-%m-%d %H:%M UTC")
        .to_string()
}

fn markdown_message(out: &mut impl Write, m: &MessageRow, files: &[FileRow]) -> io::Result<()> {
    let who = match (m.role, &m.model) {
        (MessageRole::User, _) => "You".to_owned(),
        (MessageRole::Assistant, Some(model)) => format!("Assistant ({model})"),
        (MessageRole::Assistant, None) => "Assistant".to_owned(),
    };
    write!(
        out,
        "\n## {who} · {}\n\n{}\n",
        when(m.created_at),
        m.content.trim_end()
    )?;
    let sent: Vec<&FileRow> = files
        .iter()
        .filter(|f| f.message_id.as_deref() == Some(m.id.as_str()))
        .collect();
    if !sent.is_empty() {
        writeln!(out, "\nAttachments:")?;
        for f in sent {
            // `<…>`: a path with spaces or brackets is still one link.
            writeln!(out, "- [{}](<../{}>)", f.name, super::file_path(f))?;
        }
    }
    let sources = views::message_view(m).sources;
    if !sources.is_empty() {
        writeln!(out, "\nSources:")?;
        for (n, source) in sources.iter().enumerate() {
            match source {
                Source::Web(web) => writeln!(out, "{}. [{}](<{}>)", n + 1, web.title, web.url)?,
                Source::Document(doc) => match doc.page {
                    Some(page) => writeln!(out, "{}. {}, page {page}", n + 1, doc.name)?,
                    None => writeln!(out, "{}. {}", n + 1, doc.name)?,
                },
            }
        }
    }
    Ok(())
}
