//! An answer: the exchange stored in one transaction and announced, the model's stream
//! handed to a generation actor on the user's shard, and what happens when it ends
//! (stored, refunded if it ended before the model was asked or failed before its first
//! delta, titled).

use chat_contract::states::{
    CallOutcome, FileKind, FileStatus, FinishReason, MessageRole, MessageStatus, ModelCallKind,
};
use std::sync::Arc;
use std::time::Duration;

use chat_actors::generation::{Limits, Outcome, Reply, Start};
use chat_actors::model::{ModelError, ModelRequest, Turn, UsageNote};
use chat_actors::quota::Counted;
use chat_contract::frames::{ChatSend, ServerFrame, Source, WebSource};
use futures_util::StreamExt;
use tokio::sync::oneshot;

use crate::chat::checked::{mode_of, Checked, Place};
use crate::chat::reservation::Reservation;
use crate::chat::Chat;
use crate::chat::{context, prompt};
use crate::db::conversations::{ConversationRow, MessageRow};
use crate::db::files::FileRow;
use crate::db::projects::ProjectRow;
use crate::db::users::UserRow;
use crate::error::{ApiError, ErrorCode};
use crate::i18n::Lang;
use crate::metering::{outcome_of, Call, Payer, Used};
use crate::plans::PlanType;
use crate::search::{Engine, Search};
use crate::views::{conversation_view, message_view, message_with_files};

/// How long a title may take before the conversation is named by its first words.
const TITLE_TIMEOUT: Duration = Duration::from_secs(20);

/// Stores the question and an empty answer, announces them, and starts streaming. On
/// any failure the reservation is given back. The steps: the [`Exchange`] is stored and
/// its announcement made ready, then the answer's prompt read ([`read_prompt`]), then its [`stream`]
/// handed to a generation, whose end [`Finished::settle`]s it; each step gets from the
/// one before what it needs.
pub async fn start(
    chat: &Arc<Chat>,
    checked: Checked,
    conversation_id: String,
    send: ChatSend,
    reservation: Reservation,
    counted: Counted,
) -> Result<(), ApiError> {
    let user = &checked.account.user;
    let now = chat.now();
    let conversation = match checked.existing {
        Some(c) => (c, false),
        None => {
            let project = checked.project.as_ref();
            let c = new_conversation(conversation_id, &user.id, checked.model, &send, project, now);
            (c, true)
        }
    };
    let (content, model_used) = (&checked.content, checked.model_used);
    let mut exchange = Exchange::new(conversation, checked.place, &send, content, &model_used, now);
    if let Err(e) = exchange.store(chat, checked.files).await {
        reservation.cancel().await;
        return Err(e);
    }
    let mut intro = exchange.intro(chat, &send.client_id).await;
    let plan = checked.account.plan;
    intro.push(chat.announce.counted_usage_frame(plan, &counted.usage));
    let asking = Asking {
        user,
        exchange: &exchange,
        project: checked.project.as_ref(),
    };
    let prompt = match read_prompt(chat, asking, model_used).await {
        Ok(prompt) => prompt,
        Err(e) => {
            for frame in &intro {
                chat.realtime.publish(&user.id, frame);
            }
            fail_before_streaming(chat, &user.id, &exchange.conversation, &exchange.answer).await;
            reservation.cancel().await;
            return Err(e);
        }
    };
    let engine = checked.engine.as_ref();
    let how = how_of(
        chat,
        &exchange,
        engine,
        plan,
        &send,
        &prompt.history,
        &reservation,
    );
    let (stream, streamed) = stream(chat, prompt.request, prompt.window, how);
    let done = Finished {
        chat: chat.clone(),
        user_id: user.id.clone(),
        lang: user.language,
        conversation: exchange.conversation.clone(),
        answer: exchange.answer.clone(),
        title_from: exchange.title_from(),
        documents: prompt.sources,
        model_searches: matches!(engine, Some(Engine::Model)),
        streamed,
        reservation,
    };
    hand_over(chat, &exchange, stream, intro, done).await
}

