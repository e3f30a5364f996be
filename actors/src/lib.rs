//! The realtime side of the chat service: actors and the traits they need. It depends on
//! no part of `server`: storage, Redis and clocks come in through small traits that
//! `server` implements.
//!
//! - [`session`]: one actor per websocket (tab), with heartbeat and a bounded queue;
//! - [`shard`]: one arbiter per core; a user's realtime work runs on the user's shard;
//! - [`hub`]: which sessions each user has (a hub per shard), and fan-out to other
//!   instances;
//! - [`generation`]: one actor per answer streaming from the model, and its registry;
//! - [`quota`]: the quota actor per active user and the hub that finds it;
//! - [`model`]: model providers (the built-in demo model);
//! - [`protocol`]: the frames of the websocket protocol.

pub mod generation;
pub mod hub;
pub mod model;
pub mod protocol;
pub mod quota;
pub mod session;
pub mod shard;
