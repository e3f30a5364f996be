//! The fixed limits both sides enforce: the server refuses past them, the web client shows
//! them and stops before them. Written once here; the web client's copy,
//! `web/src/types/generated/limits.ts`, is generated from this list.

/// Projects one account may hold.
pub const MAX_PROJECTS: u64 = 100;
/// Documents one project may hold.
pub const MAX_PROJECT_FILES: u64 = 20;
/// Documents one message may carry.
pub const MAX_DOCUMENTS_PER_MESSAGE: u64 = 10;
/// Characters of a conversation's title.
pub const MAX_TITLE_CHARS: u64 = 200;
/// Characters of a conversation search.
pub const MAX_SEARCH_QUERY_CHARS: u64 = 200;
/// Characters of the note sent with an answer's rating.
pub const MAX_FEEDBACK_CHARS: u64 = 2000;
/// Characters of what the user tells the assistant about themselves.
pub const MAX_AI_USER_INFO_CHARS: u64 = 2000;
/// Characters of the name the assistant calls the user by.
pub const MAX_AI_USER_NAME_CHARS: u64 = 100;
/// Characters of a password: at least, and at most (the most bounds the work of hashing
/// a password an attacker chose).
pub const MIN_PASSWORD_CHARS: u64 = 6;
pub const MAX_PASSWORD_CHARS: u64 = 128;
/// Characters of a user's name.
pub const MAX_NAME_CHARS: u64 = 100;
/// Characters of an e-mail address (RFC 5321's path limit less its brackets).
pub const MAX_EMAIL_CHARS: u64 = 254;
/// Digits of a registration or password-reset code.
pub const CODE_DIGITS: u64 = 6;
/// Characters of a project's name, and of its instructions.
pub const MAX_PROJECT_NAME_CHARS: u64 = 100;
pub const MAX_PROJECT_INSTRUCTIONS_CHARS: u64 = 8000;
/// Characters of each field of the billing details.
pub const MAX_BILLING_FIELD_CHARS: u64 = 200;
/// Days one request of the operator's stats may span.
pub const MAX_STATS_DAYS: u64 = 366;
/// Days a paid plan an operator grants lasts unless told otherwise, and at most (ten
/// years).
pub const DEFAULT_PLAN_GRANT_DAYS: u64 = 30;
pub const MAX_PLAN_GRANT_DAYS: u64 = 3650;

/// Every limit above, by the name the web client imports.
pub const ALL: &[(&str, u64)] = &[
    ("MAX_PROJECTS", MAX_PROJECTS),
    ("MAX_PROJECT_FILES", MAX_PROJECT_FILES),
    ("MAX_DOCUMENTS_PER_MESSAGE", MAX_DOCUMENTS_PER_MESSAGE),
    ("MAX_TITLE_CHARS", MAX_TITLE_CHARS),
    ("MAX_SEARCH_QUERY_CHARS", MAX_SEARCH_QUERY_CHARS),
    ("MAX_FEEDBACK_CHARS", MAX_FEEDBACK_CHARS),
    ("MAX_AI_USER_INFO_CHARS", MAX_AI_USER_INFO_CHARS),
    ("MAX_AI_USER_NAME_CHARS", MAX_AI_USER_NAME_CHARS),
    ("MIN_PASSWORD_CHARS", MIN_PASSWORD_CHARS),
    ("MAX_PASSWORD_CHARS", MAX_PASSWORD_CHARS),
    ("MAX_NAME_CHARS", MAX_NAME_CHARS),
    ("MAX_EMAIL_CHARS", MAX_EMAIL_CHARS),
    ("CODE_DIGITS", CODE_DIGITS),
    ("MAX_PROJECT_NAME_CHARS", MAX_PROJECT_NAME_CHARS),
    ("MAX_PROJECT_INSTRUCTIONS_CHARS", MAX_PROJECT_INSTRUCTIONS_CHARS),
    ("MAX_BILLING_FIELD_CHARS", MAX_BILLING_FIELD_CHARS),
    ("MAX_STATS_DAYS", MAX_STATS_DAYS),
    ("DEFAULT_PLAN_GRANT_DAYS", DEFAULT_PLAN_GRANT_DAYS),
    ("MAX_PLAN_GRANT_DAYS", MAX_PLAN_GRANT_DAYS),
];
