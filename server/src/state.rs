//! The composition root's state: the domain services built in `startup.rs`, and the
//! parts the transport itself uses (storage for the handlers' reads, the rate limits, the
//! site's origin, settings). Only the transport, start-up and the command line reach it.

use std::sync::Arc;

use crate::accounts::Accounts;
use crate::admin::Admin;
use crate::announce::Announcer;
use crate::billing::Billing;
use crate::chat::Chat;
use crate::clock::SharedClock;
use crate::config::Settings;
use crate::db::Db;
use crate::files::Files;
use crate::images::ImageDecoder;
use crate::mail::Mailer;
use crate::plans::Catalogue;
use crate::portability::export::Exporter;
use crate::projects::Projects;
use crate::quota::Quotas;
use crate::rate_limit::RateLimits;
use crate::realtime::Realtime;
use crate::views::PlanViews;

pub struct AppState {
    pub db: Db,
    pub redis: Option<crate::redis_conn::Redis>,
    pub accounts: Accounts,
    /// The operator console's rules.
    pub admin: Arc<Admin>,
    pub projects: Projects,
    pub chat: Arc<Chat>,
    pub files: Arc<Files>,
    pub billing: Arc<Billing>,
    pub announce: Arc<Announcer>,
    pub exporter: Arc<Exporter>,
    /// How plans and subscriptions are shown.
    pub plans: Arc<PlanViews>,
    pub mailer: Mailer,
    pub limits: Arc<RateLimits>,
    /// This site's origin, for the `Origin` checks of cookie calls and websockets.
    pub site: crate::http::origin::SiteOrigin,
    pub images: ImageDecoder,
    pub catalogue: Arc<Catalogue>,
    pub quotas: Quotas,
    pub realtime: Arc<Realtime>,
    pub clock: SharedClock,
    pub settings: Arc<Settings>,
}

impl AppState {
    pub fn now(&self) -> i64 {
        self.clock.now_ms()
    }
}
