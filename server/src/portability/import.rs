//! `POST /api/conversations/import`: conversations from our own export
//! (`conversations.json`, or the whole export zip) or from ChatGPT's `conversations.json`.
//!
//! Both formats become the same tree of messages linked to their parents, and one set of
//! rules makes stored conversations of it:
//! - from ChatGPT, only questions and answers with text are kept; a message left out
//!   (system, tool and hidden messages, images without text) passes its replies to the
//!   nearest message kept above it; and a message that follows one of its own role as its
//!   only reply (an answer split by a tool call) is joined to it, so questions and answers
//!   alternate as in a chat here. From our own format every question and answer is kept
//!   as it was (a failed answer without text is the parent of the next question);
//! - branches stay (messages with one parent are versions), the branch shown stays shown
//!   (its last message, or the newest below it, is the current message), and a reply is
//!   always newer than what it follows;
//! - every id is new: nothing imported names a row of ours.
//!
//! The whole upload is checked first; any fault refuses it all (`field: "file"`), and
//! what passes is stored in one transaction.

use std::collections::{BTreeMap, HashMap};
use std::io::Read;

use chat_contract::answers::ImportResult;
use chat_contract::frames::{Feedback, Rating, Source};
use chat_contract::states::{FinishReason, MessageRole, MessageStatus};
use serde::Deserialize;

use super::format;
use crate::announce::Announcer;
use crate::db::conversations::{ConversationRow, MessageRow};
use crate::db::portability::Imported;
use crate::db::Db;
use crate::error::{ApiError, ErrorCode};

/// The largest upload, and the largest `conversations.json` taken out of a zip.
pub const MAX_BYTES: usize = 50 * 1024 * 1024;
pub const MAX_CONVERSATIONS: usize = 1_000;
/// Messages stored by one import, over all its conversations.
pub const MAX_MESSAGES: usize = 100_000;
/// The longest answer kept. Questions have the send's limit (`chat.max_message_chars`);
/// answers may be longer than anything a user may send.
pub const MAX_ANSWER_CHARS: usize = 200_000;
/// A title's longest, as a rename allows.
const MAX_TITLE_CHARS: usize = chat_contract::limits::MAX_TITLE_CHARS as usize;
/// The conversation's model when the file names none.
const UNKNOWN_MODEL: &str = "imported";

/// How many imported conversations are announced to the tabs, newest first: a tab's list
/// shows the newest ones, and older ones come with its next pages.
const ANNOUNCED: usize = 100;

/// Reads the upload `bytes` (off the async workers: up to 50 MB of JSON), stores all its
/// conversations in one transaction or none, and tells the tabs of the newest; how many
/// conversations and messages were stored.
pub async fn import(
    db: &Db,
    announce: &Announcer,
    user_id: &str,
    bytes: Vec<u8>,
    max_question_chars: usize,
    now: i64,
) -> Result<ImportResult, ApiError> {
    let owner = user_id.to_owned();
    let parsed = actix_web::web::block(move || parse(&bytes, &owner, max_question_chars, now))
        .await
        .map_err(anyhow::Error::from)??;
    let mut ids: Vec<(i64, String)> = parsed
        .conversations
        .iter()
        .map(|c| (c.conversation.updated_at, c.conversation.id.clone()))
        .collect();
    let conversations = parsed.conversations.len() as u64;
    let messages = db.import_conversations(parsed.conversations).await?;
    ids.sort_unstable_by(|a, b| b.cmp(a));
    for (_, id) in ids.iter().take(ANNOUNCED) {
        announce.conversation(user_id, id).await?;
    }
    Ok(ImportResult {
        conversations,
        messages,
    })
}

/// What was read, ready to store, and how many messages it holds.
pub struct Parsed {
    pub conversations: Vec<Imported>,
    pub messages: usize,
}

fn invalid() -> ApiError {
    ApiError::field(ErrorCode::ImportInvalid, "file")
}

