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
//! - [`model`]: model providers (the built-in demo model).
//!
//! The websocket protocol's frames, the answer's [`Snapshot`](chat_contract::frames::Snapshot)
//! and the stored states are `chat-contract`'s: this crate and the server import them
//! from there.

pub mod frames;
pub mod generation;
pub mod hub;
pub mod model;
pub mod quota;
pub mod session;
pub mod shard;
pub mod tab;