/// Hands the answer's stream to a generation on the user's shard, which sends `intro`
/// ahead of its first delta and settles the answer (`done`) at its end.
async fn hand_over(
    chat: &Chat,
    exchange: &Exchange,
    stream: Reply,
    intro: Vec<ServerFrame>,
    done: Finished,
) -> Result<(), ApiError> {
    let user_id = &exchange.conversation.user_id;
    let started = chat.realtime.generations.start(Start {
        user: user_id.clone(),
        conversation_id: exchange.conversation.id.clone(),
        message_id: exchange.answer.id.clone(),
        model: (exchange.answer.model.clone())
            .unwrap_or_else(|| chat_actors::metrics::UNKNOWN_MODEL.to_owned()),
        stream,
        intro,
        batch: Duration::from_millis(chat.settings.chat.batch_ms.max(1)),
        timestamps: chat.settings.chat.frame_timestamps,
        on_done: Box::new(move |outcome| Box::pin(done.settle(outcome))),
    });
    let Err(refused) = started else {
        return Ok(());
    };
    // Another tab of this instance started an answer here at the same moment (only
    // possible without Redis, whose claim would have refused this send): end this one as
    // failed before its first delta, which gives everything back.
    for frame in &refused.intro {
        chat.realtime.publish(user_id, frame);
    }
    let never = Outcome {
        content: String::new(),
        finish: FinishReason::Error,
        error: None,
        seq: 0,
        asked: false,
    };
    (refused.on_done)(never).await;
    Err(ErrorCode::GenerationInProgress.into())
}

/// How the answer is made: a search by our providers first, an image, or the model
/// alone (which may be the plan's search model, searching by itself).
fn how_of(
    chat: &Chat,
    exchange: &Exchange,
    engine: Option<&Engine>,
    plan: PlanType,
    send: &ChatSend,
    history: &[MessageRow],
    reservation: &Reservation,
) -> How {
    let question = exchange.question.content.clone();
    match engine {
        Some(Engine::Provider(provider)) => {
            let models = &chat.catalogue.plan(plan).models;
            How::Search(Search {
                provider: provider.clone(),
                deep: send.deep_search,
                user_id: exchange.conversation.user_id.clone(),
                conversation_id: exchange.conversation.id.clone(),
                message_id: exchange.answer.id.clone(),
                question,
                context: conversation_text(history),
                preprocessing_model: models.web_preprocessing_model.clone().unwrap_or_default(),
                content_model: models.web_content_processing_model.clone().unwrap_or_default(),
                budget: reservation.searches(),
                used: reservation.searches_made.clone(),
            })
        }
        _ if send.image_generation => How::Image {
            owner: image_owner(exchange),
            prompt: question,
        },
        _ => How::Model,
    }
}

/// A conversation a send starts (its id chosen before the send was counted).
fn new_conversation(
    id: String,
    user_id: &str,
    model: String,
    send: &ChatSend,
    project: Option<&ProjectRow>,
    now: i64,
) -> ConversationRow {
    ConversationRow {
        id,
        user_id: user_id.to_owned(),
        title: None,
        model,
        web_search: send.web_search,
        created_at: now,
        // The answer's time: it is the conversation's last message.
        updated_at: now + 1,
        project_id: project.map(|p| p.id.clone()),
        current_message_id: None,
        pinned: false,
        archived: false,
    }
}

/// The question (and whether it is new: a regenerate answers its stored question again)
/// and the empty answer of a send, one millisecond after it.
fn messages_of(
    conversation_id: &str,
    place: Place,
    send: &ChatSend,
    content: &str,
    model_used: &str,
    now: i64,
) -> (MessageRow, bool, MessageRow) {
    let message = |role, content: String, status, model: Option<String>, at: i64| MessageRow {
        id: uuid::Uuid::now_v7().to_string(),
        conversation_id: conversation_id.to_owned(),
        role,
        content,
        status,
        model,
        client_id: Some(send.client_id.clone()),
        finish_reason: None,
        created_at: at,
        sources: None,
        parent_id: None,
        mode: None,
        feedback_rating: None,
        feedback_comment: None,
    };
    let (question, asked) = match place {
        Place::Again(question) => (*question, false),
        Place::After(parent_id) => {
            let question = MessageRow {
                parent_id,
                mode: mode_of(send).map(str::to_owned),
                ..message(
                    MessageRole::User,
                    content.to_owned(),
                    MessageStatus::Complete,
                    None,
                    now,
                )
            };
            (question, true)
        }
    };
    let answer = MessageRow {
        parent_id: Some(question.id.clone()),
        ..message(
            MessageRole::Assistant,
            String::new(),
            MessageStatus::Streaming,
            Some(model_used.to_owned()),
            now + 1,
        )
    };
    (question, asked, answer)
}