/// Reads an upload; every refusal names the field `file`.
pub fn parse(bytes: &[u8], user_id: &str, max_question_chars: usize, now: i64) -> Result<Parsed, ApiError> {
    let json = if bytes.starts_with(b"PK\x03\x04") {
        std::borrow::Cow::Owned(from_zip(bytes)?)
    } else {
        std::borrow::Cow::Borrowed(bytes)
    };
    let trees = match json.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'[') => chatgpt(&json)?,
        Some(b'{') => ours(&json)?,
        _ => return Err(invalid()),
    };
    if trees.len() > MAX_CONVERSATIONS {
        return Err(ApiError::with_max(
            ErrorCode::ImportTooManyConversations,
            Some("file"),
            MAX_CONVERSATIONS as u64,
        ));
    }
    let limits = Limits {
        question_chars: max_question_chars,
        now,
    };
    let mut parsed = Parsed {
        conversations: Vec::new(),
        messages: 0,
    };
    for tree in trees {
        let Some(imported) = build(tree, user_id, &limits)? else {
            continue;
        };
        parsed.messages += imported.messages.len();
        if parsed.messages > MAX_MESSAGES {
            return Err(ApiError::with_max(
                ErrorCode::ImportTooManyMessages,
                Some("file"),
                MAX_MESSAGES as u64,
            ));
        }
        parsed.conversations.push(imported);
    }
    Ok(parsed)
}

/// `conversations.json` of an export zip, inflated up to [`MAX_BYTES`].
fn from_zip(bytes: &[u8]) -> Result<Vec<u8>, ApiError> {
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes)).map_err(|_| invalid())?;
    let entry = archive.by_name("conversations.json").map_err(|_| invalid())?;
    let mut json = Vec::new();
    // One byte past the limit tells a file that is too large from one that fits.
    entry
        .take(MAX_BYTES as u64 + 1)
        .read_to_end(&mut json)
        .map_err(|_| invalid())?;
    if json.len() > MAX_BYTES {
        return Err(ApiError::with_max(
            ErrorCode::FileTooLarge,
            Some("file"),
            (MAX_BYTES / (1024 * 1024)) as u64,
        ));
    }
    Ok(json)
}

/// A conversation of either format, before the rules.
struct Tree {
    /// Our own format: every message is kept as it was (an image's question without
    /// text, a failed answer), and none is joined to another.
    ours: bool,
    title: Option<String>,
    model: Option<String>,
    created_at: Option<i64>,
    updated_at: Option<i64>,
    /// The key of the message shown last.
    current: Option<String>,
    nodes: Vec<Node>,
}

/// A message of either format; `role: None` for one that is not kept.
struct Node {
    key: String,
    parent: Option<String>,
    role: Option<MessageRole>,
    content: String,
    created_at: Option<i64>,
    model: Option<String>,
    status: Option<MessageStatus>,
    finish_reason: Option<FinishReason>,
    sources: Vec<Source>,
    feedback: Option<Feedback>,
}

fn ours(json: &[u8]) -> Result<Vec<Tree>, ApiError> {
    let file: format::ExportFile = serde_json::from_slice(json).map_err(|_| invalid())?;
    if file.format != format::FORMAT || file.version > format::VERSION {
        return Err(invalid());
    }
    let tree = |c: format::Conversation| Tree {
        ours: true,
        title: c.title,
        model: c.model,
        created_at: c.created_at.as_deref().and_then(parse_iso),
        updated_at: c.updated_at.as_deref().and_then(parse_iso),
        current: c.current_message_id,
        nodes: c
            .messages
            .into_iter()
            .map(|m| Node {
                key: m.id,
                parent: m.parent_id,
                role: MessageRole::parse(&m.role),
                content: m.content,
                created_at: m.created_at.as_deref().and_then(parse_iso),
                model: m.model,
                status: m.status.as_deref().and_then(MessageStatus::parse),
                finish_reason: m.finish_reason.as_deref().and_then(FinishReason::parse),
                sources: m.sources,
                feedback: m.feedback,
            })
            .collect(),
    };
    Ok(file.conversations.into_iter().map(tree).collect())
}

