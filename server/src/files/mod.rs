//! Attachments: the [`Files`] service. What an upload must pass, the images a prompt
//! carries, and the sweep that deletes the files of deleted messages, conversations and
//! accounts; where the bytes are kept is [`store`].
//!
//! A file is stored as two objects, `<user>/<id>` and `<user>/<id>.thumb`. Its row is
//! written before its objects and removed only after them (see `db::files`), so the
//! store never holds an object that no row names.

pub mod store;

use std::sync::Arc;
use std::time::Duration;

use chat_actors::model::ImagePart;
use chat_contract::states::{FileKind, FileStatus};

use crate::clock::SharedClock;
use crate::db::files::FileRow;
use crate::db::Db;
use crate::documents::{self, extract::Format, Documents};
use crate::entitlements;
use crate::error::{ApiError, ErrorCode, Result};
use crate::files::store::FileStore;
use crate::images::ImageDecoder;
use crate::plans::Plan;

/// Files removed per sweep pass (it repeats at once while it finds more).
const SWEEP_BATCH: i64 = 200;
/// How often the sweep runs when nothing wakes it.
const SWEEP_EVERY: Duration = Duration::from_secs(60);
/// How often it also scans every file for those no delete marked.
const FULL_SWEEP_EVERY: Duration = Duration::from_secs(24 * 3600);
/// The longest file name kept (the rest is cut).
const MAX_NAME_CHARS: usize = 120;

/// What the first bytes of an upload say it is.
#[derive(Debug, PartialEq, Eq)]
enum Sniffed {
    Image,
    /// PDF, a zip (DOCX) or text: what document upload will take.
    Document,
    Other,
}

fn sniff(bytes: &[u8]) -> Sniffed {
    if crate::images::image_format(bytes).is_some() {
        Sniffed::Image
    } else if bytes.starts_with(b"%PDF-")
        || bytes.starts_with(b"PK\x03\x04")
        || (looks_like_text(&bytes[..bytes.len().min(4096)]) && !bytes.contains(&0))
    {
        Sniffed::Document
    } else {
        Sniffed::Other
    }
}

/// UTF-8, allowing a character cut at the end of the sample.
fn looks_like_text(head: &[u8]) -> bool {
    match std::str::from_utf8(head) {
        Ok(_) => true,
        Err(e) => e.error_len().is_none(),
    }
}

/// The name shown for an upload: its last path component, without control or format
/// characters (a name with a right-to-left override would show another extension),
/// cut to [`MAX_NAME_CHARS`], with the extension `ext` of the type it is stored as
/// (`fallback` when nothing of the name is left).
fn stored_name(uploaded: &str, ext: &str, fallback: &str) -> String {
    let base = uploaded.rsplit(['/', '\\']).next().unwrap_or_default();
    let clean = crate::domain::without_hidden_chars(base);
    let stem = clean.rsplit_once('.').map_or(clean.as_str(), |(stem, _)| stem);
    let stem: String = stem.trim().chars().take(MAX_NAME_CHARS).collect();
    let stem = if stem.is_empty() {
        fallback.to_owned()
    } else {
        stem
    };
    format!("{stem}.{ext}")
}

/// What an upload becomes before it is stored.
struct Prepared {
    kind: FileKind,
    name: String,
    mime: String,
    width: Option<i32>,
    height: Option<i32>,
    pages: Option<i32>,
    /// The file's object, then its thumbnail's (images only).
    objects: Vec<(bool, Vec<u8>)>,
    /// A document to process once stored.
    document: Option<Format>,
}

/// The files service: uploads checked and stored, images read back for the model, and
/// the sweep of what was deleted.
pub struct Files {
    pub db: Db,
    pub clock: SharedClock,
    pub store: Arc<FileStore>,
    /// The decode slots (images, and the check of a document).
    pub images: ImageDecoder,
    pub documents: Arc<Documents>,
    /// A stored image's longest side, and its thumbnail's (`[files]`).
    pub image_max_px: u32,
    pub thumbnail_px: u32,
    /// How long an upload never sent in a message is kept.
    pub unsent: Duration,
}

