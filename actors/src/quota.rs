//! Usage quotas: one [`QuotaActor`] per active user, found through the [`QuotaHub`].
//!
//! A check-and-increment is atomic. Where counters are shared between instances it is a
//! single call to a [`SharedCounters`] backend (a Lua script in Redis); in-process the
//! user's actor owns the counters and handles one message at a time, so two tabs racing
//! at 49 of 50 cannot both pass. Every counted unit is also written to a [`UsageStore`]
//! (the database), the durable record from which an in-process actor reloads its
//! counters when it starts again (after a restart, or after idling out).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::prelude::*;
use futures_util::future::BoxFuture;
use serde::{Deserialize, Serialize};

/// What a plan meters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Service {
    Responses,
    WebSearches,
    ImageGenerations,
}

impl Service {
    pub const ALL: [Service; 3] = [
        Service::Responses,
        Service::WebSearches,
        Service::ImageGenerations,
    ];

    /// The name stored in the database and used in Redis keys.
    pub fn as_str(self) -> &'static str {
        match self {
            Service::Responses => "responses",
            Service::WebSearches => "webSearches",
            Service::ImageGenerations => "imageGenerations",
        }
    }

    pub fn parse(s: &str) -> Option<Service> {
        Service::ALL.into_iter().find(|svc| svc.as_str() == s)
    }
}

/// A plan's limits for one service; `None` is unlimited.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    pub day: Option<u32>,
    pub month: Option<u32>,
}

/// The current day and month, as keys (`2026-11-22`, `2026-11`) in the configured
/// timezone, with how long their counters must be kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Periods {
    pub day: String,
    pub month: String,
    pub day_ttl: Duration,
    pub month_ttl: Duration,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Period {
    Day,
    Month,
}

/// Units used in the current day and month.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Used {
    pub day: u32,
    pub month: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Counted; `used` includes this unit.
    Allowed { used: Used },
    /// Not counted: the limit of `period` is reached.
    Refused { used: Used, period: Period },
}

impl Decision {
    fn decide(used: Used, limits: Limits) -> Decision {
        if limits.day.is_some_and(|l| used.day >= l) {
            Decision::Refused {
                used,
                period: Period::Day,
            }
        } else if limits.month.is_some_and(|l| used.month >= l) {
            Decision::Refused {
                used,
                period: Period::Month,
            }
        } else {
            Decision::Allowed {
                used: Used {
                    day: used.day + 1,
                    month: used.month + 1,
                },
            }
        }
    }
}

/// Counters shared by every instance (Redis). Each call is atomic on the backend.
pub trait SharedCounters: Send + Sync + 'static {
    fn try_consume(
        &self,
        user: &str,
        service: Service,
        limits: Limits,
        periods: &Periods,
    ) -> BoxFuture<'static, anyhow::Result<Decision>>;
    fn refund(
        &self,
        user: &str,
        service: Service,
        periods: &Periods,
    ) -> BoxFuture<'static, anyhow::Result<()>>;
    fn used(
        &self,
        user: &str,
        periods: &Periods,
    ) -> BoxFuture<'static, anyhow::Result<HashMap<Service, Used>>>;
}

/// The durable record of usage, per user, service and day.
pub trait UsageStore: Send + Sync + 'static {
    /// Adds `delta` (1, or -1 for a refund) to the day's count.
    fn record(
        &self,
        user: &str,
        service: Service,
        day: &str,
        delta: i64,
    ) -> BoxFuture<'static, anyhow::Result<()>>;
    /// Usage of the day and month of `periods`.
    fn load(
        &self,
        user: &str,
        periods: &Periods,
    ) -> BoxFuture<'static, anyhow::Result<HashMap<Service, Used>>>;
}

/// Where counters live.
#[derive(Clone)]
pub enum Counters {
    /// In the user's actor (one instance only).
    InProcess,
    /// In a backend every instance shares.
    Shared(Arc<dyn SharedCounters>),
}

// ---- messages -------------------------------------------------------------------------

/// Check the limits of `service` and count one unit if they allow it.
#[derive(Message, Debug, Clone)]
#[rtype(result = "anyhow::Result<Decision>")]
pub struct Consume {
    pub user: String,
    pub service: Service,
    pub limits: Limits,
    pub periods: Periods,
}