/// What one send stores: its conversation (new or not), its question (new, or the stored
/// one answered again) and the empty answer.
struct Exchange {
    conversation: ConversationRow,
    is_new: bool,
    question: MessageRow,
    /// The question is new (stored with this exchange).
    asked: bool,
    answer: MessageRow,
    /// The question's files, once stored.
    files: Vec<FileRow>,
}

impl Exchange {
    /// The exchange of a send in `conversation` (and whether it is new), with its
    /// question at `place`; the answer becomes the conversation's current message.
    fn new(
        conversation: (ConversationRow, bool),
        place: Place,
        send: &ChatSend,
        content: &str,
        model_used: &str,
        now: i64,
    ) -> Exchange {
        let (mut conversation, is_new) = conversation;
        let (question, asked, answer) = messages_of(&conversation.id, place, send, content, model_used, now);
        conversation.current_message_id = Some(answer.id.clone());
        Exchange {
            conversation,
            is_new,
            question,
            asked,
            answer,
            files: Vec::new(),
        }
    }

    /// Stores the exchange in one transaction, and `files` as the question's.
    async fn store(&mut self, chat: &Chat, files: Vec<FileRow>) -> Result<(), ApiError> {
        // All or nothing: a failure (the database going away) never leaves a question
        // without its answer, or an empty new conversation. A question answered again
        // has its files already.
        let file_ids: Vec<String> = match self.asked {
            true => files.iter().map(|f| f.id.clone()).collect(),
            false => Vec::new(),
        };
        let stored = chat
            .db
            .insert_exchange(
                self.is_new.then_some(&self.conversation),
                self.asked.then_some(&self.question),
                &self.answer,
                &self.conversation.user_id,
                &file_ids,
            )
            .await;
        if let Err(e) = stored {
            return Err(match e {
                // A file was sent by another tab since the checks.
                sqlx::Error::RowNotFound => ErrorCode::FileInUse.into(),
                e => e.into(),
            });
        }
        self.files = files
            .into_iter()
            .map(|f| FileRow {
                message_id: Some(self.question.id.clone()),
                conversation_id: Some(self.conversation.id.clone()),
                ..f
            })
            .collect();
        Ok(())
    }

    /// The frames that tell the tabs of the exchange: sent by the generation, ahead of
    /// its first delta (the counters' frame is added by the caller).
    async fn intro(&self, chat: &Chat, client_id: &str) -> Vec<ServerFrame> {
        let conversation = &self.conversation;
        let user_id = &conversation.user_id;
        let mut intro = Vec::with_capacity(4);
        if self.is_new {
            intro.push(ServerFrame::ConversationCreated {
                client_id: client_id.to_owned(),
                conversation: conversation_view(conversation),
            });
            // A conversation started in a project: its count grew.
            if let Some(project) = &conversation.project_id {
                if let Ok(Some(project)) = chat.db.project(user_id, project).await {
                    intro.push(ServerFrame::ProjectUpdated {
                        project: crate::views::project_view(&project),
                    });
                }
            }
        }
        // An answer's `message.created` makes it the conversation's current message.
        for m in self
            .asked
            .then_some(&self.question)
            .into_iter()
            .chain([&self.answer])
        {
            intro.push(ServerFrame::MessageCreated {
                conversation_id: conversation.id.clone(),
                client_id: Some(client_id.to_owned()),
                message: message_with_files(m, &self.files),
            });
        }
        intro
    }

    /// What a new conversation is titled from once answered: its first message, or the
    /// first image's name for a message of images alone.
    fn title_from(&self) -> Option<String> {
        let content = &self.question.content;
        self.conversation
            .title
            .is_none()
            .then(|| match self.files.first() {
                Some(f) if content.is_empty() => f
                    .name
                    .rsplit_once('.')
                    .map_or(f.name.clone(), |(stem, _)| stem.to_owned()),
                _ => content.clone(),
            })
    }
}