fn parse_iso(text: &str) -> Option<i64> {
    chrono::DateTime::parse_from_rfc3339(text)
        .ok()
        .map(|t| t.timestamp_millis())
}

/// ChatGPT's `conversations.json`: only what is read is declared; the rest is skipped.
#[derive(Deserialize)]
struct GptConversation {
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    create_time: Option<f64>,
    #[serde(default)]
    update_time: Option<f64>,
    /// Sorted by node id, so an import is the same every time.
    mapping: BTreeMap<String, GptNode>,
    #[serde(default)]
    current_node: Option<String>,
    #[serde(default)]
    default_model_slug: Option<String>,
}

/// A node of the tree; its `children` say again what the children's `parent` says.
#[derive(Deserialize)]
struct GptNode {
    #[serde(default)]
    message: Option<GptMessage>,
    #[serde(default)]
    parent: Option<String>,
}

#[derive(Deserialize)]
struct GptMessage {
    author: GptAuthor,
    #[serde(default)]
    content: Option<GptContent>,
    #[serde(default)]
    create_time: Option<f64>,
    #[serde(default)]
    metadata: Option<GptMetadata>,
}

#[derive(Deserialize)]
struct GptAuthor {
    role: String,
}

#[derive(Deserialize)]
struct GptContent {
    content_type: String,
    #[serde(default)]
    parts: Vec<GptPart>,
}

/// A part is text, or something else (an image, a file) that is not imported.
#[derive(Deserialize)]
#[serde(untagged)]
enum GptPart {
    Text(String),
    Other(serde::de::IgnoredAny),
}

#[derive(Deserialize)]
struct GptMetadata {
    #[serde(default)]
    model_slug: Option<String>,
    #[serde(default)]
    is_visually_hidden_from_conversation: bool,
}

fn chatgpt(json: &[u8]) -> Result<Vec<Tree>, ApiError> {
    let conversations: Vec<GptConversation> = serde_json::from_slice(json).map_err(|_| invalid())?;
    Ok(conversations.into_iter().map(chatgpt_tree).collect())
}

fn seconds_to_ms(seconds: f64) -> Option<i64> {
    (seconds.is_finite() && seconds >= 0.0).then_some((seconds * 1000.0) as i64)
}

fn chatgpt_tree(c: GptConversation) -> Tree {
    let nodes = c
        .mapping
        .into_iter()
        .map(|(key, node)| {
            let message = node.message;
            let metadata = message.as_ref().and_then(|m| m.metadata.as_ref());
            let hidden = metadata.is_some_and(|m| m.is_visually_hidden_from_conversation);
            // Only text: `text`, or the text parts of `multimodal_text` (images left out).
            let text = message
                .as_ref()
                .and_then(|m| m.content.as_ref())
                .filter(|c| c.content_type == "text" || c.content_type == "multimodal_text")
                .map(|c| {
                    let texts: Vec<&str> = c
                        .parts
                        .iter()
                        .filter_map(|p| match p {
                            GptPart::Text(t) => Some(t.as_str()),
                            GptPart::Other(_) => None,
                        })
                        .collect();
                    texts.join("\n\n")
                });
            let role = match message.as_ref().map(|m| m.author.role.as_str()) {
                _ if hidden || text.is_none() => None,
                Some(role) => MessageRole::parse(role),
                None => None,
            };
            Node {
                key,
                parent: node.parent,
                role,
                content: text.unwrap_or_default(),
                created_at: message
                    .as_ref()
                    .and_then(|m| m.create_time)
                    .and_then(seconds_to_ms),
                model: metadata.and_then(|m| m.model_slug.clone()),
                status: None,
                finish_reason: None,
                sources: Vec::new(),
                feedback: None,
            }
        })
        .collect();
    Tree {
        ours: false,
        title: c.title,
        model: c.default_model_slug,
        created_at: c.create_time.and_then(seconds_to_ms),
        updated_at: c.update_time.and_then(seconds_to_ms),
        current: c.current_node,
        nodes,
    }
}

