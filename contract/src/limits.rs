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

/// Every limit above, by the name the web client imports.
pub const ALL: &[(&str, u64)] = &[
    ("MAX_PROJECTS", MAX_PROJECTS),
    ("MAX_PROJECT_FILES", MAX_PROJECT_FILES),
    ("MAX_DOCUMENTS_PER_MESSAGE", MAX_DOCUMENTS_PER_MESSAGE),
    ("MAX_TITLE_CHARS", MAX_TITLE_CHARS),
    ("MAX_SEARCH_QUERY_CHARS", MAX_SEARCH_QUERY_CHARS),
    ("MAX_FEEDBACK_CHARS", MAX_FEEDBACK_CHARS),
    ("MAX_AI_USER_INFO_CHARS", MAX_AI_USER_INFO_CHARS),
];
