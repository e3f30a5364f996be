//! Every view the API shows, built from stored rows in this one place: REST answers and
//! websocket frames use the same builder, so a tab and a reload never disagree. The types
//! are the contract's (`chat-contract`); the usage counters are built by
//! [`crate::quota::Quotas::limit_info_of`], which knows the quota window.

use std::sync::Arc;

use chat_contract::frames::{self, Attachment};
use chat_contract::states::{BillingCycle, FileKind, PlanType};
use chat_contract::views::{
    self, AiPersonalization, Invoice, Payment, PendingSubscription, Seller, Settings, Subscription,
    SubscriptionData, User,
};
use chat_contract::{admin, answers};

use crate::billing::huf_rate::{self, HufVat};
use crate::db::audit::AuditRow;
use crate::db::billing::BillingRow;
use crate::db::conversations::{ConversationRow, MessageRow};
use crate::db::files::FileRow;
use crate::db::invoices::InvoiceRow;
use crate::db::payments::PaymentRow;
use crate::db::projects::ProjectRow;
use crate::db::refunds::RefundRow;
use crate::db::shares::ShareRow;
use crate::db::subscriptions::SubscriptionRow;
use crate::db::users::UserRow;
use crate::plans::{Catalogue, Plan};
use crate::quota::iso;
use crate::search::Providers;
use crate::shares::Snapshot;

/// The user as registration, login, the profile call and the websocket's `ready` show it.
pub fn user(u: &UserRow) -> User {
    User {
        id: u.id.clone(),
        name: u.name.clone(),
        email: u.email.clone(),
        profile_image: u.profile_image.clone(),
        role: u.role,
        settings: settings(u),
        created_at: iso(u.created_at),
    }
}

pub fn settings(u: &UserRow) -> Settings {
    Settings {
        language: u.language,
        ai_personalization: AiPersonalization {
            enabled: u.ai_enabled,
            user_name: u.ai_user_name.clone(),
            user_info: u.ai_user_info.clone(),
        },
    }
}

/// The billing info as the API shows it, and as a payment keeps it for its invoice.
pub fn billing_info(b: &BillingRow) -> views::BillingInfo {
    views::BillingInfo {
        billing_type: b.billing_type,
        name: b.name.clone(),
        company_name: b.company_name.clone(),
        address: b.address.clone(),
        city: b.city.clone(),
        postal_code: b.postal_code.clone(),
        country: b.country.clone(),
        vat_number: b.vat_number.clone(),
        vat_check: b.vies_check().map(|c| c.view()),
    }
}

fn vat_check(json: Option<&str>) -> Option<views::VatCheck> {
    crate::billing::vies::Check::from_json(json).map(|c| c.view())
}

/// How this server shows its plans: what of each works here (its search set-up) and the
/// seller's domestic VAT, the list prices' VAT. Made once at start-up.
pub struct PlanViews {
    pub catalogue: Arc<Catalogue>,
    pub search: Providers,
    /// `[search] deep_searches`, shown for the plans that can deep-search here.
    pub deep_searches: u32,
    pub domestic_vat: f64,
}

impl PlanViews {
    /// `plan` as the API shows it, its prices with `vat_rate`.
    pub fn plan(&self, plan: &Plan, vat_rate: f64) -> views::Plan {
        let available = crate::plans::available_with_search(
            self.search.google_available(),
            self.search.openai_available(),
        );
        // 0 where this server cannot deep-search for the plan: clients show no toggle.
        let deep_searches = match self.search.engine(plan, true) {
            Some(_) => self.deep_searches,
            None => 0,
        };
        plan.view(vat_rate, available, deep_searches)
    }

    /// The user's subscription as the API shows it, its plans' prices with the seller's
    /// domestic VAT.
    pub fn subscription(&self, sub: &SubscriptionRow) -> Subscription {
        subscription(sub, |plan| {
            self.plan(self.catalogue.plan(plan), self.domestic_vat)
        })
    }
}

/// `GET /api/subscription`, the answer of every call that changes it, and
/// `subscription.updated`. Its plans' prices carry the seller's domestic VAT, as list
/// prices; the buyer's own VAT is in `GET /api/plans` and on each payment. `plan_view`
/// shows a plan as this server sells it ([`PlanViews::subscription`] passes it).
fn subscription(sub: &SubscriptionRow, plan_view: impl Fn(PlanType) -> views::Plan) -> Subscription {
    let pending = sub.pending_plan_type;
    Subscription {
        data: SubscriptionData {
            id: sub.id.clone(),
            plan_type: sub.plan_type,
            status: sub.status,
            start_date: iso(sub.start_date),
            end_date: sub.end_date.map(iso),
            billing_cycle: sub.billing_cycle,
            payment_method: sub.payment_method.clone(),
            currency: sub.currency,
            // A scheduled downgrade to a paid plan renews too, at that plan's price.
            auto_renew: match pending {
                Some(plan) => plan != PlanType::Free,
                None => sub.billing_cycle == Some(BillingCycle::Monthly),
            },
            cancel_at_period_end: pending == Some(PlanType::Free),
        },
        subscription_plan: plan_view(sub.plan_type),
        pending_subscription: pending.map(|p| PendingSubscription {
            plan_type: p,
            activation_date: sub.end_date.map(iso),
            requested_at: sub.pending_since.map(iso),
        }),
        pending_subscription_plan: pending.map(plan_view),
    }
}

