//! The realtime side of the chat service: actors and the traits they need. It depends on
//! no part of `server`: storage, Redis and clocks come in through small traits that
//! `server` implements.
//!
//! - [`quota`]: the quota actor per active user and the hub that finds it.

pub mod quota;
