//! Documents (PDF, DOCX, TXT, Markdown, CSV) sent as attachments, and what questions
//! learn from them: the [`Documents`] service.
//!
//! - **Upload** (`Files::upload`): [`Documents::open`] checks, while the upload waits,
//!   that the file is a document we can read; a damaged, encrypted or empty one, or one
//!   that takes more memory or time than a document may, is refused and nothing is
//!   stored. Documents are only ever parsed in a reader process of their own, under a
//!   memory limit ([`reader`]).
//! - **Processing**, in the background ([`Documents::process_later`]): the text page by
//!   page, cut into pieces ([`chunks`]), embedded with the plan's `embeddingModel` when
//!   the model endpoint makes embeddings, stored; the file goes from `processing` to
//!   `ready` (or `failed`), and every tab of the user hears `file.updated` along the way.
//! - **Retrieval** ([`Documents::retrieve`]): each question in a conversation with
//!   documents gets the best pieces of them in its prompt (cosine similarity of
//!   embeddings, else BM25), and its answer names them as `sources`.

pub mod chunks;
pub mod extract;
pub mod reader;

use chat_actors::model::{Embedded, ModelError};
use chat_contract::states::{CallOutcome, FileKind, FileStatus, ModelCallKind};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use chat_contract::frames::{DocumentSource, ServerFrame, Source};
use chat_contract::prompt::EXCERPTS_HEADER;
use tokio::sync::Semaphore;

use crate::db::files::{ChunkRow, FileRow};
use crate::db::Db;
use crate::error::{ApiError, ErrorCode, Result};
use crate::files::store::FileStore;
use crate::images::ImageDecoder;
use crate::metering::{text_turn, Call, Meter, Payer, Used};
use crate::realtime::Realtime;
use crate::views::attachment_view;
use extract::{Format, Unreadable};

/// Documents one instance processes at once; the others wait their turn (nobody waits
/// on them: their upload has been answered).
const PROCESSING_AT_ONCE: usize = 2;
/// Pieces embedded in one call.
const EMBED_BATCH: usize = 64;
/// Longest one embeddings call may take.
const EMBED_TIMEOUT: Duration = Duration::from_secs(60);
/// Longest a whole document may take; past it, it fails.
const PROCESS_TIMEOUT: Duration = Duration::from_secs(20 * 60);
/// A document still `processing` this long after its upload was on an instance that
/// stopped: the sweep fails it (longer than [`PROCESS_TIMEOUT`]).
pub const STALE_AFTER: Duration = Duration::from_secs(30 * 60);
/// Most pieces kept of one document ([`extract::MAX_TEXT_CHARS`] in pieces, with overlap).
const MAX_CHUNKS: usize = 2500;
/// Progress is told when it moved by at least this many percent.
const PROGRESS_STEP: i32 = 5;
/// Most pieces ranked for one question (the conversation's documents together).
const MAX_RANKED: i64 = 20_000;
/// Excerpts a prompt carries, at most…
const EXCERPTS: usize = 6;
/// …and at most this many characters of them.
const EXCERPT_CHARS: usize = 6000;
/// How long a question's embedding may take before BM25 ranks instead.
const QUESTION_EMBED_TIMEOUT: Duration = Duration::from_secs(15);

/// What a question learns from its conversation's documents.
#[derive(Debug, Default)]
pub struct Retrieved {
    /// The system turn with the excerpts (starts with [`EXCERPTS_HEADER`]); `None`
    /// without any.
    pub prompt: Option<String>,
    pub sources: Vec<Source>,
}

/// The documents service: the documents this instance is processing, how it reads them,
/// and what processing and retrieval need (the rows, the stored bytes, the decode slots
/// uploads share, the model's embeddings and the user's tabs).
pub struct Documents {
    turns: Arc<Semaphore>,
    reader: reader::Limits,
    db: Db,
    store: Arc<FileStore>,
    images: ImageDecoder,
    realtime: Arc<Realtime>,
    meter: Meter,
}

/// What [`Documents::new`] takes besides the settings.
pub struct Parts {
    pub db: Db,
    pub store: Arc<FileStore>,
    pub images: ImageDecoder,
    pub realtime: Arc<Realtime>,
    pub meter: Meter,
}