impl Files {
    /// Checks, stores and answers an uploaded file of `user_id` on `plan`. A document is
    /// answered `processing`, and processed in the background (`documents`).
    pub async fn upload(&self, user_id: &str, plan: &Plan, name: &str, bytes: Vec<u8>) -> Result<FileRow> {
        let kind = match sniff(&bytes) {
            Sniffed::Image => FileKind::Image,
            Sniffed::Document => FileKind::Document,
            Sniffed::Other => return Err(ErrorCode::FileTypeUnsupported.into()),
        };
        entitlements::upload(plan, kind, bytes.len())?;
        let is_image = kind == FileKind::Image;
        let storage = entitlements::storage_bytes(plan);
        let stored = self.db.stored_bytes(user_id).await? as u64;
        // Refused before decoding when nothing more fits; otherwise by what is stored (a
        // re-encoded picture is often much smaller than the one sent).
        let full = || entitlements::storage_full(plan);
        if stored >= storage {
            return Err(full());
        }
        let prepared = if is_image {
            let (max_px, thumb_px) = (self.image_max_px, self.thumbnail_px);
            let image = self
                .images
                .run(move |d| d.attachment(&bytes, max_px, thumb_px))
                .await?;
            Prepared {
                kind: FileKind::Image,
                name: stored_name(
                    name,
                    if image.mime == "image/png" { "png" } else { "jpg" },
                    "image",
                ),
                mime: image.mime.into(),
                width: Some(image.width as i32),
                height: Some(image.height as i32),
                pages: None,
                objects: vec![(false, image.data), (true, image.thumbnail)],
                document: None,
            }
        } else {
            let (format, pages, bytes) = self.documents.open(name, bytes).await?;
            Prepared {
                kind: FileKind::Document,
                name: stored_name(name, format.extension(), "document"),
                mime: format.mime().into(),
                width: None,
                height: None,
                pages: pages.map(|p| p as i32),
                objects: vec![(false, bytes)],
                document: Some(format),
            }
        };
        let size: usize = prepared.objects.iter().map(|(_, o)| o.len()).sum();
        if stored + size as u64 > storage {
            return Err(full());
        }
        let file = FileRow {
            id: uuid::Uuid::now_v7().to_string(),
            user_id: user_id.to_owned(),
            conversation_id: None,
            message_id: None,
            kind: prepared.kind,
            name: prepared.name,
            mime: prepared.mime,
            size: size as i64,
            width: prepared.width,
            height: prepared.height,
            created_at: self.clock.now_ms(),
            status: if prepared.document.is_some() {
                FileStatus::Processing
            } else {
                FileStatus::Ready
            },
            progress: if prepared.document.is_some() { 0 } else { 100 },
            pages: prepared.pages,
            embedding_model: None,
            project_id: None,
        };
        // The row first: objects written after it are never without one. An upload whose
        // objects fail to be written is marked gone, and the sweep takes what was written.
        // The storage limit is checked again as the row goes in: another upload may have
        // taken the room since `stored` was read.
        if !self.db.insert_file_within(&file, storage as i64).await? {
            return Err(full());
        }
        let stored = async {
            for (thumbnail, object) in prepared.objects {
                self.store.put(&file, thumbnail, object).await?;
            }
            Ok::<_, anyhow::Error>(())
        }
        .await;
        if let Err(e) = stored {
            if let Err(e) = self.db.mark_unsent_file_gone(user_id, &file.id).await {
                tracing::warn!(error = ?e, "marking a file that could not be stored as gone");
            }
            self.store.sweep_soon();
            return Err(ApiError::Internal(e));
        }
        if let Some(format) = prepared.document {
            let model = plan.models.embedding_model.clone().unwrap_or_default();
            self.documents.process_later(file.clone(), format, model);
        }
        Ok(file)
    }

    /// Deletes the user's file that was not sent yet (the composer's remove): a sent file
    /// goes with its conversation (`file_in_use`, also when another tab sent it a moment
    /// ago). Its bytes leave the store now rather than at the next sweep. The row it was.
    pub async fn delete_unsent(&self, user_id: &str, id: &str) -> Result<FileRow> {
        let file = self.db.file(user_id, id).await?.ok_or(ErrorCode::NotFound)?;
        if file.message_id.is_some() || !self.db.mark_unsent_file_gone(user_id, id).await? {
            return Err(ErrorCode::FileInUse.into());
        }
        self.store.sweep_soon();
        Ok(file)
    }

    /// Each of `files` as the model receives it, in order; `None` for one that is not an
    /// image or that the store lost. The reads run at once (each may be a round trip to S3).
    pub async fn image_parts(&self, files: &[FileRow]) -> Result<Vec<Option<ImagePart>>> {
        let reads = files.iter().map(|f| async move {
            if f.kind != FileKind::Image {
                return Ok(None);
            }
            let data = self.store.get(f, false).await.map_err(ApiError::Internal)?;
            if data.is_none() {
                tracing::warn!(file = %f.id, "an attached image is missing from the store");
            }
            Ok::<_, ApiError>(data.map(|data| ImagePart {
                name: f.name.clone(),
                mime: f.mime.clone(),
                width: f.width.unwrap_or(0).max(0) as u32,
                height: f.height.unwrap_or(0).max(0) as u32,
                data,
            }))
        });
        futures_util::future::try_join_all(reads).await
    }

