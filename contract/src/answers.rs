//! The envelopes of REST answers (docs/api.md): `{success: true}`, `{success, data}`, a
//! page of a list, and the answers that carry more than data.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::frames::{Attachment, Conversation, Message, Project};
use crate::views::{BillingInfo, Payment, Settings, Subscription, Usage, User, VatEstimate};

/// `{"success": true}`: the call did what it was asked.
#[derive(Debug, Clone, Serialize, TS)]
pub struct Done {
    pub success: bool,
}

impl Done {
    pub const fn new() -> Done {
        Done { success: true }
    }
}

impl Default for Done {
    fn default() -> Done {
        Done::new()
    }
}

/// `{"success": true, "data": …}`.
#[derive(Debug, Clone, Serialize, TS)]
pub struct Data<T> {
    pub success: bool,
    pub data: T,
}

impl<T> Data<T> {
    pub fn new(data: T) -> Data<T> {
        Data { success: true, data }
    }
}

/// A page of a list, newest first; `nextCursor` asks for the next one.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Page<T> {
    pub success: bool,
    pub data: Vec<T>,
    pub next_cursor: Option<String>,
}

/// The user signed in: registration, login, the code checks and `GET /api/auth/me`.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SignedIn {
    #[serde(flatten)]
    pub user: User,
    pub token: String,
    pub expires_at: String,
}

/// A new token (`{token}`; `success` on the calls that also change something).
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct NewToken {
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub success: Option<bool>,
    pub token: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub expires_at: Option<String>,
}

/// The profile picture after an upload or removal.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ProfileImage {
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub success: Option<bool>,
    pub profile_image: Option<String>,
}

/// `GET /api/settings`, and `PUT` (without `billingInfo`).
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SettingsAnswer {
    pub success: bool,
    pub settings: Settings,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub billing_info: Option<Option<BillingInfo>>,
}

/// `PUT /api/settings/billing-info`.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct BillingInfoAnswer {
    pub success: bool,
    pub billing_info: BillingInfo,
}

/// `GET /api/usage/limits`.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct UsageAnswer {
    pub success: bool,
    #[serde(flatten)]
    pub usage: Usage,
}

/// `GET /api/plans`: the plans priced with the caller's VAT.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PlansAnswer {
    pub success: bool,
    pub data: Vec<crate::views::Plan>,
    pub vat_rate: f64,
    pub vat: VatEstimate,
}

/// `GET /api/subscription` and every call that changes it; `requiresPayment: false` on
/// a plan change that needs no payment.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionAnswer {
    pub success: bool,
    #[serde(flatten)]
    pub subscription: Subscription,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub requires_payment: Option<bool>,
}

/// An upgrade waits for this payment: the demo provider's page (`checkoutUrl`), or
/// Stripe.js confirms it (`clientSecret`).
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PaymentRequired {
    pub success: bool,
    pub requires_payment: bool,
    pub payment: Payment,
    pub checkout_url: Option<String>,
    pub client_secret: Option<String>,
}

/// A conversation with the messages of every branch, oldest first (`parentId` links
/// them; `currentMessageId` ends the branch shown).
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ConversationWithMessages {
    #[serde(flatten)]
    pub conversation: Conversation,
    pub messages: Vec<Message>,
}

/// `GET /api/conversations/search`: one hit, a title or a message of any branch.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SearchHit {
    pub conversation_id: String,
    pub title: Option<String>,
    /// `None` for a hit in the title.
    pub message_id: Option<String>,
    /// Plain text around the first match, at most 200 characters (the title for a title
    /// hit).
    pub snippet: String,
    /// Where the query's words are in `snippet`, in UTF-16 code units (JavaScript's string
    /// offsets), `[start, end)`.
    pub highlights: Vec<Highlight>,
    pub archived: bool,
    pub updated_at: String,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, TS)]
pub struct Highlight {
    pub start: u32,
    pub end: u32,
}

/// A share link: `url` opens a read-only snapshot of a branch as it was when shared.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Share {
    #[serde(rename = "_id")]
    pub id: String,
    pub url: String,
    pub conversation_id: String,
    /// The conversation's title when shared.
    pub title: Option<String>,
    /// Whether the owner's name is shown on the shared page.
    pub show_name: bool,
    pub created_at: String,
}

/// `GET /api/shared/{token}`: what anyone with the link sees. Nothing about the owner but
/// the name they chose to show.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SharedConversation {
    pub title: Option<String>,
    pub owner_name: Option<String>,
    pub created_at: String,
    /// The branch shared, first question first.
    pub messages: Vec<SharedMessage>,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SharedMessage {
    #[serde(rename = "_id")]
    pub id: String,
    pub role: crate::states::MessageRole,
    pub content: String,
    pub model: Option<String>,
    pub created_at: String,
    pub sources: Vec<crate::frames::Source>,
    pub attachments: Vec<SharedAttachment>,
}

/// A file of a shared message: images have a `url` served through the link; documents
/// are only named.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SharedAttachment {
    pub kind: crate::states::FileKind,
    pub name: String,
    pub mime: String,
    pub width: Option<u32>,
    pub height: Option<u32>,
    pub url: Option<String>,
}

/// `POST /api/conversations/import`: what was imported.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ImportResult {
    #[ts(type = "number")]
    pub conversations: u64,
    #[ts(type = "number")]
    pub messages: u64,
}

/// A project with its documents.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ProjectWithFiles {
    #[serde(flatten)]
    pub project: Project,
    pub files: Vec<Attachment>,
}

/// Every error: a stable `code`, a `message` in the request's language, and where it
/// applies the `field` it is about.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ErrorAnswer {
    pub success: bool,
    pub code: String,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub field: Option<String>,
}

/// `GET /api/health`; with a failed check, also an error's `success`, `code` and
/// `message`.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Health {
    /// `ok` or `error`.
    pub status: String,
    /// `sqlite` or `postgres`.
    pub database: String,
    /// `ok` or `error`.
    pub database_status: String,
    /// `none` (in-process), `ok` or `error`.
    pub redis: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub success: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub code: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub message: Option<String>,
}
