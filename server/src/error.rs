//! The one error type of the API. Every error leaves as
//! `{"success": false, "code": "…", "message": "…"}` with its status; `message` is in the
//! request's language, and internal errors are logged with their cause, never shown.

use actix_web::http::{header, StatusCode};
use actix_web::{HttpResponse, ResponseError};
use chat_contract::answers::ErrorAnswer;

use crate::i18n::{self, Lang};

pub type Result<T, E = ApiError> = std::result::Result<T, E>;

macro_rules! error_codes {
    ($( $variant:ident = $code:literal, $status:ident, $en:literal, $hu:literal; )*) => {
        /// Stable error codes; the web client may translate them itself.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum ErrorCode { $($variant),* }

        impl ErrorCode {
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant),*];

            pub fn as_str(self) -> &'static str {
                match self { $(ErrorCode::$variant => $code),* }
            }

            pub fn status(self) -> StatusCode {
                match self { $(ErrorCode::$variant => StatusCode::$status),* }
            }

            /// The text, with `{field}` and `{max}` placeholders where they apply.
            pub fn template(self, lang: Lang) -> &'static str {
                match (self, lang) {
                    $((ErrorCode::$variant, Lang::EnUs) => $en,
                      (ErrorCode::$variant, Lang::HuHu) => $hu,)*
                }
            }
        }
    };
}

