//! What the API shows of the user, their settings, usage, plans, subscription, payments
//! and invoices: in REST answers ([`crate::answers`]) and in websocket frames
//! ([`crate::frames`]) alike. The server builds each in one place.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::states::{
    BillingCycle, Currency, InvoiceKind, Language, PaymentKind, PaymentStatus, PlanType, SubscriptionStatus,
    UserRole,
};

/// The user as registration, login, the profile call and the websocket's `ready` show it.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct User {
    #[serde(rename = "_id")]
    pub id: String,
    pub name: String,
    pub email: String,
    /// A path under /uploads, or null.
    pub profile_image: Option<String>,
    /// `admin` may open the operator console.
    pub role: UserRole,
    pub settings: Settings,
    pub created_at: String,
}

/// Settings kept by the server; theme, font size and notifications stay in the browser.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Settings {
    pub language: Language,
    pub ai_personalization: AiPersonalization,
}

#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AiPersonalization {
    pub enabled: bool,
    /// How the AI addresses the user.
    pub user_name: String,
    /// Free text about the user.
    pub user_info: String,
}

crate::states::state! {
    /// Whom invoices are made out to.
    BillingType {
        Private = "private",
        Company = "company",
    }
}

/// Who the user's invoices are made out to.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct BillingInfo {
    pub billing_type: BillingType,
    pub name: String,
    pub company_name: Option<String>,
    pub address: String,
    pub city: String,
    pub postal_code: String,
    /// ISO 3166 alpha-2.
    pub country: String,
    pub vat_number: Option<String>,
    /// What VIES said of `vatNumber`, when it decides reverse charge (a company in another
    /// EU country than the seller's). Absent otherwise, and on an invoice's buyer (the
    /// invoice carries its own `vatCheck`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub vat_check: Option<VatCheck>,
}

crate::states::state! {
    /// What VIES answered about a VAT number.
    VatCheckStatus {
        /// Registered: reverse charge applies.
        Valid = "valid",
        /// Not registered (or not for cross-border trade): domestic VAT.
        Invalid = "invalid",
        /// VIES or the member state's service gave no answer: domestic VAT until it does.
        Unavailable = "unavailable",
    }
}

/// One check of a VAT number with the EU's VIES service: what a reverse charge rests on.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct VatCheck {
    /// The number checked, compact with its prefix (`DE123456789`).
    pub vat_number: String,
    pub status: VatCheckStatus,
    /// When this server asked.
    pub checked_at: String,
    /// The date of the consultation as VIES gave it (`requestDate`), when it answered.
    pub request_date: Option<String>,
    /// The trader's name and address as VIES gave them, when the member state shares them.
    pub name: Option<String>,
    pub address: Option<String>,
    /// Why there is no answer: VIES's error (`MS_UNAVAILABLE`, `TIMEOUT`, …), or
    /// `unreachable` when VIES itself could not be reached in time.
    pub error: Option<String>,
}

/// The user's counters: `GET /api/usage/limits`, `ready` and `usage.updated`.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// Whether any service of the plan has a limit.
    pub has_active_limit: bool,
    pub limit_info: LimitInfo,
}

#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct LimitInfo {
    pub limit_type: PlanType,
    /// The quota day (in `timezone`).
    pub start_date: String,
    pub end_date: String,
    pub month_start_date: String,
    pub month_end_date: String,
    pub timezone: String,
    pub services: UsageServices,
}

#[derive(Debug, Clone, Serialize, TS)]
pub struct UsageServices {
    pub responses: UsageService,
    pub searches: UsageService,
    pub images: UsageService,
}

#[derive(Debug, Clone, Serialize, TS)]
pub struct UsageService {
    pub daily: UsageCounter,
    pub monthly: UsageCounter,
}

#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct UsageCounter {
    /// `null`: unlimited.
    pub limit: Option<u32>,
    pub used: u32,
    pub remaining: Option<u32>,
    pub unlimited: bool,
    pub resets_at: String,
}