impl Documents {
    pub fn new(settings: &crate::config::UploadSettings, parts: Parts) -> anyhow::Result<Documents> {
        Ok(Documents {
            turns: Arc::new(Semaphore::new(PROCESSING_AT_ONCE)),
            reader: reader::Limits::new(&settings.document_reader, settings.document_max_memory_mb)?,
            db: parts.db,
            store: parts.store,
            images: parts.images,
            realtime: parts.realtime,
            meter: parts.meter,
        })
    }

    /// Checks that an uploaded document can be read (in one of the decode slots images use,
    /// so an upload flood is refused with `server_busy` rather than queued): its format, its
    /// page count, and the bytes back to be stored.
    pub async fn open(&self, name: &str, bytes: Vec<u8>) -> Result<(Format, Option<u32>, Vec<u8>)> {
        let format = extract::detect(&bytes, name).ok_or(ErrorCode::FileTypeUnsupported)?;
        let _slot = self.images.reserve()?;
        let (opened, bytes) = self.reader.check(bytes, format).await;
        Ok((format, opened.map_err(unreadable)?, bytes))
    }

    /// Processes `file` (stored, `processing`) in the background: see the module's doc.
    pub fn process_later(self: &Arc<Self>, file: FileRow, format: Format, embedding_model: String) {
        let this = self.clone();
        actix_web::rt::spawn(async move {
            let Ok(_turn) = this.turns.clone().acquire_owned().await else {
                return;
            };
            let mut file = file;
            let processed =
                tokio::time::timeout(PROCESS_TIMEOUT, this.process(&mut file, format, &embedding_model))
                    .await
                    .unwrap_or_else(|_| {
                        Err(anyhow::anyhow!("processing took longer than {PROCESS_TIMEOUT:?}"))
                    });
            match processed {
                Ok(true) => {
                    file.status = FileStatus::Ready;
                    file.progress = 100;
                }
                // Deleted (or failed as stale) meanwhile: nothing to tell.
                Ok(false) => return,
                Err(e) => {
                    tracing::warn!(error = ?e, file = %file.id, "processing a document failed");
                    if let Err(e) = this.db.fail_document(&file.id).await {
                        tracing::error!(error = ?e, file = %file.id, "marking a document failed");
                    }
                    file.status = FileStatus::Failed;
                }
            }
            this.tell(&file);
        });
    }

    /// Tells every tab of the file's owner how the file now is (`file.updated`).
    pub fn tell(&self, file: &FileRow) {
        let frame = ServerFrame::FileUpdated {
            file: attachment_view(file),
        };
        self.realtime.publish(&file.user_id, &frame);
    }

    /// Records and tells `percent` when it moved by a [`PROGRESS_STEP`] since last told.
    async fn progress(&self, file: &mut FileRow, percent: i32) {
        if percent < file.progress + PROGRESS_STEP || percent >= 100 {
            return;
        }
        file.progress = percent;
        if let Err(e) = self.db.set_file_progress(&file.id, percent).await {
            tracing::warn!(error = ?e, file = %file.id, "recording a document's progress");
        }
        self.tell(file);
    }