fn major(minor: i64) -> f64 {
    minor as f64 / 100.0
}

pub fn payment(p: &PaymentRow) -> Payment {
    Payment {
        id: p.id.clone(),
        plan_type: p.plan_type,
        billing_cycle: p.billing_cycle,
        kind: p.kind,
        status: p.status,
        currency: p.currency,
        net_amount: major(p.net_amount),
        vat_rate: p.vat_rate,
        vat_amount: major(p.vat_amount),
        vat_treatment: p.vat_treatment,
        vat_check: vat_check(p.vat_check.as_deref()),
        total_amount: major(p.total_amount),
        refunded_amount: major(p.refunded_amount),
        payment_method: p.payment_method.clone(),
        provider: p.provider.clone(),
        created_at: iso(p.created_at),
        completed_at: p.completed_at.map(iso),
    }
}

/// An invoice as `GET /api/invoices` lists it.
pub fn invoice(i: &InvoiceRow) -> Invoice {
    Invoice {
        id: i.id.clone(),
        kind: i.kind,
        number: i.number.clone(),
        credit_note_of: i.credit_note_of_number.clone(),
        issued_at: iso(i.issued_at),
        payment_id: i.payment_id.clone(),
        transaction_id: i.transaction_id.clone(),
        plan_type: i.plan_type,
        plan_name: i.plan_name.clone(),
        billing_cycle: i.billing_cycle,
        period_start: iso(i.period_start),
        period_end: iso(i.period_end),
        currency: i.currency,
        net_amount: major(i.net_amount),
        vat_rate: i.vat_rate,
        vat_amount: major(i.vat_amount),
        total_amount: major(i.total_amount),
        vat_treatment: i.vat_treatment,
        vat_check: vat_check(i.vat_check.as_deref()),
        huf_vat: HufVat::from_json(i.huf_vat.as_deref()).map(|h| views::HufVat {
            rate: h.rate,
            rate_date: h.rate_date,
            source: match h.source {
                huf_rate::Source::Mnb => "mnb".into(),
                huf_rate::Source::Fallback => "fallback".into(),
            },
            vat_huf: h.vat_huf,
        }),
        seller: Seller {
            name: i.seller_name.clone(),
            address: i.seller_address.clone(),
            vat_number: i.seller_vat_number.clone(),
            country: i.seller_country.clone(),
        },
        buyer: views::BillingInfo {
            billing_type: i.buyer_type,
            name: i.buyer_name.clone(),
            company_name: i.buyer_company.clone(),
            address: i.buyer_address.clone(),
            city: i.buyer_city.clone(),
            postal_code: i.buyer_postal_code.clone(),
            country: i.buyer_country.clone(),
            vat_number: i.buyer_vat_number.clone(),
            vat_check: None,
        },
        pdf_url: format!("/api/invoices/{}.pdf", i.id),
    }
}

/// A file as the API and frames show it.
pub fn attachment_view(f: &FileRow) -> Attachment {
    Attachment {
        id: f.id.clone(),
        kind: f.kind,
        name: f.name.clone(),
        mime: f.mime.clone(),
        size: f.size.max(0) as u64,
        width: f.width.map(|w| w.max(0) as u32),
        height: f.height.map(|h| h.max(0) as u32),
        url: format!("/api/files/{}", f.id),
        thumbnail_url: (f.kind == FileKind::Image).then(|| format!("/api/files/{}/thumbnail", f.id)),
        created_at: iso(f.created_at),
        status: f.status,
        progress: f.progress.clamp(0, 100) as u8,
        pages: f.pages.map(|p| p.max(0) as u32),
    }
}

pub fn conversation_view(c: &ConversationRow) -> frames::Conversation {
    frames::Conversation {
        id: c.id.clone(),
        title: c.title.clone(),
        model: c.model.clone(),
        web_search: c.web_search,
        created_at: iso(c.created_at),
        updated_at: iso(c.updated_at),
        project_id: c.project_id.clone(),
        current_message_id: c.current_message_id.clone(),
        pinned: c.pinned,
        archived: c.archived,
    }
}

pub fn project_view(p: &ProjectRow) -> frames::Project {
    frames::Project {
        id: p.id.clone(),
        name: p.name.clone(),
        instructions: p.instructions.clone(),
        conversations: p.conversations.max(0) as u64,
        created_at: iso(p.created_at),
        updated_at: iso(p.updated_at),
    }
}