/// What the prompt of an answer is read from.
struct Asking<'a> {
    user: &'a UserRow,
    exchange: &'a Exchange,
    project: Option<&'a ProjectRow>,
}

/// What the model is asked, and what the later steps need of how it was made.
struct Prompt {
    request: ModelRequest,
    window: context::Window,
    /// The conversation up to the question (for a search's planning model).
    history: Vec<MessageRow>,
    /// The documents the prompt has excerpts of.
    sources: Vec<Source>,
}

/// The prompt step: the history, its images and the documents' excerpts, fitted to the
/// window of `model_used`.
async fn read_prompt(chat: &Chat, asking: Asking<'_>, model_used: String) -> Result<Prompt, ApiError> {
    let Asking {
        user,
        exchange,
        project,
    } = asking;
    let (conversation, question, files) = (&exchange.conversation, &exchange.question, &exchange.files);
    if let Some(relay) = &chat.realtime.relay {
        // Other instances see the answer as streaming before its first delta.
        relay
            .start_live(&user.id, &conversation.id, &exchange.answer.id)
            .await?;
    }
    // A new conversation's history is its question: nothing to read back.
    let keep = chat.settings.chat.history_messages.max(1);
    let (history, history_files) = if exchange.is_new {
        (vec![question.clone()], files.to_vec())
    } else {
        let history = chat
            .db
            .recent_messages(&conversation.id, &question.id, keep as i64)
            .await?;
        // Only a history with attachments, or a conversation with documents, reads
        // files: a text conversation makes one read. Other versions' files are not
        // the model's to see.
        let files = if history.has_documents || history.messages.iter().any(|(_, files)| *files > 0) {
            chat.db.files_of_branch(&conversation.id, &question.id).await?
        } else {
            Vec::new()
        };
        (history.messages.into_iter().map(|(m, _)| m).collect(), files)
    };
    let images = prompt::images_of(chat, &history, &history_files).await?;
    let fresh: Vec<String> = files.iter().map(|f| f.id.clone()).collect();
    // A project's documents are read like the conversation's own.
    let readable = match project {
        Some(p) => {
            let mut all = history_files.clone();
            all.extend(chat.db.files_of_project(&p.id).await?);
            all
        }
        None => history_files.clone(),
    };
    let retrieved = chat
        .files
        .documents
        .retrieve(&readable, &fresh, &question.content, &payer_of(exchange))
        .await?;
    let settings = &chat.settings.model;
    let mut messages = prompt::turns(user, &history, images, retrieved.prompt);
    if let Some(instructions) = project.and_then(prompt::project_instructions) {
        // Right after the service's own system turn: the user's standing orders.
        messages.insert(1, instructions);
    }
    // The answer's limit is part of the window: at most half of a small one.
    let window = chat.context_sizes.window(&model_used, settings.max_tokens);
    let request = ModelRequest {
        model: model_used,
        messages: context::fit(messages, window).await?,
        max_tokens: (settings.max_tokens > 0).then_some(window.answer as u32),
        usage: UsageNote::default(),
    };
    Ok(Prompt {
        request,
        window,
        history,
        sources: retrieved.sources,
    })
}

/// How an answer is made.
enum How {
    /// The model answers the prompt.
    Model,
    /// The images API makes a picture from the message, stored as `owner`'s.
    Image { owner: FileRow, prompt: String },
    /// The web is searched first, and the model answers from its notes.
    Search(Search),
}

/// What the stream step hands to the settle step, read once the answer ended: each part
/// is written once, by the stream, before its answer's text.
struct Streamed {
    /// The pages a search gave the model excerpts of, in the order it cites them.
    web_sources: Option<oneshot::Receiver<Vec<WebSource>>>,
    /// The image the answer made.
    made: Option<oneshot::Receiver<FileRow>>,
    /// The answer's model call, as metered when it ends.
    call: AnswerCall,
}

