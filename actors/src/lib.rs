//! The realtime side of the chat service: session, hub, conversation and quota actors,
//! model providers and the websocket wire protocol. It depends on no part of `server`:
//! it defines the small traits it needs and `server` wires concrete backends in.
//!
//! Empty until the realtime chat issue lands; the crate exists so the workspace layout
//! of DESIGN.md holds from the first commit.
