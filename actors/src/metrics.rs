//! The names of the metrics the actors record (through the `metrics` facade, whose macros
//! do nothing until the server installs a recorder). The server describes them with all
//! its others in `server/src/metrics.rs`, where every metric of the service is listed.
//! Imports only `model` (for its errors' kinds).

// The facade's macros, so that `crate::metrics::counter!` names both the macro and the
// names it records under.
pub use ::metrics::{counter, gauge, histogram};

/// Gauge: answers streaming on this instance now.
pub const ANSWERS_STREAMING: &str = "chat_answers_streaming";
/// Histogram (label `model`): from an answer's start to its first words.
pub const TIME_TO_FIRST_TOKEN: &str = "chat_model_time_to_first_token_seconds";
/// Histogram (label `model`): from an answer's start to its end, however it ended.
pub const ANSWER_DURATION: &str = "chat_answer_duration_seconds";
/// Counter (labels `model`, `kind`): answers the model failed, by [`error_kind`].
pub const MODEL_ERRORS: &str = "chat_model_errors_total";
/// Gauge: websockets open on this instance (authenticated or not).
pub const WEBSOCKETS_OPEN: &str = "chat_websockets_open";
/// Gauge: tabs joined to their user's hub on this instance (authenticated sockets).
pub const TABS_OPEN: &str = "chat_tabs_open";
/// Counter (labels `service`, `decision`): quota checks, by [`quota_decision`].
pub const QUOTA_CHECKS: &str = "chat_quota_checks_total";

/// An answer's model when its row names none (never expected; keeps the label set closed).
pub const UNKNOWN_MODEL: &str = "unknown";

/// The `kind` label of [`MODEL_ERRORS`].
pub fn error_kind(error: &crate::model::ModelError) -> &'static str {
    use crate::model::ModelError;
    match error {
        ModelError::Timeout => "timeout",
        ModelError::Upstream(_) => "upstream",
        ModelError::Refused(_) => "refused",
    }
}

/// The values of the `decision` label of [`QUOTA_CHECKS`].
pub mod quota_decision {
    /// Counted: the limits allowed it.
    pub const ALLOWED: &str = "allowed";
    /// Not counted: a limit was reached (the user is told to upgrade or wait).
    pub const REFUSED: &str = "refused";
    /// Not decided: the counters' backend failed or the check waited past its deadline.
    pub const FAILED: &str = "failed";
}