/// What is known of an answer's model call before it ends: the rest comes from how it
/// ended.
struct AnswerCall {
    kind: ModelCallKind,
    model: String,
    /// What the provider says the answer used, once its stream tells.
    usage: UsageNote,
    /// The prompt, counted by us when the provider does not tell (a cut-off stream).
    /// Before a search's results: those are not counted then.
    prompt: Vec<Turn>,
}

impl AnswerCall {
    /// The call, as the answer ended: `images` made.
    fn ended(self, outcome: &Outcome, images: usize) -> Call {
        let used = match self.kind {
            ModelCallKind::Image => Used::Said(Default::default()),
            _ => Used::said_or_count(self.usage.get(), || self.prompt, &outcome.content),
        };
        Call {
            kind: self.kind,
            model: self.model,
            used,
            images: images as u64,
            outcome: outcome_of(outcome.finish),
        }
    }
}

/// The stream step: where the answer's text comes from (the generation polls it, under
/// the model's time limits, and notes when the model is asked), and what settling it
/// needs to know.
fn stream(chat: &Arc<Chat>, request: ModelRequest, window: context::Window, how: How) -> (Reply, Streamed) {
    let settings = &chat.settings.model;
    let limits = Limits {
        per_chunk: Duration::from_secs(settings.timeout_secs.max(1)),
        total: Duration::from_secs(settings.total_timeout_secs.max(1)),
    };
    let image = matches!(how, How::Image { .. });
    let mut streamed = Streamed {
        web_sources: None,
        made: None,
        call: AnswerCall {
            kind: if image {
                ModelCallKind::Image
            } else {
                ModelCallKind::Answer
            },
            model: request.model.clone(),
            usage: request.usage.clone(),
            // An image is priced by the image; its prompt is not counted.
            prompt: if image {
                Vec::new()
            } else {
                request.messages.clone()
            },
        },
    };
    let reply = match how {
        How::Model => Reply::Model(chat.realtime.provider.stream(request), limits),
        How::Image { owner, prompt } => {
            let (made, made_rx) = oneshot::channel();
            streamed.made = Some(made_rx);
            let (chat, model) = (chat.clone(), request.model);
            // One chunk, once the image is stored: an answer with text has its image.
            let made_image = futures_util::stream::once(async move {
                let (file, said) = chat.imagegen.make(&model, &prompt, &owner, limits.total).await?;
                let _ = made.send(file);
                Ok(said)
            })
            .boxed();
            Reply::SelfLimited(made_image)
        }
        // The search runs inside the answer's stream: its steps reach the tabs after the
        // exchange is announced, and a cancel drops it where it is.
        How::Search(search) => {
            let (found_sources, web_rx) = oneshot::channel();
            streamed.web_sources = Some(web_rx);
            let chat = chat.clone();
            let searched = async move {
                // Every step is bounded; this bounds them all (a model that answers each
                // step just in time): past it, the answer is written without web results.
                let found = tokio::time::timeout(limits.total, search.run(&chat.search))
                    .await
                    .unwrap_or_else(|_| {
                        tracing::warn!("a web search ran out of time; answering without it");
                        Default::default()
                    });
                let request = with_results(request, found.prompt, window).await?;
                let _ = found_sources.send(found.sources);
                Ok(chat.realtime.provider.stream(request))
            };
            Reply::ModelAfter(Box::pin(searched), limits)
        }
    };
    (reply, streamed)
}

/// `request` with a search's results (if it found any) just before the question, like
/// document excerpts, fitted again: the results take room, the history may have to give
/// more.
async fn with_results(
    mut request: ModelRequest,
    results: Option<String>,
    window: context::Window,
) -> Result<ModelRequest, ModelError> {
    let Some(results) = results else {
        return Ok(request);
    };
    let at = request.messages.len().saturating_sub(1);
    request.messages.insert(
        at,
        Turn {
            role: "system",
            content: results,
            images: Vec::new(),
        },
    );
    match context::fit(std::mem::take(&mut request.messages), window).await {
        Ok(fitted) => request.messages = fitted,
        Err(e) => return Err(ModelError::Upstream(format!("{e:#}"))),
    }
    Ok(request)
}