    /// Reads, cuts, embeds and stores a document; `false` when it was deleted meanwhile.
    /// Reading is the first half of the progress, embedding the second.
    async fn process(
        &self,
        file: &mut FileRow,
        format: Format,
        embedding_model: &str,
    ) -> anyhow::Result<bool> {
        // Read back from the store: a document waiting for its turn holds no memory.
        let Some(bytes) = self.store.get(file, false).await? else {
            // Deleted before its turn: its object went with it.
            return Ok(false);
        };
        let (share_tx, mut share_rx) = tokio::sync::watch::channel(0f32);
        let reader = self.reader.clone();
        let mut reading = actix_web::rt::spawn(async move {
            reader
                .pages(bytes.to_vec(), format, |share| {
                    share_tx.send_replace(share);
                })
                .await
        });
        let pages = loop {
            tokio::select! {
                read = &mut reading => break read??,
                Ok(()) = share_rx.changed() => {
                    let share = *share_rx.borrow_and_update();
                    self.progress(file, (share * 50.0) as i32).await;
                }
            }
        };
        // Told even when the reading ended before its last share was heard.
        self.progress(file, 50).await;
        let mut pieces = chunks::chunk(pages, format == Format::Csv);
        pieces.truncate(MAX_CHUNKS);

        let mut embeddings: Option<Vec<Vec<f32>>> = Some(Vec::with_capacity(pieces.len()));
        let payer = Payer {
            user_id: file.user_id.clone(),
            message_id: None,
        };
        for (i, batch) in pieces.chunks(EMBED_BATCH).enumerate() {
            let texts: Vec<String> = batch.iter().map(|c| c.text.clone()).collect();
            let made = tokio::time::timeout(
                EMBED_TIMEOUT,
                self.realtime.provider.embed(embedding_model, texts.clone()),
            )
            .await;
            self.record_embedding(&payer, embedding_model, texts, &made);
            match made {
                Ok(Ok(Some(made))) => {
                    if let Some(all) = embeddings.as_mut() {
                        all.extend(made.vectors);
                    }
                }
                // The provider makes none: BM25 ranks this document.
                Ok(Ok(None)) => {
                    embeddings = None;
                    break;
                }
                // A failed or slow endpoint costs the document its embeddings, not its use.
                failed => {
                    let error = match failed {
                        Ok(Err(e)) => e.to_string(),
                        _ => "timed out".into(),
                    };
                    tracing::warn!(error, file = %file.id, "embedding a document failed; BM25 will rank it");
                    embeddings = None;
                    break;
                }
            }
            let done = ((i + 1) * EMBED_BATCH).min(pieces.len());
            self.progress(file, 50 + (done * 50 / pieces.len()) as i32).await;
        }
        let embedded = embeddings.is_some();
        let mut vectors = embeddings.unwrap_or_default().into_iter();
        let rows: Vec<ChunkRow> = pieces
            .into_iter()
            .enumerate()
            .map(|(seq, c)| ChunkRow {
                file_id: file.id.clone(),
                seq: seq as i32,
                page: c.page.map(|p| p as i32),
                text: c.text,
                embedding: vectors.next().map(|v| chunks::to_blob(&v)),
            })
            .collect();
        let model = embedded.then_some(embedding_model);
        self.db.insert_chunks(&rows).await?;
        if !self.db.finish_document(&file.id, model).await? {
            // Deleted meanwhile: the sweep may have taken its row before these pieces came.
            self.db.delete_chunks(&file.id).await?;
            return Ok(false);
        }
        file.embedding_model = model.map(str::to_owned);
        Ok(true)
    }

    /// Records an embedding call, unless the provider makes none (nothing was asked).
    /// One that failed or ran out of time is recorded with what it was sent.
    fn record_embedding(
        &self,
        payer: &Payer,
        model: &str,
        texts: Vec<String>,
        made: &std::result::Result<
            std::result::Result<Option<Embedded>, ModelError>,
            tokio::time::error::Elapsed,
        >,
    ) {
        let (said, outcome) = match made {
            Ok(Ok(None)) => return,
            Ok(Ok(Some(made))) => (made.input_tokens, CallOutcome::Complete),
            Ok(Err(_)) => (None, CallOutcome::Error),
            Err(_) => (None, CallOutcome::Cancelled),
        };
        let said = said.map(|input_tokens| chat_actors::model::Usage {
            input_tokens,
            output_tokens: 0,
        });
        let call = Call {
            kind: ModelCallKind::Embedding,
            model: model.to_owned(),
            used: Used::said_or_count(said, || texts.into_iter().map(text_turn).collect(), ""),
            images: 0,
            outcome,
        };
        self.meter.record(payer, call);
    }