    /// Deletes, every [`SWEEP_EVERY`] and whenever woken, the objects and rows of files that
    /// are gone (see `db::files`); at start and every [`FULL_SWEEP_EVERY`] it also looks for
    /// files whose owner went without marking them. Runs until the process ends.
    pub async fn sweep_forever(self: Arc<Self>) {
        let unsent = self.unsent;
        let mut last_full: Option<tokio::time::Instant> = None;
        loop {
            let full = last_full.is_none_or(|at| at.elapsed() >= FULL_SWEEP_EVERY);
            if full {
                last_full = Some(tokio::time::Instant::now());
            }
            loop {
                match self.sweep_once(unsent, full).await {
                    Ok(n) if n as i64 == SWEEP_BATCH => continue,
                    Ok(_) => break,
                    Err(e) => {
                        tracing::warn!(error = ?e, "sweeping deleted files");
                        break;
                    }
                }
            }
            self.store.sweep_asked(SWEEP_EVERY).await;
        }
    }

    /// One pass (`full`: also files no delete marked); answers how many files it removed.
    pub async fn sweep_once(&self, unsent: Duration, full: bool) -> anyhow::Result<usize> {
        let now = self.clock.now_ms();
        self.db
            .mark_unsent_files_gone(now - unsent.as_millis() as i64)
            .await?;
        let stale = documents::STALE_AFTER.as_millis() as i64;
        let failed = self.db.fail_stale_documents(now - stale).await?;
        if !failed.is_empty() {
            tracing::warn!(
                failed = failed.len(),
                "documents whose processing stopped with its instance were marked failed"
            );
        }
        for file in &failed {
            self.documents.tell(file);
        }
        let mut gone = self.db.files_marked_gone(SWEEP_BATCH).await?;
        if full && (gone.len() as i64) < SWEEP_BATCH {
            gone.extend(self.db.files_orphaned(SWEEP_BATCH - gone.len() as i64).await?);
        }
        let mut removed = Vec::with_capacity(gone.len());
        for file in &gone {
            match self.store.delete_objects(file).await {
                Ok(()) => removed.push(file.id.clone()),
                Err(e) => tracing::warn!(error = ?e, file = %file.id, "deleting a file from the store"),
            }
        }
        self.db.delete_file_rows(&removed).await?;
        Ok(removed.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uploads_are_told_apart_by_content() {
        let png = {
            let mut out = std::io::Cursor::new(Vec::new());
            image::RgbImage::new(2, 2)
                .write_to(&mut out, image::ImageFormat::Png)
                .unwrap();
            out.into_inner()
        };
        assert_eq!(sniff(&png), Sniffed::Image);
        assert_eq!(sniff(b"%PDF-1.7 ..."), Sniffed::Document);
        assert_eq!(sniff(b"# Notes\nplain text"), Sniffed::Document);
        // A sample that ends inside a character is still text.
        let cut = format!("a{}", "é".repeat(3000));
        assert!(std::str::from_utf8(&cut.as_bytes()[..4096]).is_err());
        assert_eq!(sniff(cut.as_bytes()), Sniffed::Document);
        assert_eq!(sniff(b"GIF89a\x01\x00\x01\x00\x00\x00\x00;"), Sniffed::Other);
        assert_eq!(sniff(&[0xff, 0x00, 0x12, 0x80]), Sniffed::Other);
    }

    #[test]
    fn a_stored_name_keeps_the_stem_and_says_the_stored_type() {
        assert_eq!(stored_name("holiday.webp", "jpg", "image"), "holiday.jpg");
        assert_eq!(stored_name("C:\\photos\\cat.PNG", "png", "image"), "cat.png");
        assert_eq!(stored_name("../../etc/passwd", "jpg", "image"), "passwd.jpg");
        assert_eq!(stored_name("a\u{0}b\n.jpeg", "jpg", "image"), "ab.jpg");
        assert_eq!(stored_name("", "png", "image"), "image.png");
        assert_eq!(stored_name(".jpg", "jpg", "image"), "image.jpg");
        assert_eq!(stored_name("notes.txt.pdf", "pdf", "document"), "notes.txt.pdf");
        assert_eq!(
            stored_name(&"x".repeat(500), "jpg", "image").chars().count(),
            MAX_NAME_CHARS + 4
        );
    }
}