/// Whom the answer's model calls are for.
fn payer_of(exchange: &Exchange) -> Payer {
    Payer {
        user_id: exchange.conversation.user_id.clone(),
        message_id: Some(exchange.answer.id.clone()),
    }
}

/// The files row of an image the answer makes (its id, name and bytes come with it).
fn image_owner(exchange: &Exchange) -> FileRow {
    FileRow {
        id: String::new(),
        user_id: exchange.conversation.user_id.clone(),
        conversation_id: Some(exchange.conversation.id.clone()),
        message_id: Some(exchange.answer.id.clone()),
        kind: FileKind::Image,
        name: String::new(),
        mime: String::new(),
        size: 0,
        width: None,
        height: None,
        created_at: 0,
        status: FileStatus::Ready,
        progress: 100,
        pages: None,
        embedding_model: None,
        project_id: None,
    }
}

/// Tabs were told an answer is coming: tell them it will not.
async fn fail_before_streaming(
    chat: &Chat,
    user_id: &str,
    conversation: &ConversationRow,
    answer: &MessageRow,
) {
    let now = chat.now();
    let finished = chat
        .db
        .finish_message(
            &answer.id,
            "",
            MessageStatus::Error,
            FinishReason::Error,
            None,
            now,
        )
        .await;
    if let Err(e) = finished {
        tracing::error!(error = ?e, "marking an answer that never started as failed");
    }
    let mut failed = answer.clone();
    failed.status = MessageStatus::Error;
    let frame = ServerFrame::MessageCompleted {
        conversation_id: conversation.id.clone(),
        message: message_view(&failed),
        finish_reason: FinishReason::Error,
    };
    chat.realtime.publish(user_id, &frame);
}

/// What to do when an answer ends.
struct Finished {
    chat: Arc<Chat>,
    user_id: String,
    lang: Lang,
    conversation: ConversationRow,
    answer: MessageRow,
    /// The first message, when the conversation still needs a title.
    title_from: Option<String>,
    /// The documents the answer was given excerpts of.
    documents: Vec<Source>,
    /// The plan's search model searched by itself: its links are the sources.
    model_searches: bool,
    /// What the stream noted: the pages of a search, the image made.
    streamed: Streamed,
    reservation: Reservation,
}

impl Finished {
    /// The settle step: stores the answer's end, gives back what it did not use, and
    /// tells the tabs.
    async fn settle(self, outcome: Outcome) {
        let Finished {
            chat,
            user_id,
            lang,
            conversation,
            answer,
            title_from,
            documents,
            model_searches,
            streamed,
            reservation,
        } = self;
        // An answer gives its units back only when the user got nothing and nobody was
        // billed for it: a failure (ours or the model's) before the first delta, or a
        // cancel before the model was asked. Once asked, the provider bills the prompt
        // (the whole history), so a cancel counts even before the first word, or sending
        // long questions and cancelling them would make model calls free. An answer our
        // own shutdown interrupted is given back: no user can cause that.
        let refund = match outcome.finish {
            FinishReason::Stop => false,
            FinishReason::Interrupted => true,
            FinishReason::Cancelled => outcome.seq == 0 && !outcome.asked,
            FinishReason::Error => outcome.seq == 0,
        };
        // Sent before the answer's text, so there by now if the stream got that far.
        let made: Vec<FileRow> = streamed
            .made
            .and_then(|mut m| m.try_recv().ok())
            .into_iter()
            .collect();
        let web = streamed
            .web_sources
            .and_then(|mut w| w.try_recv().ok())
            .unwrap_or_default();
        // Web sources first, in the order the answer cites them; documents after.
        let mut sources: Vec<Source> = web.into_iter().map(Source::Web).chain(documents).collect();
        if model_searches && outcome.seq > 0 {
            // The search model searched once it answered.
            reservation.all_searches_made();
            let linked = links_of(&outcome.content).into_iter().map(Source::Web);
            sources = linked.chain(sources).collect();
        }
        let gives_back = reservation.gives_back(refund);
        // Once asked, the provider bills it, whatever the answer's end.
        let metered = outcome.asked.then(|| streamed.call.ended(&outcome, made.len()));
        let ended = Ended {
            chat: &chat,
            user_id: &user_id,
            lang,
            conversation: &conversation,
            answer: &answer,
            title_from: title_from.as_deref(),
            sources,
            made,
        };
        // The text first, across a database restart: the units and the slot are in
        // Redis, which may be slow or away meanwhile.
        let (message, stored) = ended.store(&outcome).await;
        if let Some(relay) = &chat.realtime.relay {
            // Stored (or given up): no other instance is to take it over now.
            relay.settled(&conversation.id);
        }
        let settled = reservation.settle(refund).await;
        let told = ended.tell(message, outcome, gives_back && settled.is_ok()).await;
        if let Some(call) = metered {
            let payer = Payer {
                user_id: user_id.clone(),
                message_id: Some(answer.id.clone()),
            };
            chat.meter.record(&payer, call);
        }
        for e in [stored.err(), settled.err(), told.err()].into_iter().flatten() {
            tracing::error!(error = %format!("{e:#}"), conversation = %conversation.id, "finishing an answer");
        }
    }
}