/// A message without attachments (answers, and questions where they are not needed).
pub fn message_view(m: &MessageRow) -> frames::Message {
    message_with_files(m, &[])
}

/// A message with the files sent in it (`files` may hold other messages' too).
pub fn message_with_files(m: &MessageRow, files: &[FileRow]) -> frames::Message {
    frames::Message {
        id: m.id.clone(),
        conversation_id: m.conversation_id.clone(),
        role: m.role,
        content: m.content.clone(),
        status: m.status,
        model: m.model.clone(),
        client_id: m.client_id.clone(),
        created_at: iso(m.created_at),
        attachments: files
            .iter()
            .filter(|f| f.message_id.as_deref() == Some(m.id.as_str()))
            .map(attachment_view)
            .collect(),
        sources: sources_of(m),
        parent_id: m.parent_id.clone(),
        feedback: feedback_view(m),
    }
}

/// An answer's sources. Written by this server only: unreadable JSON is no sources
/// rather than an error.
fn sources_of(m: &MessageRow) -> Vec<frames::Source> {
    m.sources
        .as_deref()
        .and_then(|json| serde_json::from_str(json).ok())
        .unwrap_or_default()
}

/// An answer's stored rating and comment.
pub fn feedback_view(m: &MessageRow) -> Option<frames::Feedback> {
    let rating = match m.feedback_rating.as_deref()? {
        "up" => frames::Rating::Up,
        "down" => frames::Rating::Down,
        _ => return None,
    };
    Some(frames::Feedback {
        rating,
        comment: m.feedback_comment.clone(),
    })
}

/// A share link as its owner sees it; `public_url` is `PUBLIC_URL`.
pub fn share_view(s: &ShareRow, public_url: &str) -> answers::Share {
    answers::Share {
        id: s.id.clone(),
        url: format!("{}/share/{}", public_url.trim().trim_end_matches('/'), s.token),
        conversation_id: s.conversation_id.clone(),
        title: s.title.clone(),
        show_name: s.owner_name.is_some(),
        created_at: iso(s.created_at),
    }
}

/// What anyone with the link sees: the title, the name the owner chose to show, and the
/// branch's messages. Images are served through the link; documents are only named.
pub fn shared_conversation_view(snapshot: &Snapshot) -> answers::SharedConversation {
    let token = &snapshot.share.token;
    let messages = snapshot
        .messages
        .iter()
        .map(|m| answers::SharedMessage {
            id: m.id.clone(),
            role: m.role,
            content: m.content.clone(),
            model: m.model.clone(),
            created_at: iso(m.created_at),
            sources: sources_of(m),
            attachments: snapshot
                .files
                .iter()
                .filter(|f| f.message_id.as_deref() == Some(m.id.as_str()))
                .map(|f| answers::SharedAttachment {
                    kind: f.kind,
                    name: f.name.clone(),
                    mime: f.mime.clone(),
                    width: f.width.map(|w| w.max(0) as u32),
                    height: f.height.map(|h| h.max(0) as u32),
                    url: (f.kind == FileKind::Image).then(|| format!("/api/shared/{token}/files/{}", f.id)),
                })
                .collect(),
        })
        .collect();
    answers::SharedConversation {
        title: snapshot.share.title.clone(),
        owner_name: snapshot.share.owner_name.clone(),
        created_at: iso(snapshot.share.created_at),
        messages,
    }
}

/// A refund with its credit note and its payment as they are now.
pub fn refund(r: &RefundRow, credit_note: &InvoiceRow, p: &PaymentRow) -> admin::Refund {
    admin::Refund {
        id: r.id.clone(),
        payment_id: r.payment_id.clone(),
        amount: major(r.amount),
        currency: p.currency,
        reason: r.reason.clone(),
        provider: r.provider.clone(),
        provider_ref: r.provider_ref.clone(),
        actor_id: r.actor_id.clone(),
        actor: r.actor_name.clone(),
        created_at: iso(r.created_at),
        credit_note: invoice(credit_note),
        payment: payment(p),
    }
}

/// A row of the audit log. A stored field that is no JSON object (never written so) shows
/// as empty rather than failing the whole page.
pub fn audit_entry(row: &AuditRow) -> admin::AuditEntry {
    let fields = |json: &str| serde_json::from_str(json).unwrap_or_default();
    admin::AuditEntry {
        id: row.id.clone(),
        at: iso(row.at),
        actor_id: row.actor_id.clone(),
        actor: row.actor.clone(),
        action: row.action,
        target_user_id: row.target_user_id.clone(),
        target: row.target.clone(),
        reason: row.reason.clone(),
        before: fields(&row.before),
        after: fields(&row.after),
    }
}
