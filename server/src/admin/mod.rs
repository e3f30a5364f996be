//! The operator console's rules (issue 34): what an admin may see of a user and change.
//! [`Admin`] holds what these rules use and nothing else; `http/admin/` parses the calls
//! and answers with what it returns, and the command line (`operator.rs`) shares its plan
//! rule. Every change writes its audit row (`db::audit`) with it.
//!
//! - [`users`]: the users table, a user's page, a plan granted, a day's usage given back.
//! - [`stats`]: the operator's figures: costs, usage and revenue by day, model, plan, user.

pub mod stats;
pub mod users;

use std::sync::Arc;

use crate::announce::Announcer;
use crate::billing::Billing;
use crate::clock::SharedClock;
use crate::db::Db;
use crate::quota::Quotas;
use crate::views::PlanViews;

/// The operator console's service. Cheap to share: every part is a handle.
pub struct Admin {
    pub db: Db,
    pub clock: SharedClock,
    /// The counters shown and given back.
    pub quotas: Quotas,
    /// A user's payments and invoices, as their own pages list them.
    pub billing: Arc<Billing>,
    /// Tells the user's tabs of what an admin changed.
    pub announce: Arc<Announcer>,
    /// The subscription as the user's own Settings show it.
    pub plans: Arc<PlanViews>,
}
