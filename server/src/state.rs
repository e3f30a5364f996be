//! What every handler can reach: storage, the parts chosen at start-up, and settings.

use std::sync::Arc;

use crate::accounts::Accounts;
use crate::clock::SharedClock;
use crate::config::Settings;
use crate::db::Db;
use crate::files::FileStore;
use crate::images::ImageDecoder;
use crate::mail::Mailer;
use crate::plans::Catalogue;
use crate::quota::Quotas;
use crate::rate_limit::RateLimits;
use crate::realtime::Realtime;

pub struct AppState {
    pub db: Db,
    pub redis: Option<crate::redis_conn::Redis>,
    pub accounts: Accounts,
    pub projects: crate::projects::Projects,
    pub mailer: Mailer,
    pub limits: Arc<RateLimits>,
    /// This site's origin, for the `Origin` checks of cookie calls and websockets.
    pub site: crate::http::origin::SiteOrigin,
    pub images: ImageDecoder,
    pub files: Arc<FileStore>,
    pub documents: crate::documents::Documents,
    pub search: crate::search::SearchState,
    pub imagegen: crate::imagegen::ImageGen,
    pub catalogue: Arc<Catalogue>,
    /// The models' context windows (`config/models.toml`).
    pub context_sizes: crate::chat::context::ContextSizes,
    pub quotas: Quotas,
    pub billing: crate::billing::Billing,
    pub realtime: Arc<Realtime>,
    pub clock: SharedClock,
    pub settings: Arc<Settings>,
}

impl AppState {
    pub fn now(&self) -> i64 {
        self.clock.now_ms()
    }

    /// The plan as the API shows it, with what works on this server.
    pub fn plan_view(&self, plan: &crate::plans::Plan, vat_rate: f64) -> chat_contract::views::Plan {
        let providers = &self.search.providers;
        let available =
            crate::plans::available_with_search(providers.google_available(), providers.openai_available());
        // 0 where this server cannot deep-search for the plan: clients show no toggle.
        let deep_searches = match providers.engine(plan, true) {
            Some(_) => self.settings.search.deep_searches,
            None => 0,
        };
        plan.view(vat_rate, available, deep_searches)
    }

    /// The user's subscription as the API shows it, its plans' prices with the seller's
    /// domestic VAT.
    pub fn subscription_view(
        &self,
        sub: &crate::db::subscriptions::SubscriptionRow,
    ) -> chat_contract::views::Subscription {
        let vat = self.billing.vat_for(None).rate;
        crate::views::subscription(sub, |plan| self.plan_view(self.catalogue.plan(plan), vat))
    }
}
