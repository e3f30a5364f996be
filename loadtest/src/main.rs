//! `loadtest`: virtual users over real websockets against a running `chat-server`.
//!
//! The scenarios (idle, chat, churn) need the websocket protocol, which has not landed
//! yet; until then this binary only says so, and `make bench` does not exist.

fn main() {
    eprintln!(
        "loadtest: no scenarios yet; they arrive with the websocket protocol (see docs/performance.md)"
    );
    std::process::exit(2);
}