    /// The excerpts of `documents` (a conversation's, any state) that best answer
    /// `question`. When no piece matches (a document sent without a question, or a question
    /// sharing no word with them), the beginning of the documents sent with this question
    /// (`fresh`) stands in.
    pub async fn retrieve(
        &self,
        documents: &[FileRow],
        fresh: &[String],
        question: &str,
        payer: &Payer,
    ) -> Result<Retrieved> {
        let ready: Vec<&FileRow> = documents
            .iter()
            .filter(|f| f.kind == FileKind::Document && f.status == FileStatus::Ready)
            .collect();
        if ready.is_empty() {
            return Ok(Retrieved::default());
        }
        let ids: Vec<String> = ready.iter().map(|f| f.id.clone()).collect();
        let pieces = self.db.chunks_of(&ids, MAX_RANKED).await?;
        let mut ranked = self.rank(&ready, &pieces, question, payer).await;
        if ranked.is_empty() {
            ranked = pieces
                .iter()
                .enumerate()
                .filter(|(_, c)| fresh.contains(&c.file_id))
                .map(|(i, _)| i)
                .take(EXCERPTS / 2)
                .collect();
        }
        let mut prompt = format!(
            "{EXCERPTS_HEADER} Use them to answer the user's next message when they help, and say which \
         document (and page) what you use comes from."
        );
        let mut sources: Vec<Source> = Vec::new();
        let mut used = 0;
        for (n, i) in ranked.into_iter().take(EXCERPTS).enumerate() {
            let piece = &pieces[i];
            if n > 0 && used + piece.text.len() > EXCERPT_CHARS {
                break;
            }
            used += piece.text.len();
            let name = ready
                .iter()
                .find(|f| f.id == piece.file_id)
                .map_or("", |f| f.name.as_str());
            let page = piece.page.map(|p| p.max(0) as u32);
            let label = match page {
                Some(p) => format!("{name}, page {p}"),
                None => name.to_owned(),
            };
            prompt.push_str(&format!("\n\n[{}] {label}\n{}", n + 1, piece.text));
            let source = Source::Document(DocumentSource {
                file_id: piece.file_id.clone(),
                name: name.to_owned(),
                page,
            });
            if !sources.contains(&source) {
                sources.push(source);
            }
        }
        Ok(Retrieved {
            prompt: (!sources.is_empty()).then_some(prompt),
            sources,
        })
    }

    /// The indexes of the pieces that best answer `question`, best first: by their
    /// embeddings when every document was embedded by one model and the question can be
    /// too, else by BM25.
    async fn rank(
        &self,
        documents: &[&FileRow],
        pieces: &[ChunkRow],
        question: &str,
        payer: &Payer,
    ) -> Vec<usize> {
        if question.trim().is_empty() || pieces.is_empty() {
            return Vec::new();
        }
        let models: HashSet<Option<&str>> = documents.iter().map(|f| f.embedding_model.as_deref()).collect();
        let embedded = pieces.iter().all(|c| c.embedding.is_some());
        if let (1, Some(Some(model)), true) = (models.len(), models.iter().next(), embedded) {
            let asked = tokio::time::timeout(
                QUESTION_EMBED_TIMEOUT,
                self.realtime.provider.embed(model, vec![question.to_owned()]),
            )
            .await;
            self.record_embedding(payer, model, vec![question.to_owned()], &asked);
            match asked {
                Ok(Ok(Some(Embedded { mut vectors, .. }))) if vectors.len() == 1 => {
                    let question = vectors.remove(0);
                    let vectors: Vec<Vec<f32>> = pieces
                        .iter()
                        .map(|c| chunks::from_blob(c.embedding.as_deref().unwrap_or_default()))
                        .collect();
                    let refs: Vec<&[f32]> = vectors.iter().map(Vec::as_slice).collect();
                    return chunks::rank_cosine(&question, &refs, EXCERPTS);
                }
                other => {
                    tracing::warn!(answer = ?other.map(|r| r.map(|v| v.map(|v| v.vectors.len()))), "embedding a question failed; BM25 ranks");
                }
            }
        }
        let texts: Vec<String> = pieces.iter().map(|c| c.text.clone()).collect();
        let question = question.to_owned();
        // BM25 over thousands of pieces is CPU work: off the async workers.
        let ranked = actix_web::rt::task::spawn_blocking(move || {
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            chunks::rank_bm25(&question, &refs, EXCERPTS)
        })
        .await;
        ranked.unwrap_or_default()
    }
}

fn unreadable(e: Unreadable) -> ApiError {
    match e {
        Unreadable::Unsupported => ErrorCode::FileTypeUnsupported.into(),
        e => {
            tracing::debug!(error = %e, "refusing a document");
            ErrorCode::FileUnreadable.into()
        }
    }
}