/// Give back a unit counted by [`Consume`] (a failed or cancelled generation).
#[derive(Message, Debug, Clone)]
#[rtype(result = "anyhow::Result<()>")]
pub struct Refund {
    pub user: String,
    pub service: Service,
    pub periods: Periods,
}

/// Usage of every service in the current day and month.
#[derive(Message, Debug, Clone)]
#[rtype(result = "anyhow::Result<HashMap<Service, Used>>")]
pub struct GetUsage {
    pub user: String,
    pub periods: Periods,
}

// ---- the per-user actor -----------------------------------------------------------------

/// An idle user's actor stops after this long; it reloads from the store when needed.
const IDLE_TIMEOUT: Duration = Duration::from_secs(600);

pub struct QuotaActor {
    user: String,
    counters: Counters,
    store: Arc<dyn UsageStore>,
    /// In-process counters of the current periods (`None` until loaded from the store).
    local: Option<LocalCounters>,
    last_active: Instant,
}

struct LocalCounters {
    periods: Periods,
    used: HashMap<Service, Used>,
}

impl QuotaActor {
    fn new(user: String, counters: Counters, store: Arc<dyn UsageStore>) -> Self {
        QuotaActor {
            user,
            counters,
            store,
            local: None,
            last_active: Instant::now(),
        }
    }
}

impl Actor for QuotaActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        ctx.run_interval(Duration::from_secs(60), |act, ctx| {
            if act.last_active.elapsed() > IDLE_TIMEOUT {
                ctx.stop();
            }
        });
    }
}

/// In-process counters for `periods`: loaded from the store on first use and again when
/// the day or month rolls over (the month's count carries over midnight).
async fn local_used(
    store: Arc<dyn UsageStore>,
    user: String,
    current: Option<LocalCounters>,
    periods: Periods,
) -> anyhow::Result<LocalCounters> {
    match current {
        Some(c) if c.periods == periods => Ok(c),
        _ => Ok(LocalCounters {
            used: store.load(&user, &periods).await?,
            periods,
        }),
    }
}

impl Handler<Consume> for QuotaActor {
    type Result = AtomicResponse<Self, anyhow::Result<Decision>>;

    fn handle(&mut self, msg: Consume, _: &mut Context<Self>) -> Self::Result {
        self.last_active = Instant::now();
        let store = self.store.clone();
        let user = self.user.clone();
        match self.counters.clone() {
            Counters::Shared(shared) => AtomicResponse::new(Box::pin(
                async move {
                    let decision = shared
                        .try_consume(&user, msg.service, msg.limits, &msg.periods)
                        .await?;
                    if matches!(decision, Decision::Allowed { .. }) {
                        store.record(&user, msg.service, &msg.periods.day, 1).await?;
                    }
                    Ok(decision)
                }
                .into_actor(self),
            )),
            Counters::InProcess => {
                let current = self.local.take();
                AtomicResponse::new(Box::pin(
                    local_used(store.clone(), user.clone(), current, msg.periods.clone())
                        .into_actor(self)
                        .then(move |loaded, act, _| {
                            let outcome = loaded.map(|mut counters| {
                                let used = counters.used.get(&msg.service).copied().unwrap_or_default();
                                let decision = Decision::decide(used, msg.limits);
                                if let Decision::Allowed { used } = decision {
                                    counters.used.insert(msg.service, used);
                                }
                                act.local = Some(counters);
                                decision
                            });
                            async move {
                                let decision = outcome?;
                                if matches!(decision, Decision::Allowed { .. }) {
                                    store.record(&user, msg.service, &msg.periods.day, 1).await?;
                                }
                                Ok(decision)
                            }
                            .into_actor(act)
                        }),
                ))
            }
        }
    }
}

impl Handler<Refund> for QuotaActor {
    type Result = AtomicResponse<Self, anyhow::Result<()>>;

    fn handle(&mut self, msg: Refund, _: &mut Context<Self>) -> Self::Result {
        self.last_active = Instant::now();
        let store = self.store.clone();
        let user = self.user.clone();
        if let Some(local) = self.local.as_mut().filter(|l| l.periods == msg.periods) {
            if let Some(used) = local.used.get_mut(&msg.service) {
                used.day = used.day.saturating_sub(1);
                used.month = used.month.saturating_sub(1);
            }
        }
        let shared = match &self.counters {
            Counters::Shared(shared) => Some(shared.clone()),
            Counters::InProcess => None,
        };
        AtomicResponse::new(Box::pin(
            async move {
                if let Some(shared) = shared {
                    shared.refund(&user, msg.service, &msg.periods).await?;
                }
                store.record(&user, msg.service, &msg.periods.day, -1).await
            }
            .into_actor(self),
        ))
    }
}

