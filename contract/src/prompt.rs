//! How the system turns the server adds to a prompt start: the server's prompt builder
//! writes them, and the built-in demo model (`chat-actors`) looks for them to show what
//! reached it (a project's instructions, web results, document excerpts).

/// How the system turn that carries a project's instructions starts.
pub const PROJECT_HEADER: &str = "The user's instructions for this project";

/// How the system turn that carries a web search's results starts.
pub const WEB_RESULTS_HEADER: &str = "Results of a web search follow.";

/// How the system turn that carries a deep search's notes starts.
pub const REPORT_HEADER: &str = "Notes from a deep web search follow.";

/// How the system turn that carries excerpts of the user's documents starts.
pub const EXCERPTS_HEADER: &str = "Excerpts from the user's documents follow.";