error_codes! {
    ValidationError = "validation_error", BAD_REQUEST,
        "Please fill in all required fields correctly",
        "Kérjük, töltsön ki minden kötelező mezőt helyesen";
    NameRequired = "name_required", BAD_REQUEST,
        "Name is required", "A név megadása kötelező";
    EmailRequired = "email_required", BAD_REQUEST,
        "Email is required", "Az e-mail cím megadása kötelező";
    EmailInvalid = "email_invalid", BAD_REQUEST,
        "Invalid email format", "Érvénytelen e-mail formátum";
    PasswordRequired = "password_required", BAD_REQUEST,
        "Password is required", "A jelszó megadása kötelező";
    PasswordTooShort = "password_too_short", BAD_REQUEST,
        "Password must be at least 6 characters",
        "A jelszónak legalább 6 karakter hosszúnak kell lennie";
    PasswordTooLong = "password_too_long", BAD_REQUEST,
        "Password must be at most 128 characters", "A jelszó legfeljebb 128 karakter lehet";
    PasswordsMismatch = "passwords_mismatch", BAD_REQUEST,
        "Passwords do not match", "A jelszavak nem egyeznek";
    CurrentPasswordRequired = "current_password_required", BAD_REQUEST,
        "Current password is required", "A jelenlegi jelszó megadása kötelező";
    NewPasswordRequired = "new_password_required", BAD_REQUEST,
        "New password is required", "Az új jelszó megadása kötelező";
    WrongPassword = "wrong_password", BAD_REQUEST,
        "Current password is incorrect", "A jelenlegi jelszó helytelen";
    PrivacyNotAccepted = "privacy_not_accepted", BAD_REQUEST,
        "You must accept the privacy policy", "El kell fogadnia az adatvédelmi szabályzatot";
    CodeRequired = "code_required", BAD_REQUEST,
        "Verification code is required", "Az ellenőrző kód megadása kötelező";
    CodeFormat = "code_format", BAD_REQUEST,
        "The verification code must be 6 digits",
        "Az ellenőrző kódnak 6 számjegyből kell állnia";
    InvalidCode = "invalid_code", BAD_REQUEST,
        "Invalid code", "Érvénytelen kód";
    CodeExpired = "code_expired", BAD_REQUEST,
        "The code has expired. Please request a new one.",
        "A kód lejárt. Kérjen újat.";
    VerificationFailed = "verification_failed", BAD_REQUEST,
        "Verification failed", "Az ellenőrzés sikertelen";
    TooManyAttempts = "too_many_attempts", TOO_MANY_REQUESTS,
        "Too many failed attempts. Please try again later.",
        "Túl sok sikertelen próbálkozás. Kérjük, próbálja újra később.";
    EmailTaken = "email_taken", CONFLICT,
        "This email address is already registered",
        "Ez az e-mail cím már regisztrálva van";
    InvalidCredentials = "invalid_credentials", UNAUTHORIZED,
        "Invalid email or password", "Érvénytelen e-mail cím vagy jelszó";
    Unauthorized = "unauthorized", UNAUTHORIZED,
        "Unauthorized action", "Jogosulatlan művelet";
    NotFound = "not_found", NOT_FOUND,
        "Not found", "Nem található";
    RateLimited = "rate_limited", TOO_MANY_REQUESTS,
        "Too many requests. Please try again later.",
        "Túl sok kérés. Kérjük, próbálja újra később.";
    ServerBusy = "server_busy", TOO_MANY_REQUESTS,
        "The server is busy. Please try again later.",
        "A szerver túlterhelt. Kérjük, próbálja újra később.";
    ServerError = "server_error", INTERNAL_SERVER_ERROR,
        "Server error occurred", "Szerverhiba történt";
    ServiceUnavailable = "service_unavailable", SERVICE_UNAVAILABLE,
        "Service unavailable. Please try again later.",
        "A szolgáltatás nem érhető el. Kérjük, próbálja újra később.";
    InvalidLanguage = "invalid_language", BAD_REQUEST,
        "Unsupported language: use en-US or hu-HU",
        "Nem támogatott nyelv: en-US vagy hu-HU választható";
    InvalidBillingType = "invalid_billing_type", BAD_REQUEST,
        "Billing type must be private or company",
        "A számlázás típusa magánszemély vagy cég lehet";
    PayloadTooLarge = "payload_too_large", PAYLOAD_TOO_LARGE,
        "The request is too large", "A kérés túl nagy";
    InvalidPlan = "invalid_plan", BAD_REQUEST,
        "Invalid plan: choose free, base, plus or pro",
        "Érvénytelen csomag: free, base, plus vagy pro választható";
    AlreadyOnPlan = "already_on_plan", CONFLICT,
        "You are already on this plan", "Már ezt a csomagot használja";
    NoPaidSubscription = "no_paid_subscription", BAD_REQUEST,
        "You have no paid subscription to cancel", "Nincs lemondható előfizetése";
    NoPendingChange = "no_pending_change", BAD_REQUEST,
        "There is no scheduled plan change", "Nincs ütemezett csomagváltás";
    PlanNotRenewing = "plan_not_renewing", BAD_REQUEST,
        "Your plan does not renew: choose a new plan when it ends",
        "Az előfizetése nem újul meg: a lejártakor válasszon új csomagot";
    BillingInfoRequired = "billing_info_required", BAD_REQUEST,
        "Please fill in your billing information before paying",
        "Kérjük, fizetés előtt adja meg a számlázási adatait";
    InvalidPaymentMethod = "invalid_payment_method", BAD_REQUEST,
        "Unsupported payment method: use credit_card",
        "Nem támogatott fizetési mód: credit_card választható";
    InvalidBillingCycle = "invalid_billing_cycle", BAD_REQUEST,
        "Billing cycle must be monthly or one_time",
        "A számlázási ciklus monthly vagy one_time lehet";
    InvalidCurrency = "invalid_currency", BAD_REQUEST,
        "Currency must be EUR or HUF", "A pénznem EUR vagy HUF lehet";
    PaymentFailed = "payment_failed", PAYMENT_REQUIRED,
        "Payment failed, please try again", "A fizetés sikertelen, kérjük, próbálja újra";
    PaymentClosed = "payment_closed", CONFLICT,
        "This payment is already closed", "Ez a fizetés már lezárult";
    LimitReached = "limit_reached", TOO_MANY_REQUESTS,
        "You have reached your {field} message limit. Upgrade your plan to continue.",
        "Elérte a {field} üzenetkorlátját. A folytatáshoz váltson nagyobb csomagra.";
    MessageEmpty = "message_empty", BAD_REQUEST,
        "Please write a message", "Kérjük, írjon üzenetet";
    MessageTooLong = "message_too_long", BAD_REQUEST,
        "The message is too long (at most {max} characters)",
        "Az üzenet túl hosszú (legfeljebb {max} karakter)";
    TooManyImages = "too_many_images", BAD_REQUEST,
        "You can attach at most {max} images to a message",
        "Egy üzenethez legfeljebb {max} képet csatolhat";
    FileInUse = "file_in_use", CONFLICT,
        "This file was already sent in a message", "Ezt a fájlt már elküldte egy üzenetben";
    ModelNotAllowed = "model_not_allowed", FORBIDDEN,
        "This model is not available on your plan", "Ez a modell nem érhető el az Ön csomagjában";
    PremiumRequired = "premium_required", FORBIDDEN,
        "{field} is a premium feature", "{field} prémium funkció";
    GenerationInProgress = "generation_in_progress", CONFLICT,
        "An answer is still being written in this conversation",
        "Ebben a beszélgetésben még készül a válasz";
    SearchLimitReached = "search_limit_reached", TOO_MANY_REQUESTS,
        "You have reached your web search limit. Upgrade your plan to continue.",
        "Elérte a webes keresési korlátját. A folytatáshoz váltson nagyobb csomagra.";
    SearchUnavailable = "search_unavailable", SERVICE_UNAVAILABLE,
        "Web search is not set up on this server",
        "A webes keresés nincs beállítva ezen a szerveren";
    DeepSearchLimit = "deep_search_limit", TOO_MANY_REQUESTS,
        "A deep search needs {max} web searches, and fewer are left in your limit",
        "Egy mélykereséshez {max} webes keresés kell, ennyi már nem maradt a korlátjából";
    ImageLimitReached = "image_limit_reached", TOO_MANY_REQUESTS,
        "You have reached your image generation limit. Upgrade your plan to continue.",
        "Elérte a képgenerálási korlátját. A folytatáshoz váltson nagyobb csomagra.";
    ImageRefused = "image_refused", BAD_REQUEST,
        "The image could not be made: the request was refused. Try describing it differently.",
        "A kép nem készült el: a kérést elutasították. Próbálja másképp leírni.";
    TooManyProjects = "too_many_projects", BAD_REQUEST,
        "You can have at most {max} projects", "Legfeljebb {max} projektje lehet";
    TooManyProjectFiles = "too_many_project_files", BAD_REQUEST,
        "A project can hold at most {max} files", "Egy projektben legfeljebb {max} fájl lehet";
    ModelError = "model_error", BAD_GATEWAY,
        "The AI model is not available right now. Please try again later.",
        "Az AI modell most nem érhető el. Kérjük, próbálja újra később.";
    InvalidFrame = "invalid_frame", BAD_REQUEST,
        "Invalid message format", "Érvénytelen üzenetformátum";
    FieldRequired = "field_required", BAD_REQUEST,
        "{field} is required", "{field} megadása kötelező";
    FieldTooLong = "field_too_long", BAD_REQUEST,
        "{field} must be at most {max} characters",
        "{field} legfeljebb {max} karakter lehet";
    ImageRequired = "image_required", BAD_REQUEST,
        "No image was uploaded", "Nem töltött fel képet";
    ImageTypeUnsupported = "image_type_unsupported", UNSUPPORTED_MEDIA_TYPE,
        "Only JPEG, PNG and WebP images are accepted",
        "Csak JPEG, PNG és WebP kép tölthető fel";
    ImageTooLarge = "image_too_large", PAYLOAD_TOO_LARGE,
        "The image must be at most {max} MB", "A kép legfeljebb {max} MB lehet";
    ImageInvalid = "image_invalid", BAD_REQUEST,
        "Image optimization failed", "A kép optimalizálása sikertelen";
    FileUploadError = "file_upload_error", BAD_REQUEST,
        "File upload error", "Fájlfeltöltési hiba";
    FileTypeUnsupported = "file_type_unsupported", UNSUPPORTED_MEDIA_TYPE,
        "This file type is not supported: attach a JPEG, PNG or WebP image, or a PDF, DOCX, TXT, Markdown or CSV document",
        "Ez a fájltípus nem támogatott: JPEG, PNG vagy WebP képet, illetve PDF, DOCX, TXT, Markdown vagy CSV dokumentumot csatoljon";
    FileUnreadable = "file_unreadable", UNPROCESSABLE_ENTITY,
        "The file could not be read: it is damaged, password-protected or holds no text",
        "A fájl nem olvasható: sérült, jelszóval védett, vagy nincs benne szöveg";
    FileProcessing = "file_processing", CONFLICT,
        "The document is still being processed. Send it when it is ready.",
        "A dokumentum feldolgozása még tart. Küldje el, ha elkészült.";
    TooManyDocuments = "too_many_documents", BAD_REQUEST,
        "You can attach at most {max} documents to a message",
        "Egy üzenethez legfeljebb {max} dokumentumot csatolhat";
    FileTooLarge = "file_too_large", PAYLOAD_TOO_LARGE,
        "The file must be at most {max} MB", "A fájl legfeljebb {max} MB lehet";
    StorageFull = "storage_full", PAYLOAD_TOO_LARGE,
        "Your files have reached your plan's storage of {max} MB. Delete conversations with attachments, or upgrade your plan.",
        "A fájljai elérték a csomagja {max} MB-os tárhelyét. Töröljön csatolmányos beszélgetéseket, vagy váltson nagyobb csomagra.";
    // Hardening: accounts and network (issue 10).
    ImageTooManyPixels = "image_too_many_pixels", PAYLOAD_TOO_LARGE,
        "The image has too many pixels. Please upload a smaller picture.",
        "A kép túl sok képpontból áll. Kérjük, töltsön fel kisebb képet.";
    Forbidden = "forbidden", FORBIDDEN,
        "You do not have permission to do this", "Ehhez nincs jogosultsága";
    AccountSuspended = "account_suspended", FORBIDDEN,
        "This account is suspended. Please contact support.",
        "Ez a fiók fel van függesztve. Kérjük, forduljon az ügyfélszolgálathoz.";
    OriginRefused = "origin_refused", FORBIDDEN,
        "This request did not come from this site", "A kérés nem erről az oldalról érkezett";
    // Hardening II (issue 28)
    InvisibleCharacters = "invisible_characters", BAD_REQUEST,
        "{field} contains invisible characters, such as text direction controls. Please remove them.",
        "{field} láthatatlan karaktereket tartalmaz, például szövegirány-vezérlőt. Kérjük, távolítsa el őket.";
    // Stripe payments (issue 11)
    WebhookSignatureInvalid = "webhook_signature_invalid", BAD_REQUEST,
        "The webhook signature is missing, wrong or too old",
        "A webhook aláírása hiányzik, hibás vagy túl régi";
    WebhookInvalid = "webhook_invalid", BAD_REQUEST,
        "The webhook event could not be read", "A webhook esemény nem olvasható";
    PaymentProviderError = "payment_provider_error", BAD_GATEWAY,
        "The payment provider could not be reached. Please try again.",
        "A fizetési szolgáltató nem érhető el. Kérjük, próbálja újra.";
    // Realtime abuse limits (issue 10, h-rtabuse)
    ClientIdTooLong = "client_id_too_long", BAD_REQUEST,
        "clientId must be at most 64 characters", "A clientId legfeljebb 64 karakter lehet";
    // Reliability under faults (issue 29): every send's frames are matched by it.
    ClientIdRequired = "client_id_required", BAD_REQUEST,
        "clientId is required: a non-empty id chosen by the tab",
        "A clientId megadása kötelező: a lap által választott, nem üres azonosító";
    TooManyParallelAnswers = "too_many_parallel_answers", TOO_MANY_REQUESTS,
        "{max} answers are already being written. Wait for one to finish.",
        "Már {max} válasz készül egyszerre. Várja meg, amíg valamelyik elkészül.";
    TooManyTabs = "too_many_tabs", TOO_MANY_REQUESTS,
        "Too many open tabs. Close one and try again.",
        "Túl sok megnyitott lap. Zárjon be egyet, és próbálja újra.";
    TooManySockets = "too_many_sockets", TOO_MANY_REQUESTS,
        "Too many open connections from your address. Please try again later.",
        "Túl sok nyitott kapcsolat az Ön címéről. Kérjük, próbálja újra később.";
    // Billing: invoices and VAT
    InvalidCountry = "invalid_country", BAD_REQUEST,
        "Country must be a two-letter country code, e.g. HU, DE or US",
        "Az ország kétbetűs országkód legyen, pl. HU, DE vagy US";
    VatNumberInvalid = "vat_number_invalid", BAD_REQUEST,
        "Invalid EU VAT number: it starts with the country's prefix, e.g. DE123456789",
        "Érvénytelen közösségi adószám: az ország előtagjával kezdődik, pl. DE123456789";
    // Hardening: faults (Redis, models, database, shutdown)
    ServerShuttingDown = "server_shutting_down", SERVICE_UNAVAILABLE,
        "The server is restarting. Please send your message again in a moment.",
        "A szerver újraindul. Kérjük, néhány pillanat múlva küldje el újra az üzenetét.";
    // Conversations as trees (issue 30)
    QuestionRequired = "question_required", BAD_REQUEST,
        "Only your own messages can be edited, not answers.",
        "Csak a saját üzenetei szerkeszthetők, a válaszok nem.";
    AnswerRequired = "answer_required", BAD_REQUEST,
        "Only an answer can be regenerated or rated.",
        "Csak válasz generálható újra vagy értékelhető.";
    // Export and import (issue 31)
    ImportInvalid = "import_invalid", BAD_REQUEST,
        "This file cannot be imported: choose the conversations.json (or the zip) of this service's export, or the conversations.json of a ChatGPT export",
        "Ez a fájl nem importálható: ennek a szolgáltatásnak az exportjából a conversations.json fájlt (vagy a zipet), illetve egy ChatGPT-export conversations.json fájlját válassza";
    ImportTooManyConversations = "import_too_many_conversations", BAD_REQUEST,
        "At most {max} conversations can be imported at once: split the file",
        "Egyszerre legfeljebb {max} beszélgetés importálható: ossza fel a fájlt";
    ImportTooManyMessages = "import_too_many_messages", BAD_REQUEST,
        "At most {max} messages can be imported at once: split the file",
        "Egyszerre legfeljebb {max} üzenet importálható: ossza fel a fájlt";
}