impl Handler<GetUsage> for QuotaActor {
    type Result = AtomicResponse<Self, anyhow::Result<HashMap<Service, Used>>>;

    fn handle(&mut self, msg: GetUsage, _: &mut Context<Self>) -> Self::Result {
        let store = self.store.clone();
        let user = self.user.clone();
        match self.counters.clone() {
            Counters::Shared(shared) => AtomicResponse::new(Box::pin(
                async move { shared.used(&user, &msg.periods).await }.into_actor(self),
            )),
            Counters::InProcess => {
                let current = self.local.take();
                AtomicResponse::new(Box::pin(
                    local_used(store, user, current, msg.periods)
                        .into_actor(self)
                        .map(|loaded, act, _| {
                            let counters = loaded?;
                            let used = counters.used.clone();
                            act.local = Some(counters);
                            Ok(used)
                        }),
                ))
            }
        }
    }
}

// ---- the hub ------------------------------------------------------------------------------

/// Finds (or starts) the actor of a user and forwards messages to it.
pub struct QuotaHub {
    counters: Counters,
    store: Arc<dyn UsageStore>,
    users: HashMap<String, Addr<QuotaActor>>,
}

impl QuotaHub {
    pub fn new(counters: Counters, store: Arc<dyn UsageStore>) -> Self {
        QuotaHub {
            counters,
            store,
            users: HashMap::new(),
        }
    }

    fn actor(&mut self, user: &str) -> Addr<QuotaActor> {
        if let Some(addr) = self.users.get(user).filter(|a| a.connected()) {
            return addr.clone();
        }
        let addr = QuotaActor::new(user.to_owned(), self.counters.clone(), self.store.clone()).start();
        self.users.insert(user.to_owned(), addr.clone());
        addr
    }
}

impl Actor for QuotaHub {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        // Forget the actors that idled out.
        ctx.run_interval(Duration::from_secs(60), |hub, _| {
            hub.users.retain(|_, a| a.connected())
        });
    }
}

macro_rules! forward {
    ($msg:ty, $out:ty) => {
        impl Handler<$msg> for QuotaHub {
            type Result = ResponseActFuture<Self, $out>;

            fn handle(&mut self, msg: $msg, _: &mut Context<Self>) -> Self::Result {
                let addr = self.actor(&msg.user);
                let retry = msg.clone();
                Box::pin(addr.send(msg).into_actor(self).then(move |sent, hub, _| {
                    let outcome: BoxFuture<'static, $out> = match sent {
                        Ok(out) => Box::pin(async move { out }),
                        // The actor idled out with this message in its mailbox: start a
                        // new one (it reloads from the store) and ask again, once.
                        Err(MailboxError::Closed) => {
                            hub.users.remove(&retry.user);
                            let addr = hub.actor(&retry.user);
                            Box::pin(async move {
                                addr.send(retry)
                                    .await
                                    .map_err(|e| anyhow::anyhow!("quota actor: {e}"))?
                            })
                        }
                        Err(e) => Box::pin(async move { Err(anyhow::anyhow!("quota actor: {e}")) }),
                    };
                    outcome.into_actor(hub)
                }))
            }
        }
    };
}

