//! Stored states: each is kept as text in the database and shown as the same text in the
//! API. Rows decode straight into these enums (`sqlx::Type`), so an unknown stored value
//! is an error at the row boundary, never a string in the logic.

use std::fmt;

/// A stored text that names no state of its type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownState {
    pub kind: &'static str,
    pub value: String,
}

impl fmt::Display for UnknownState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown {} {:?}", self.kind, self.value)
    }
}

impl std::error::Error for UnknownState {}

/// An enum of texts: the variants, `as_str`, `parse`, `TryFrom<String>` and `Display`.
macro_rules! state {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash,
            ::serde::Serialize, ::serde::Deserialize, ::ts_rs::TS,
        )]
        pub enum $name {
            $($(#[$vmeta])* #[serde(rename = $text)] $variant),+
        }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }

            /// The state this text names, if any.
            pub fn parse(text: &str) -> Option<$name> {
                match text {
                    $($text => Some($name::$variant),)+
                    _ => None,
                }
            }
        }

        impl TryFrom<String> for $name {
            type Error = $crate::states::UnknownState;

            fn try_from(value: String) -> Result<$name, $crate::states::UnknownState> {
                $name::parse(&value).ok_or($crate::states::UnknownState { kind: stringify!($name), value })
            }
        }

        // Stored as its text, in SQLite and Postgres alike.
        impl<DB: ::sqlx::Database> ::sqlx::Type<DB> for $name
        where
            String: ::sqlx::Type<DB>,
        {
            fn type_info() -> DB::TypeInfo {
                <String as ::sqlx::Type<DB>>::type_info()
            }

            fn compatible(ty: &DB::TypeInfo) -> bool {
                <String as ::sqlx::Type<DB>>::compatible(ty)
            }
        }

        impl<'r, DB: ::sqlx::Database> ::sqlx::Decode<'r, DB> for $name
        where
            &'r str: ::sqlx::Decode<'r, DB>,
        {
            fn decode(
                value: <DB as ::sqlx::Database>::ValueRef<'r>,
            ) -> Result<$name, ::sqlx::error::BoxDynError> {
                let text = <&'r str as ::sqlx::Decode<'r, DB>>::decode(value)?;
                Ok($name::try_from(text.to_owned())?)
            }
        }

        impl<'q, DB: ::sqlx::Database> ::sqlx::Encode<'q, DB> for $name
        where
            &'q str: ::sqlx::Encode<'q, DB>,
        {
            fn encode_by_ref(
                &self,
                buf: &mut <DB as ::sqlx::Database>::ArgumentBuffer<'q>,
            ) -> Result<::sqlx::encode::IsNull, ::sqlx::error::BoxDynError> {
                <&'q str as ::sqlx::Encode<'q, DB>>::encode_by_ref(&self.as_str(), buf)
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}
pub(crate) use state;

state! {
    /// The four plans, cheapest first.
    PlanType {
        Free = "free",
        Base = "base",
        Plus = "plus",
        Pro = "pro",
    }
}

state! {
    /// How a paid plan is paid for.
    BillingCycle {
        /// Renews every month until cancelled.
        Monthly = "monthly",
        /// A fixed number of days of access, no renewal.
        OneTime = "one_time",
    }
}

state! {
    /// A subscription's state (every user has exactly one, `active`; an ended paid plan
    /// goes back to `free`, still active).
    SubscriptionStatus {
        Active = "active",
    }
}

state! {
    /// A payment's state: `pending` until the provider says it succeeded or failed, or a
    /// newer checkout or the user cancels it.
    PaymentStatus {
        Pending = "pending",
        Succeeded = "succeeded",
        Failed = "failed",
        Canceled = "canceled",
    }
}

state! {
    /// What a payment is for: a checkout the user started, or a plan's monthly renewal.
    PaymentKind {
        Checkout = "checkout",
        Renewal = "renewal",
    }
}

state! {
    /// Who wrote a message.
    MessageRole {
        User = "user",
        Assistant = "assistant",
    }
}

state! {
    /// Where a message stands: a question is `complete`; an answer is `streaming` until it
    /// ends `complete`, `cancelled` or `error`.
    MessageStatus {
        Complete = "complete",
        Streaming = "streaming",
        Cancelled = "cancelled",
        Error = "error",
    }
}

state! {
    /// How an answer's stream ended.
    FinishReason {
        Stop = "stop",
        Cancelled = "cancelled",
        Error = "error",
        /// The server shut down before the answer ended.
        Interrupted = "interrupted",
    }
}

state! {
    /// What a file is.
    FileKind {
        Image = "image",
        Document = "document",
    }
}

state! {
    /// An image is `ready` at once; a document is `processing` first.
    FileStatus {
        Processing = "processing",
        Ready = "ready",
        Failed = "failed",
    }
}

state! {
    /// The languages the service speaks (a user's setting, a registration's).
    Language {
        EnUs = "en-US",
        HuHu = "hu-HU",
    }
}

/// English where nothing says otherwise.
impl Default for Language {
    fn default() -> Language {
        Language::EnUs
    }
}

state! {
    /// The currencies prices and payments are in.
    Currency {
        Eur = "EUR",
        Huf = "HUF",
    }
}

state! {
    /// What a plan meters. The text is stored in the usage record and names the
    /// services in the plans' configuration and in Redis keys.
    Service {
        Responses = "responses",
        WebSearches = "webSearches",
        ImageGenerations = "imageGenerations",
    }
}

state! {
    /// What a user may do: an `admin` also runs the service (`/api/admin`). Granted and
    /// revoked from the command line only.
    UserRole {
        User = "user",
        Admin = "admin",
    }
}

state! {
    /// Where an account stands, as the operator's users table filters it.
    AccountStatus {
        Active = "active",
        /// An admin stopped it: no login, no call.
        Suspended = "suspended",
        /// Registered but the e-mailed code was never entered (a pending registration).
        Unverified = "unverified",
        /// Deleted by its user (what the audit log and the invoices keep of it).
        Deleted = "deleted",
    }
}

state! {
    /// What an operator did, as the audit log records it.
    AuditAction {
        PlanChanged = "plan.changed",
        UserSuspended = "user.suspended",
        UserUnsuspended = "user.unsuspended",
        UsageReset = "usage.reset",
        PaymentRefunded = "payment.refunded",
        AdminGranted = "admin.granted",
        AdminRevoked = "admin.revoked",
    }
}

state! {
    /// What a model call was for (its row in `model_calls`, and the stats' kinds).
    ModelCallKind {
        /// An answer, streamed.
        Answer = "answer",
        /// A new conversation's title.
        Title = "title",
        /// A web search's step: its queries, a page's notes, a deep search's reflection.
        Search = "search",
        /// A document's pieces, embedded for retrieval.
        Embedding = "embedding",
        /// An image made for an answer.
        Image = "image",
    }
}

state! {
    /// How a model call ended.
    CallOutcome {
        Complete = "complete",
        Cancelled = "cancelled",
        Error = "error",
    }
}

state! {
    /// An invoice, or a credit note that refunds (part of) one.
    InvoiceKind {
        Invoice = "invoice",
        CreditNote = "credit_note",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stored_text_reads_back_as_its_state_and_an_unknown_one_is_an_error() {
        for plan in PlanType::ALL {
            assert_eq!(PlanType::try_from(plan.as_str().to_owned()), Ok(*plan));
        }
        assert_eq!(
            BillingCycle::try_from("one_time".to_owned()),
            Ok(BillingCycle::OneTime)
        );
        assert_eq!(
            Service::ALL.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
            ["responses", "webSearches", "imageGenerations"],
            "the texts stored and in Redis keys"
        );
        assert_eq!(
            serde_json::to_string(&Service::WebSearches).unwrap(),
            r#""webSearches""#
        );
        let err = MessageStatus::try_from("finished".to_owned()).unwrap_err();
        assert_eq!(err.to_string(), r#"unknown MessageStatus "finished""#);
        assert_eq!(
            serde_json::to_string(&Currency::Huf).unwrap(),
            r#""HUF""#,
            "the API shows the stored text"
        );
    }
}