/// Names of the fields that `{field}` can stand for, in both languages.
fn field_label(field: &str, lang: Lang) -> &str {
    let (en, hu) = match field {
        "name" => ("Name", "A név"),
        "companyName" => ("Company name", "A cégnév"),
        "address" => ("Address", "A cím"),
        "city" => ("City", "A város"),
        "postalCode" => ("Postal code", "Az irányítószám"),
        "country" => ("Country", "Az ország"),
        "vatNumber" => ("VAT number", "Az adószám"),
        "userName" => ("The name the AI uses", "A megszólítás"),
        "userInfo" => ("About you", "A bemutatkozás"),
        "day" => ("daily", "napi"),
        "webSearch" => ("Web search", "A webes keresés"),
        "imageGeneration" => ("Image generation", "A képgenerálás"),
        "projectManagement" => ("Project management", "A projektkezelés"),
        "instructions" => ("Instructions", "Az utasítások"),
        "fileId" => ("The file", "A fájl"),
        "documentUpload" => ("Document upload", "A dokumentumfeltöltés"),
        "title" => ("Title", "A cím"),
        "comment" => ("Comment", "A megjegyzés"),
        "q" => ("Search text", "A keresett szöveg"),
        "cursor" => ("The page", "Az oldal"),
        "title|pinned|archived" => (
            "A title, pinned or archived",
            "A cím, a kitűzés vagy az archiválás",
        ),
        "file" => ("The file", "A fájl"),
        "month" => ("monthly", "havi"),
        "reason" => ("The reason", "Az indoklás"),
        other => (other, other),
    };
    match lang {
        Lang::EnUs => en,
        Lang::HuHu => hu,
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("client error {code:?} (field {field:?})")]
    Client {
        code: ErrorCode,
        field: Option<&'static str>,
        max: Option<u64>,
        retry_after_secs: Option<u64>,
    },
    #[error(transparent)]
    Internal(#[from] anyhow::Error),
}

impl ApiError {
    pub fn field(code: ErrorCode, field: &'static str) -> Self {
        ApiError::Client {
            code,
            field: Some(field),
            max: None,
            retry_after_secs: None,
        }
    }

    pub fn with_max(code: ErrorCode, field: Option<&'static str>, max: u64) -> Self {
        ApiError::Client {
            code,
            field,
            max: Some(max),
            retry_after_secs: None,
        }
    }

    /// The same client error about `field` (an internal error stays as it is).
    pub fn about(self, field: &'static str) -> Self {
        match self {
            ApiError::Client {
                code,
                max,
                retry_after_secs,
                ..
            } => ApiError::Client {
                code,
                field: Some(field),
                max,
                retry_after_secs,
            },
            internal => internal,
        }
    }

    /// A 429 that tells the client when to come back.
    pub fn retry_after(code: ErrorCode, secs: u64) -> Self {
        ApiError::Client {
            code,
            field: None,
            max: None,
            retry_after_secs: Some(secs.max(1)),
        }
    }

    pub fn code(&self) -> ErrorCode {
        match self {
            ApiError::Client { code, .. } => *code,
            // Not the server's fault and worth a retry: say so.
            ApiError::Internal(cause) if crate::outage::is_unavailable(cause) => {
                ErrorCode::ServiceUnavailable
            }
            ApiError::Internal(_) => ErrorCode::ServerError,
        }
    }

    /// The user-facing text in `lang`.
    pub fn message(&self, lang: Lang) -> String {
        let mut text = self.code().template(lang).to_owned();
        if let ApiError::Client { field, max, .. } = self {
            if let Some(field) = field {
                text = text.replace("{field}", field_label(field, lang));
            }
            if let Some(max) = max {
                text = text.replace("{max}", &max.to_string());
            }
        }
        text
    }
}

impl From<ErrorCode> for ApiError {
    fn from(code: ErrorCode) -> Self {
        ApiError::Client {
            code,
            field: None,
            max: None,
            retry_after_secs: None,
        }
    }
}

impl From<sqlx::Error> for ApiError {
    fn from(e: sqlx::Error) -> Self {
        ApiError::Internal(e.into())
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        self.code().status()
    }

    fn error_response(&self) -> HttpResponse {
        if let ApiError::Internal(cause) = self {
            crate::outage::log_failure(cause, "request failed");
        }
        let mut body = ErrorAnswer {
            success: false,
            code: self.code().as_str().to_owned(),
            message: self.message(i18n::current()),
            field: None,
        };
        let mut response = HttpResponse::build(self.status_code());
        if let ApiError::Client {
            field,
            retry_after_secs,
            ..
        } = self
        {
            body.field = field.map(str::to_owned);
            if let Some(secs) = retry_after_secs {
                response.insert_header((header::RETRY_AFTER, secs.to_string()));
            }
        }
        response.json(body)
    }
}

/// Turns a unique-constraint violation into a client error instead of a 500, so inserts
/// need no racy check-then-insert.
pub trait OnUniqueViolation<T> {
    fn on_unique_violation(self, code: ErrorCode) -> Result<T>;
}

impl<T> OnUniqueViolation<T> for std::result::Result<T, sqlx::Error> {
    fn on_unique_violation(self, code: ErrorCode) -> Result<T> {
        self.map_err(|e| match &e {
            sqlx::Error::Database(db) if db.is_unique_violation() => code.into(),
            _ => e.into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn every_code_has_distinct_snake_case_name_and_both_texts() {
        let mut seen = HashSet::new();
        for code in ErrorCode::ALL {
            let name = code.as_str();
            assert!(seen.insert(name), "duplicate code {name}");
            assert!(name.chars().all(|c| c.is_ascii_lowercase() || c == '_'), "{name}");
            let en = code.template(Lang::EnUs);
            let hu = code.template(Lang::HuHu);
            assert!(!en.is_empty() && !hu.is_empty(), "{name} lacks a text");
            assert_ne!(en, hu, "{name} is not translated");
        }
    }

    #[test]
    fn placeholders_are_filled_in_both_languages() {
        let e = ApiError::field(ErrorCode::FieldRequired, "vatNumber");
        assert_eq!(e.message(Lang::EnUs), "VAT number is required");
        assert_eq!(e.message(Lang::HuHu), "Az adószám megadása kötelező");
        let e = ApiError::with_max(ErrorCode::ImageTooLarge, None, 5);
        assert_eq!(e.message(Lang::EnUs), "The image must be at most 5 MB");
    }
}