struct Limits {
    question_chars: usize,
    now: i64,
}

/// A conversation ready to store, by the rules above; `None` when no message is kept.
fn build(tree: Tree, user_id: &str, limits: &Limits) -> Result<Option<Imported>, ApiError> {
    let now = limits.now;
    let mut nodes = tree.nodes;
    let n = nodes.len();
    let mut index: HashMap<&str, usize> = HashMap::with_capacity(n);
    for (i, node) in nodes.iter().enumerate() {
        if index.insert(node.key.as_str(), i).is_some() {
            return Err(invalid());
        }
    }
    let parent: Vec<Option<usize>> = nodes
        .iter()
        .map(|node| match &node.parent {
            None => Ok(None),
            Some(key) => index.get(key.as_str()).copied().map(Some).ok_or_else(invalid),
        })
        .collect::<Result<_, _>>()?;
    let current = tree.current.as_deref().and_then(|key| index.get(key).copied());
    drop(index);

    // Parents before their children; a node no root reaches is in a loop.
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut order: Vec<usize> = Vec::with_capacity(n);
    for (i, p) in parent.iter().enumerate() {
        match p {
            Some(p) => children[*p].push(i),
            None => order.push(i),
        }
    }
    let mut next = 0;
    while next < order.len() {
        order.extend_from_slice(&children[order[next]]);
        next += 1;
    }
    if order.len() != n {
        return Err(invalid());
    }

    let kept: Vec<bool> = nodes
        .iter()
        .map(|node| node.role.is_some() && (tree.ours || !node.content.trim().is_empty()))
        .collect();
    // The nearest kept message above each node, and each kept message's kept replies.
    let mut above: Vec<Option<usize>> = vec![None; n];
    let mut replies = vec![0usize; n];
    for &i in &order {
        above[i] = parent[i].and_then(|p| if kept[p] { Some(p) } else { above[p] });
        if let (true, Some(a)) = (kept[i], above[i]) {
            replies[a] += 1;
        }
    }
    // Each kept message stands for itself, or for the message it was joined to.
    let mut stands_for: Vec<usize> = (0..n).collect();
    let mut rows: Vec<usize> = Vec::new();
    for &i in &order {
        if !kept[i] {
            continue;
        }
        let up = above[i].map(|a| stands_for[a]);
        match up {
            Some(up) if !tree.ours && nodes[up].role == nodes[i].role && replies[up] == 1 => {
                let text = std::mem::take(&mut nodes[i].content);
                nodes[up].content = format!("{}\n\n{}", nodes[up].content.trim_end(), text.trim_start());
                replies[up] = replies[i];
                stands_for[i] = up;
            }
            _ => rows.push(i),
        }
    }
    if rows.is_empty() {
        return Ok(None);
    }

    let conversation_id = uuid::Uuid::now_v7().to_string();
    let started = tree.created_at.unwrap_or(now).clamp(0, now);
    let mut time = vec![0i64; n];
    let mut id: Vec<Option<String>> = vec![None; n];
    let mut row_children: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut messages = Vec::with_capacity(rows.len());
    for &i in &rows {
        let up = above[i].map(|a| stands_for[a]);
        let node = &mut nodes[i];
        let role = node.role.expect("a kept message has a role");
        let max = match role {
            MessageRole::User => limits.question_chars,
            MessageRole::Assistant => MAX_ANSWER_CHARS,
        };
        if node.content.chars().count() > max {
            return Err(ApiError::with_max(
                ErrorCode::MessageTooLong,
                Some("file"),
                max as u64,
            ));
        }
        let own = node.created_at.unwrap_or(started).clamp(0, now);
        // A reply is newer than what it follows: the current branch ends at the newest.
        time[i] = match up {
            Some(up) => own.max(time[up] + 1),
            None => own,
        };
        id[i] = Some(uuid::Uuid::now_v7().to_string());
        if let Some(up) = up {
            row_children[up].push(i);
        }
        messages.push(message_row(
            node,
            role,
            &conversation_id,
            id[i].clone(),
            up.and_then(|u| id[u].clone()),
            time[i],
        ));
    }

    // The message shown last, or the one that stands for it; then the newest below it.
    let newest = |among: &[usize]| among.iter().copied().max_by_key(|&i| (time[i], i));
    let mut shown = current
        .and_then(|c| if kept[c] { Some(c) } else { above[c] })
        .map(|c| stands_for[c])
        .or_else(|| newest(&rows))
        .expect("there are rows");
    while let Some(below) = newest(&row_children[shown]) {
        shown = below;
    }

    let last = rows.iter().map(|&i| time[i]).max().unwrap_or(started);
    let first = rows.iter().map(|&i| time[i]).min().unwrap_or(started);
    let model = tree
        .model
        .filter(|m| !m.trim().is_empty())
        .or_else(|| messages.iter().find_map(|m| m.model.clone()))
        .unwrap_or_else(|| UNKNOWN_MODEL.to_owned());
    let conversation = ConversationRow {
        id: conversation_id,
        user_id: user_id.to_owned(),
        title: tree.title.as_deref().and_then(clean_title),
        model: model.chars().take(MAX_TITLE_CHARS).collect(),
        web_search: false,
        created_at: started.min(first),
        updated_at: tree.updated_at.unwrap_or(last).clamp(last, now.max(last)),
        project_id: None,
        current_message_id: id[shown].clone(),
        pinned: false,
        archived: false,
    };
    Ok(Some(Imported {
        conversation,
        messages,
    }))
}

