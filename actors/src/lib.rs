//! The realtime side of the chat service: actors and the traits they need. It depends on
//! no part of `server`: storage, Redis and clocks come in through small traits that
//! `server` implements.
//!
//! - [`session`]: one actor per websocket (tab): authentication, the tab's frames;
//! - [`tab`]: a tab's bounded outgoing queue, drained by the socket's response body,
//!   and the hub's sweep of its tabs (heartbeat, idle, stuck sockets, token rechecks);
//! - [`frames`]: a tab's incoming frames, decoded from the request payload;
//! - [`shard`]: one arbiter per core; a user's realtime work runs on the user's shard;
//! - [`hub`]: which sessions each user has (a hub per shard), and fan-out to other
//!   instances;
//! - [`generation`]: one actor per answer streaming from the model, and its registry;
//! - [`quota`]: the quota actor per active user and the hub that finds it;
//! - [`model`]: model providers (the built-in demo model);
//! - [`metrics`]: the names of the metrics the actors record (described by the server);
//! - [`messages`]: the small types the actors hand one another (a frame on its way to a
//!   tab, a session's settings), below them all.
//!
//! The websocket protocol's frames, the answer's [`Snapshot`](chat_contract::frames::Snapshot)
//! and the stored states are `chat-contract`'s: this crate and the server import them
//! from there.
//!
//! Within this crate the files import one another one way only: `messages`, `shard`,
//! `frames` and `model` import none of the others; `metrics` imports `model`; `tab`
//! imports `messages`; `hub` imports `tab`; `generation` and `session` import `hub`;
//! `quota` imports `shard`; those that record metrics import `metrics`.

pub mod frames;
pub mod generation;
pub mod hub;
pub mod messages;
pub mod metrics;
pub mod model;
pub mod quota;
pub mod session;
pub mod shard;
pub mod tab;