/// How long an answer's end is tried while the database is away (its instance keeps its
/// lease meanwhile, so no other takes it over).
pub(crate) const STORE_FOR: Duration = Duration::from_secs(30);

struct Ended<'a> {
    chat: &'a Chat,
    user_id: &'a str,
    lang: Lang,
    conversation: &'a ConversationRow,
    answer: &'a MessageRow,
    title_from: Option<&'a str>,
    sources: Vec<Source>,
    made: Vec<FileRow>,
}

impl Ended<'_> {
    /// Stores the answer's end (retried while the database is away); the message as
    /// stored, or as it would have been.
    async fn store(&self, outcome: &Outcome) -> (MessageRow, anyhow::Result<()>) {
        let chat = self.chat;
        let status = match outcome.finish {
            FinishReason::Stop => MessageStatus::Complete,
            FinishReason::Cancelled => MessageStatus::Cancelled,
            // Like an answer whose server died: an error, with the text it had.
            FinishReason::Error | FinishReason::Interrupted => MessageStatus::Error,
        };
        let sources =
            (!self.sources.is_empty()).then(|| serde_json::to_string(&self.sources).unwrap_or_default());
        let stored = crate::outage::until_available(STORE_FOR, "storing an answer's end", || {
            chat.db.finish_message(
                &self.answer.id,
                &outcome.content,
                status,
                outcome.finish,
                sources.clone(),
                chat.now(),
            )
        })
        .await;
        let mut message = self.answer.clone();
        message.content = outcome.content.clone();
        message.status = status;
        message.sources = sources;
        (message, stored)
    }

    /// Tells the tabs the answer ended (even if it could not be stored: they have its
    /// text, and must not wait for more), and titles a new conversation.
    async fn tell(&self, message: MessageRow, outcome: Outcome, refunded: bool) -> anyhow::Result<()> {
        let chat = self.chat;
        let realtime = &chat.realtime;
        realtime.publish(
            self.user_id,
            &ServerFrame::MessageCompleted {
                conversation_id: self.conversation.id.clone(),
                message: message_with_files(&message, &self.made),
                finish_reason: outcome.finish,
            },
        );
        if let Some(error) = &outcome.error {
            tracing::warn!(error = %error, conversation = %self.conversation.id, "model error");
            let e = ApiError::from(match error {
                ModelError::Refused(_) => ErrorCode::ImageRefused,
                _ => ErrorCode::ModelError,
            });
            let frame = ServerFrame::Error {
                client_id: self.answer.client_id.clone(),
                code: e.code().as_str().into(),
                message: e.message(self.lang),
                field: None,
            };
            realtime.publish(self.user_id, &frame);
        }
        if refunded {
            chat.announce.usage(self.user_id).await;
        }
        if outcome.finish != FinishReason::Stop {
            return Ok(());
        }
        if let Some(first) = self.title_from {
            self.title(first).await?;
        }
        Ok(())
    }

    /// Names a new conversation after its first exchange.
    async fn title(&self, first: &str) -> anyhow::Result<()> {
        let chat = self.chat;
        // The conversation's chat model: the answer's may be one that writes no text (an
        // image model).
        let model = self.conversation.model.clone();
        let title = tokio::time::timeout(TITLE_TIMEOUT, chat.realtime.provider.title(&model, first)).await;
        self.meter_title(&model, first, &title);
        // Made from the user's words, so it may carry their bidi overrides.
        let clean = |t: &str| crate::domain::without_hidden_chars(t).trim().to_owned();
        let title = match title {
            Ok(Ok(t)) if !clean(&t.text).is_empty() => clean(&t.text),
            // A title is a nicety: fall back to the first words.
            _ => clean(&chat_actors::model::demo_title(first)),
        };
        if title.is_empty() {
            return Ok(());
        }
        if chat.db.set_generated_title(&self.conversation.id, &title).await? {
            chat.announce
                .conversation(self.user_id, &self.conversation.id)
                .await?;
        }
        Ok(())
    }

    /// Records the title's call: what the provider said it used, else what it was sent
    /// (the first message) and gave.
    fn meter_title(
        &self,
        model: &str,
        first: &str,
        title: &Result<Result<chat_actors::model::Answered, ModelError>, tokio::time::error::Elapsed>,
    ) {
        let sent = || vec![crate::metering::text_turn(first.to_owned())];
        let (used, outcome) = match title {
            Ok(Ok(t)) => (Used::said_or_count(t.usage, sent, &t.text), CallOutcome::Complete),
            Ok(Err(_)) => (Used::said_or_count(None, sent, ""), CallOutcome::Error),
            Err(_) => (Used::said_or_count(None, sent, ""), CallOutcome::Cancelled),
        };
        let call = Call {
            kind: ModelCallKind::Title,
            model: model.to_owned(),
            used,
            images: 0,
            outcome,
        };
        let payer = Payer {
            user_id: self.user_id.to_owned(),
            message_id: Some(self.answer.id.clone()),
        };
        self.chat.meter.record(&payer, call);
    }
}