fn message_row(
    node: &mut Node,
    role: MessageRole,
    conversation_id: &str,
    id: Option<String>,
    parent_id: Option<String>,
    created_at: i64,
) -> MessageRow {
    let answer = role == MessageRole::Assistant;
    // An answer cut off mid-way is kept as it ended: never as still being written.
    let status = match node.status {
        Some(MessageStatus::Streaming) => MessageStatus::Error,
        Some(status) if answer => status,
        _ => MessageStatus::Complete,
    };
    let finish_reason = answer.then_some(match (node.finish_reason, status) {
        (Some(reason), _) => reason,
        (None, MessageStatus::Cancelled) => FinishReason::Cancelled,
        (None, MessageStatus::Error) => FinishReason::Interrupted,
        (None, _) => FinishReason::Stop,
    });
    // Web pages only: the documents an answer cited are not imported with it.
    let sources: Vec<&Source> = node
        .sources
        .iter()
        .filter(|s| matches!(s, Source::Web(_)))
        .collect();
    let feedback = node.feedback.take().filter(|_| answer);
    MessageRow {
        id: id.expect("an id was given"),
        conversation_id: conversation_id.to_owned(),
        role,
        content: std::mem::take(&mut node.content),
        status,
        model: node.model.take().filter(|_| answer),
        client_id: None,
        finish_reason,
        created_at,
        sources: (answer && !sources.is_empty()).then(|| serde_json::to_string(&sources).unwrap_or_default()),
        parent_id,
        mode: None,
        feedback_rating: feedback.as_ref().map(|f| match f.rating {
            Rating::Up => "up".to_owned(),
            Rating::Down => "down".to_owned(),
        }),
        feedback_comment: feedback.and_then(|f| f.comment).map(|c| {
            c.trim()
                .chars()
                .take(chat_contract::limits::MAX_FEEDBACK_CHARS as usize)
                .collect()
        }),
    }
}

/// One line, without hidden characters, cut to a title's length; `None` when empty.
fn clean_title(title: &str) -> Option<String> {
    let visible = crate::domain::without_hidden_chars(title);
    let line = visible.split_whitespace().collect::<Vec<_>>().join(" ");
    let title: String = line.chars().take(MAX_TITLE_CHARS).collect();
    (!title.is_empty()).then_some(title)
}