forward!(Consume, anyhow::Result<Decision>);
forward!(Refund, anyhow::Result<()>);
forward!(GetUsage, anyhow::Result<HashMap<Service, Used>>);

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// A store that keeps records in memory, as the database would.
    #[derive(Default)]
    struct MemoryStore(Mutex<HashMap<(String, Service, String), i64>>);

    impl UsageStore for MemoryStore {
        fn record(
            &self,
            user: &str,
            service: Service,
            day: &str,
            delta: i64,
        ) -> BoxFuture<'static, anyhow::Result<()>> {
            *self
                .0
                .lock()
                .unwrap()
                .entry((user.into(), service, day.into()))
                .or_default() += delta;
            Box::pin(async { Ok(()) })
        }

        fn load(
            &self,
            user: &str,
            periods: &Periods,
        ) -> BoxFuture<'static, anyhow::Result<HashMap<Service, Used>>> {
            let mut used: HashMap<Service, Used> = HashMap::new();
            for ((u, service, day), n) in self.0.lock().unwrap().iter() {
                if u == user && day.starts_with(&periods.month) {
                    let entry = used.entry(*service).or_default();
                    entry.month += *n as u32;
                    if *day == periods.day {
                        entry.day += *n as u32;
                    }
                }
            }
            Box::pin(async move { Ok(used) })
        }
    }

    fn periods(day: &str) -> Periods {
        Periods {
            day: day.into(),
            month: day[..7].into(),
            day_ttl: Duration::from_secs(90_000),
            month_ttl: Duration::from_secs(2_764_800),
        }
    }

    fn consume(day: &str, limits: Limits) -> Consume {
        Consume {
            user: "u1".into(),
            service: Service::Responses,
            limits,
            periods: periods(day),
        }
    }

    #[actix_rt::test]
    async fn concurrent_consumes_at_the_edge_let_exactly_the_limit_through() {
        let store = Arc::new(MemoryStore::default());
        let hub = QuotaHub::new(Counters::InProcess, store.clone()).start();
        let limits = Limits {
            day: Some(50),
            month: None,
        };
        for _ in 0..49 {
            hub.send(consume("2026-11-22", limits)).await.unwrap().unwrap();
        }
        let racers = (0..20).map(|_| hub.send(consume("2026-11-22", limits)));
        let results = futures_util::future::join_all(racers).await;
        let allowed = results
            .iter()
            .filter(|r| matches!(r, Ok(Ok(Decision::Allowed { .. }))))
            .count();
        assert_eq!(allowed, 1);
        let usage = hub
            .send(GetUsage {
                user: "u1".into(),
                periods: periods("2026-11-22"),
            })
            .await
            .unwrap()
            .unwrap();
        assert_eq!(usage[&Service::Responses], Used { day: 50, month: 50 });
    }

    #[actix_rt::test]
    async fn a_new_day_resets_the_daily_count_but_not_the_monthly_one() {
        let store = Arc::new(MemoryStore::default());
        let hub = QuotaHub::new(Counters::InProcess, store).start();
        let limits = Limits {
            day: Some(2),
            month: Some(3),
        };
        for _ in 0..2 {
            assert!(matches!(
                hub.send(consume("2026-11-22", limits)).await.unwrap().unwrap(),
                Decision::Allowed { .. }
            ));
        }
        let refused = hub.send(consume("2026-11-22", limits)).await.unwrap().unwrap();
        assert!(matches!(
            refused,
            Decision::Refused {
                period: Period::Day,
                ..
            }
        ));
        let next_day = hub.send(consume("2026-11-23", limits)).await.unwrap().unwrap();
        assert_eq!(
            next_day,
            Decision::Allowed {
                used: Used { day: 1, month: 3 }
            }
        );
        let month_full = hub.send(consume("2026-11-24", limits)).await.unwrap().unwrap();
        assert!(matches!(
            month_full,
            Decision::Refused {
                period: Period::Month,
                ..
            }
        ));
        let next_month = hub.send(consume("2026-12-01", limits)).await.unwrap().unwrap();
        assert_eq!(
            next_month,
            Decision::Allowed {
                used: Used { day: 1, month: 1 }
            }
        );
    }

    #[actix_rt::test]
    async fn a_refund_gives_the_unit_back_and_a_new_actor_reloads_from_the_store() {
        let store = Arc::new(MemoryStore::default());
        let limits = Limits {
            day: Some(1),
            month: None,
        };
        {
            let hub = QuotaHub::new(Counters::InProcess, store.clone()).start();
            hub.send(consume("2026-11-22", limits)).await.unwrap().unwrap();
            let refund = Refund {
                user: "u1".into(),
                service: Service::Responses,
                periods: periods("2026-11-22"),
            };
            hub.send(refund).await.unwrap().unwrap();
            assert!(matches!(
                hub.send(consume("2026-11-22", limits)).await.unwrap().unwrap(),
                Decision::Allowed { .. }
            ));
        }
        // A fresh hub (a restart) knows the day's usage from the store.
        let hub = QuotaHub::new(Counters::InProcess, store).start();
        let again = hub.send(consume("2026-11-22", limits)).await.unwrap().unwrap();
        assert!(matches!(
            again,
            Decision::Refused {
                period: Period::Day,
                used: Used { day: 1, month: 1 }
            }
        ));
    }
}