/// The conversation before the question, for the model that plans searches: the last
/// few thousand characters.
fn conversation_text(history: &[MessageRow]) -> String {
    const MAX_CHARS: usize = 4000;
    let before = &history[..history.len().saturating_sub(1)];
    let text = before
        .iter()
        .map(|m| format!("{}: {}", m.role, m.content))
        .collect::<Vec<_>>()
        .join("\n");
    let skip = text.chars().count().saturating_sub(MAX_CHARS);
    text.chars().skip(skip).collect()
}

/// The web pages a search model's answer links to (`[title](https://…)`), each once, in
/// the order they first appear.
fn links_of(content: &str) -> Vec<WebSource> {
    let mut found: Vec<WebSource> = Vec::new();
    let mut rest = content;
    while let Some(open) = rest.find('[') {
        rest = &rest[open + 1..];
        let Some(close) = rest.find("](") else { break };
        let title = &rest[..close];
        let after = &rest[close + 2..];
        let Some(end) = after.find(')') else { break };
        let target = &after[..end];
        if title.contains('[') {
            continue;
        }
        if let Ok(url) = url::Url::parse(target) {
            if matches!(url.scheme(), "http" | "https") && !found.iter().any(|s| s.url == url.as_str()) {
                let site = url.host_str().unwrap_or("").trim_start_matches("www.").to_owned();
                let title = if title.trim().is_empty() {
                    site.clone()
                } else {
                    title.trim().to_owned()
                };
                found.push(WebSource {
                    url: url.to_string(),
                    title,
                    site,
                });
            }
        }
        rest = &after[end..];
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_search_models_links_become_its_sources_once_each() {
        let answer = "Rust 1.80 shipped ([blog.rust-lang.org](https://blog.rust-lang.org/2024/07/25/Rust-1.80.0.html)). \
                      See [the notes](https://blog.rust-lang.org/2024/07/25/Rust-1.80.0.html) and [a file](file:///etc/passwd), \
                      or [docs](https://www.rust-lang.org/learn).";
        let links = links_of(answer);
        assert_eq!(
            links
                .iter()
                .map(|l| (l.title.as_str(), l.site.as_str()))
                .collect::<Vec<_>>(),
            [
                ("blog.rust-lang.org", "blog.rust-lang.org"),
                ("docs", "rust-lang.org")
            ]
        );
    }
}