/// A plan as plan cards, `GET /api/plans` and the subscription show it.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Plan {
    pub plan_type: PlanType,
    pub name: String,
    pub rank: u8,
    /// What the plan includes.
    pub features: Features,
    /// What works on this server: a plan card offers only these.
    pub available: Availability,
    /// The searches one deep search reserves; 0 where deep search cannot run.
    pub deep_search_searches: u32,
    pub limits: PlanLimits,
    pub max_images_per_message: u32,
    pub file_limits: FileLimits,
    pub chat_models: Vec<String>,
    pub models: Models,
    pub prices: Prices,
}

/// The plan's features (`config/plans.toml`).
#[derive(Debug, Clone, Copy, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Features {
    pub google_web_search: bool,
    pub openai_web_search: bool,
    pub document_processing: bool,
    pub project_management: bool,
    pub image_generation: bool,
}

/// The features of [`Features`] this server can give, plus image upload
/// (`maxImagesPerMessage`).
#[derive(Debug, Clone, Copy, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Availability {
    pub google_web_search: bool,
    pub openai_web_search: bool,
    pub document_processing: bool,
    pub project_management: bool,
    pub image_generation: bool,
    pub image_upload: bool,
}

/// The models of SPEC §3; any a plan leaves out takes the SPEC §9 default.
#[derive(Debug, Clone, Default, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Models {
    pub base_chat_model: Option<String>,
    pub web_preprocessing_model: Option<String>,
    pub web_content_processing_model: Option<String>,
    pub web_search_model: Option<String>,
    pub document_processing_model: Option<String>,
    pub embedding_model: Option<String>,
    pub image_generation_preprocessing_model: Option<String>,
    pub image_analysis_model: Option<String>,
}

/// What a plan may upload and keep (attachments), in MB.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FileLimits {
    /// The largest image accepted.
    #[ts(type = "number")]
    pub image_max_mb: u64,
    /// The largest document accepted (documents need `documentProcessing`).
    #[ts(type = "number")]
    pub document_max_mb: u64,
    /// All of a user's files together.
    #[ts(type = "number")]
    pub storage_mb: u64,
}

#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PlanLimits {
    pub response_limit: Limit,
    pub web_search_limit: Limit,
    pub image_generation_limit: Limit,
}

/// `null`: no limit in that period.
#[derive(Debug, Clone, Copy, Serialize, TS)]
pub struct Limit {
    pub daily: Option<u32>,
    pub monthly: Option<u32>,
}

#[derive(Debug, Clone, Serialize, TS)]
pub struct Prices {
    #[serde(rename = "EUR")]
    pub eur: Price,
    #[serde(rename = "HUF")]
    pub huf: Price,
}

/// A monthly price in major units (euros, forints).
#[derive(Debug, Clone, Copy, Serialize, TS)]
pub struct Price {
    pub net: f64,
    pub vat: f64,
    pub total: f64,
}

/// The VAT `GET /api/plans` priced the plans with.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct VatEstimate {
    pub rate: f64,
    pub treatment: VatTreatment,
    /// Whose VAT this is: the caller's billing info, or the seller's country.
    pub basis: VatBasis,
    pub country: String,
}

crate::states::state! {
    /// How VAT applies to a payment; stored on the payment and its invoice.
    VatTreatment {
        /// The buyer's EU country's rate (or the seller's, when the buyer's is unknown).
        Standard = "standard",
        /// A company in another EU country: 0 %, the buyer accounts for the VAT.
        ReverseCharge = "reverse_charge",
        /// A buyer outside the EU: 0 %.
        OutsideEu = "outside_eu",
    }
}

crate::states::state! {
    /// Where the VAT of `GET /api/plans` comes from.
    VatBasis {
        BillingInfo = "billingInfo",
        Seller = "seller",
    }
}

