//! The contract between the server and its clients: every REST answer and websocket frame
//! as a Rust type. The server serializes only these; the web client's types in
//! `web/src/types/generated/` are generated from them ([`export`]), and a test fails when
//! the checked-in files are stale.
//!
//! - [`admin`]: the operator console (`/api/admin`);
//! - [`frames`]: the websocket protocol (docs/protocol.md);
//! - [`views`]: the user, settings, usage, plans, subscription, payments, invoices;
//! - [`answers`]: the envelopes of REST answers (docs/api.md);
//! - [`states`]: stored states (plan, status, role, cycle…) as enums;
//! - [`limits`]: the fixed limits both sides enforce;
//! - [`prompt`]: how the system turns of a prompt start (the server writes them, the
//!   demo model reads them).

pub mod admin;
pub mod answers;
pub mod frames;
pub mod limits;
pub mod prompt;
pub mod states;
pub mod views;

use std::path::Path;

use ts_rs::TS;

/// Writes the TypeScript of every REST answer and websocket frame, and of every type they
/// use, into `dir` (one file per type). JSON numbers are TypeScript numbers, 64-bit ones
/// included: no count or size the API shows comes near 2^53.
pub fn export(dir: &Path) -> Result<(), ts_rs::ExportError> {
    let cfg = ts_rs::Config::new().with_out_dir(dir).with_large_int("number");
    frames::ClientFrame::export_all(&cfg)?;
    frames::ServerFrame::export_all(&cfg)?;
    answers::Done::export_all(&cfg)?;
    answers::Data::<answers::Done>::export_all(&cfg)?;
    answers::Page::<answers::Done>::export_all(&cfg)?;
    answers::SignedIn::export_all(&cfg)?;
    answers::NewToken::export_all(&cfg)?;
    answers::ProfileImage::export_all(&cfg)?;
    answers::SettingsAnswer::export_all(&cfg)?;
    answers::BillingInfoAnswer::export_all(&cfg)?;
    answers::UsageAnswer::export_all(&cfg)?;
    answers::PlansAnswer::export_all(&cfg)?;
    answers::SubscriptionAnswer::export_all(&cfg)?;
    answers::PaymentRequired::export_all(&cfg)?;
    answers::ConversationWithMessages::export_all(&cfg)?;
    answers::ProjectWithFiles::export_all(&cfg)?;
    answers::SearchHit::export_all(&cfg)?;
    answers::Share::export_all(&cfg)?;
    answers::SharedConversation::export_all(&cfg)?;
    answers::ImportResult::export_all(&cfg)?;
    answers::ErrorAnswer::export_all(&cfg)?;
    answers::Health::export_all(&cfg)?;
    views::PaymentConfig::export_all(&cfg)?;
    views::Invoice::export_all(&cfg)?;
    admin::AdminUserRow::export_all(&cfg)?;
    admin::AdminUserDetail::export_all(&cfg)?;
    admin::AuditEntry::export_all(&cfg)?;
    admin::AdminSuspension::export_all(&cfg)?;
    admin::Refund::export_all(&cfg)?;
    admin::AdminStats::export_all(&cfg)?;
    states::ModelCallKind::export_all(&cfg)?;
    Ok(())
}