/// The user's subscription: `GET /api/subscription` (with `success`) and
/// `subscription.updated`.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Subscription {
    pub data: SubscriptionData,
    pub subscription_plan: Plan,
    /// A scheduled plan change, if any.
    pub pending_subscription: Option<PendingSubscription>,
    pub pending_subscription_plan: Option<Plan>,
}

#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionData {
    #[serde(rename = "_id")]
    pub id: String,
    pub plan_type: PlanType,
    pub status: SubscriptionStatus,
    pub start_date: String,
    /// `null` on the free plan.
    pub end_date: Option<String>,
    pub billing_cycle: Option<BillingCycle>,
    pub payment_method: Option<String>,
    pub currency: Option<Currency>,
    /// Whether the plan renews at `endDate` (a scheduled downgrade to a paid plan does).
    pub auto_renew: bool,
    /// Whether the plan ends at `endDate`, back to free.
    pub cancel_at_period_end: bool,
}

#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PendingSubscription {
    pub plan_type: PlanType,
    pub activation_date: Option<String>,
    pub requested_at: Option<String>,
}

/// A payment (amounts in major units).
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Payment {
    #[serde(rename = "_id")]
    pub id: String,
    pub plan_type: PlanType,
    pub billing_cycle: BillingCycle,
    pub kind: PaymentKind,
    pub status: PaymentStatus,
    pub currency: Currency,
    pub net_amount: f64,
    pub vat_rate: f64,
    pub vat_amount: f64,
    pub vat_treatment: VatTreatment,
    /// The VIES check the VAT treatment rested on, when there was one.
    pub vat_check: Option<VatCheck>,
    pub total_amount: f64,
    /// What credit notes gave back of `totalAmount` so far.
    pub refunded_amount: f64,
    pub payment_method: String,
    /// `demo` or `stripe`.
    pub provider: String,
    pub created_at: String,
    pub completed_at: Option<String>,
}

/// Which provider takes payments, for the web client's checkout.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PaymentConfig {
    /// `demo` or `stripe`.
    pub provider: String,
    pub publishable_key: Option<String>,
    /// Where Stripe.js is loaded from.
    pub js_url: Option<String>,
}

/// An invoice (amounts in major units).
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Invoice {
    #[serde(rename = "_id")]
    pub id: String,
    /// A credit note has negative amounts and refers to the invoice it refunds.
    pub kind: InvoiceKind,
    pub number: String,
    /// A credit note's invoice (its number); `null` on an invoice.
    pub credit_note_of: Option<String>,
    pub issued_at: String,
    pub payment_id: String,
    pub transaction_id: String,
    pub plan_type: PlanType,
    pub plan_name: String,
    pub billing_cycle: BillingCycle,
    pub period_start: String,
    pub period_end: String,
    pub currency: Currency,
    pub net_amount: f64,
    pub vat_rate: f64,
    pub vat_amount: f64,
    pub total_amount: f64,
    pub vat_treatment: VatTreatment,
    /// The VIES check the VAT treatment rested on, when there was one.
    pub vat_check: Option<VatCheck>,
    /// The VAT in forints, on a Hungarian seller's EUR invoice with VAT; else `null`.
    pub huf_vat: Option<HufVat>,
    pub seller: Seller,
    pub buyer: BillingInfo,
    pub pdf_url: String,
}

/// The VAT of an EUR invoice in forints, as Hungarian VAT law asks of a Hungarian seller.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct HufVat {
    /// Forints for one euro.
    pub rate: f64,
    /// The day the rate is of (`YYYY-MM-DD`).
    pub rate_date: String,
    /// `mnb` (the central bank's published rate) or `fallback` (the operator's, when MNB
    /// did not answer).
    pub source: String,
    /// Whole forints.
    pub vat_huf: i64,
}

#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Seller {
    pub name: String,
    pub address: String,
    pub vat_number: String,
    pub country: String,
}
