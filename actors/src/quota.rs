//! Usage quotas: one [`QuotaActor`] per active user, found through [`QuotaActors`].
//!
//! A check-and-increment is atomic. Where counters are shared between instances it is a
//! single call to a [`SharedCounters`] backend (a Lua script in Redis); in-process the
//! user's actor owns the counters and handles one message at a time, so two tabs racing
//! at 49 of 50 cannot both pass. Every counted unit is also written to a [`UsageStore`]
//! (the database), the durable record from which an in-process actor reloads its
//! counters when it starts again (after a restart, or after idling out). That record is
//! written behind ([`BufferedStore`]): in batches, off the path of a send.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix::prelude::*;
use chat_contract::states::Service;
use futures_util::future::BoxFuture;
use serde::{Deserialize, Serialize};

use crate::metrics::{self, quota_decision};
use crate::shard::Shards;

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

impl Periods {
    /// The same day and month (the TTLs change with every call, so `==` would not do).
    pub fn same_as(&self, other: &Periods) -> bool {
        self.day == other.day && self.month == other.month
    }
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

/// A check's decision, with the user's usage of every service as it left it (so the
/// tabs can be told their counters without asking again).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Counted {
    pub decision: Decision,
    pub usage: HashMap<Service, Used>,
}

/// Counters shared by every instance (Redis). Each call is atomic on the backend.
pub trait SharedCounters: Send + Sync + 'static {
    /// One round trip: the check, the count, and every service's usage.
    fn try_consume(
        &self,
        user: &str,
        service: Service,
        limits: Limits,
        periods: &Periods,
    ) -> BoxFuture<'static, anyhow::Result<Counted>>;
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
    /// Sets the day's count of `service` to zero and lowers the month's by as much;
    /// answers how much that was. Kept under `id` for [`SharedCounters::undo_reset`]; a
    /// reset whose id was undone first does nothing.
    fn reset_day(
        &self,
        user: &str,
        service: Service,
        periods: &Periods,
        id: &str,
    ) -> BoxFuture<'static, anyhow::Result<u32>>;
    /// Gives back what the reset `id` took, if it ran; it may not run after this. When
    /// Redis does not answer, tried again for a while (as an unanswered check's undo).
    fn undo_reset(
        &self,
        user: &str,
        service: Service,
        periods: &Periods,
        id: &str,
    ) -> BoxFuture<'static, anyhow::Result<()>>;
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
#[rtype(result = "anyhow::Result<Counted>")]
pub struct Consume {
    pub user: String,
    pub service: Service,
    pub limits: Limits,
    pub periods: Periods,
    /// Past this the check is not made but answered [`Overdue`]: its sender has given
    /// up (the user was told to try again), so counting it then would count a unit for
    /// nothing. A check waits behind the user's earlier ones, each bounded by the
    /// backend's time limit.
    pub deadline: Option<Instant>,
}

/// A check that waited past its deadline (the backend was slow or away).
#[derive(Debug, thiserror::Error)]
#[error("the quota check waited past its deadline")]
pub struct Overdue;

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

/// An operator's reset of today's count of `service` (see
/// [`SharedCounters::reset_day`]); answers the count it took. Nothing is written to the
/// usage record: the caller writes the change there once it is kept (or undoes it with
/// [`UndoReset`]).
#[derive(Message, Debug, Clone)]
#[rtype(result = "anyhow::Result<u32>")]
pub struct ResetDay {
    pub user: String,
    pub service: Service,
    pub periods: Periods,
    /// Names the reset for its undo.
    pub id: String,
}

/// Undoes the [`ResetDay`] of the same id, which took `taken` units.
#[derive(Message, Debug, Clone)]
#[rtype(result = "anyhow::Result<()>")]
pub struct UndoReset {
    pub user: String,
    pub service: Service,
    pub periods: Periods,
    pub id: String,
    pub taken: u32,
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
        Some(c) if c.periods.same_as(&periods) => Ok(c),
        _ => Ok(LocalCounters {
            used: store.load(&user, &periods).await?,
            periods,
        }),
    }
}

/// Counts a quota check by its service and decision (see [`metrics::QUOTA_CHECKS`]).
fn count_check(service: Service, counted: &anyhow::Result<Counted>) {
    let decision = match counted {
        Ok(Counted {
            decision: Decision::Allowed { .. },
            ..
        }) => quota_decision::ALLOWED,
        Ok(Counted {
            decision: Decision::Refused { .. },
            ..
        }) => quota_decision::REFUSED,
        Err(_) => quota_decision::FAILED,
    };
    metrics::counter!(metrics::QUOTA_CHECKS, "service" => service.as_str(), "decision" => decision)
        .increment(1);
}

impl Handler<Consume> for QuotaActor {
    type Result = AtomicResponse<Self, anyhow::Result<Counted>>;

    fn handle(&mut self, msg: Consume, _: &mut Context<Self>) -> Self::Result {
        self.last_active = Instant::now();
        if msg.deadline.is_some_and(|deadline| self.last_active > deadline) {
            let overdue = Err(Overdue.into());
            count_check(msg.service, &overdue);
            return AtomicResponse::new(Box::pin(fut::ready(overdue)));
        }
        let store = self.store.clone();
        let user = self.user.clone();
        match self.counters.clone() {
            Counters::Shared(shared) => AtomicResponse::new(Box::pin(
                async move {
                    let counted = async {
                        let counted = shared
                            .try_consume(&user, msg.service, msg.limits, &msg.periods)
                            .await?;
                        if matches!(counted.decision, Decision::Allowed { .. }) {
                            store.record(&user, msg.service, &msg.periods.day, 1).await?;
                        }
                        Ok(counted)
                    }
                    .await;
                    count_check(msg.service, &counted);
                    counted
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
                                let usage = counters.used.clone();
                                act.local = Some(counters);
                                Counted { decision, usage }
                            });
                            async move {
                                let counted = async {
                                    let counted = outcome?;
                                    if matches!(counted.decision, Decision::Allowed { .. }) {
                                        store.record(&user, msg.service, &msg.periods.day, 1).await?;
                                    }
                                    Ok(counted)
                                }
                                .await;
                                count_check(msg.service, &counted);
                                counted
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
        if let Some(local) = self.local.as_mut().filter(|l| l.periods.same_as(&msg.periods)) {
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

impl Handler<ResetDay> for QuotaActor {
    type Result = AtomicResponse<Self, anyhow::Result<u32>>;

    fn handle(&mut self, msg: ResetDay, _: &mut Context<Self>) -> Self::Result {
        self.last_active = Instant::now();
        let (store, user) = (self.store.clone(), self.user.clone());
        match self.counters.clone() {
            Counters::Shared(shared) => AtomicResponse::new(Box::pin(
                async move { shared.reset_day(&user, msg.service, &msg.periods, &msg.id).await }
                    .into_actor(self),
            )),
            Counters::InProcess => {
                let current = self.local.take();
                AtomicResponse::new(Box::pin(
                    local_used(store, user, current, msg.periods)
                        .into_actor(self)
                        .map(move |loaded, act, _| {
                            let mut counters = loaded?;
                            let used = counters.used.entry(msg.service).or_default();
                            let taken = used.day;
                            used.day = 0;
                            used.month = used.month.saturating_sub(taken);
                            act.local = Some(counters);
                            Ok(taken)
                        }),
                ))
            }
        }
    }
}

impl Handler<UndoReset> for QuotaActor {
    type Result = AtomicResponse<Self, anyhow::Result<()>>;

    fn handle(&mut self, msg: UndoReset, _: &mut Context<Self>) -> Self::Result {
        self.last_active = Instant::now();
        if let Some(local) = self.local.as_mut().filter(|l| l.periods.same_as(&msg.periods)) {
            let used = local.used.entry(msg.service).or_default();
            used.day += msg.taken;
            used.month += msg.taken;
        }
        let shared = match &self.counters {
            Counters::Shared(shared) => Some(shared.clone()),
            Counters::InProcess => None,
        };
        let user = self.user.clone();
        AtomicResponse::new(Box::pin(
            async move {
                match shared {
                    Some(shared) => shared.undo_reset(&user, msg.service, &msg.periods, &msg.id).await,
                    None => Ok(()),
                }
            }
            .into_actor(self),
        ))
    }
}

// ---- finding a user's actor ---------------------------------------------------------------

/// A message for the actor of one user.
pub trait ForUser {
    fn user(&self) -> &str;
}

impl ForUser for Consume {
    fn user(&self) -> &str {
        &self.user
    }
}

impl ForUser for Refund {
    fn user(&self) -> &str {
        &self.user
    }
}

impl ForUser for GetUsage {
    fn user(&self) -> &str {
        &self.user
    }
}

impl ForUser for ResetDay {
    fn user(&self) -> &str {
        &self.user
    }
}

impl ForUser for UndoReset {
    fn user(&self) -> &str {
        &self.user
    }
}

/// Finds (or starts) the actor of a user and sends it a message directly: a map behind a
/// lock, not a hub actor, so a check is one mailbox hop and the callers of every thread
/// do not queue behind one another. A user's actor runs on the user's shard (or, without
/// shards, on the arbiter of whoever asked first).
#[derive(Clone)]
pub struct QuotaActors {
    inner: Arc<ActorsInner>,
}

struct ActorsInner {
    counters: Counters,
    store: Arc<dyn UsageStore>,
    shards: Option<Shards>,
    users: Mutex<HashMap<String, Addr<QuotaActor>>>,
}

impl QuotaActors {
    pub fn new(counters: Counters, store: Arc<dyn UsageStore>, shards: Option<Shards>) -> Self {
        QuotaActors {
            inner: Arc::new(ActorsInner {
                counters,
                store,
                shards,
                users: Mutex::new(HashMap::new()),
            }),
        }
    }

    fn actor(&self, user: &str) -> Addr<QuotaActor> {
        let inner = &self.inner;
        let mut users = inner.users.lock().expect("quota actors lock");
        if let Some(addr) = users.get(user).filter(|a| a.connected()) {
            return addr.clone();
        }
        // Forget the actors that idled out, now and then (amortised over new ones).
        if users.len() >= 1024 && users.len().is_power_of_two() {
            users.retain(|_, a| a.connected());
        }
        let actor = QuotaActor::new(user.to_owned(), inner.counters.clone(), inner.store.clone());
        let addr = match &inner.shards {
            Some(shards) => QuotaActor::start_in_arbiter(&shards.arbiter(user), move |_| actor),
            None => actor.start(),
        };
        users.insert(user.to_owned(), addr.clone());
        addr
    }

    fn forget(&self, user: &str) {
        let mut users = self.inner.users.lock().expect("quota actors lock");
        if users.get(user).is_some_and(|a| !a.connected()) {
            users.remove(user);
        }
    }

    /// Sends `msg` to its user's actor. An actor that idled out with the message in its
    /// mailbox is replaced (the new one reloads from the store) and asked again, once.
    pub async fn ask<M, R>(&self, msg: M) -> anyhow::Result<R>
    where
        M: Message<Result = anyhow::Result<R>> + ForUser + Clone + Send + 'static,
        R: Send + 'static,
        QuotaActor: Handler<M>,
    {
        let retry = msg.clone();
        match self.actor(msg.user()).send(msg).await {
            Ok(out) => out,
            Err(MailboxError::Closed) => {
                self.forget(retry.user());
                self.actor(retry.user())
                    .send(retry)
                    .await
                    .map_err(|e| anyhow::anyhow!("quota actor: {e}"))?
            }
            Err(e) => Err(anyhow::anyhow!("quota actor: {e}")),
        }
    }
}

// ---- the usage record, written behind -----------------------------------------------------

/// What a [`BufferedStore`] writes in one go: per user, service and day, the sum of the
/// units counted and given back.
pub type UsageDeltas = HashMap<(String, Service, String), i64>;

/// The store behind a [`BufferedStore`]: it reads usage as [`UsageStore::load`] does,
/// and writes many changes at once (one transaction).
pub trait BatchStore: Send + Sync + 'static {
    fn load(
        &self,
        user: &str,
        periods: &Periods,
    ) -> BoxFuture<'static, anyhow::Result<HashMap<Service, Used>>>;
    fn record_batch(&self, deltas: UsageDeltas) -> BoxFuture<'static, anyhow::Result<()>>;
}

/// The usage record written behind: a check adds to a buffer in memory (no database
/// write on the path of a send), and [`BufferedStore::flush`] writes the buffer in one
/// transaction, every `interval` and on shutdown. Loads add what is still buffered, and
/// wait for a flush in progress, so an actor that reloads counts exactly what was
/// counted. A failed flush keeps its changes for the next one.
pub struct BufferedStore<S> {
    inner: Arc<S>,
    pending: Arc<Mutex<UsageDeltas>>,
    /// Written (held) by a flush while its changes are neither buffered nor stored;
    /// read by loads, which may run together but not during a flush.
    flushing: Arc<tokio::sync::RwLock<()>>,
}

impl<S: BatchStore> BufferedStore<S> {
    pub fn new(inner: S) -> Arc<Self> {
        Arc::new(BufferedStore {
            inner: Arc::new(inner),
            pending: Arc::new(Mutex::new(HashMap::new())),
            flushing: Arc::new(tokio::sync::RwLock::new(())),
        })
    }

    /// Writes what is buffered; on failure it stays buffered.
    pub async fn flush(&self) -> anyhow::Result<()> {
        let _writing = self.flushing.write().await;
        let batch = std::mem::take(&mut *self.pending.lock().expect("usage buffer lock"));
        if batch.is_empty() {
            return Ok(());
        }
        let written = self.inner.record_batch(batch.clone()).await;
        if written.is_err() {
            let mut pending = self.pending.lock().expect("usage buffer lock");
            for (key, delta) in batch {
                *pending.entry(key).or_default() += delta;
            }
        }
        written
    }

    /// Flushes every `interval` for as long as the store lives.
    pub fn spawn_flusher(self: &Arc<Self>, interval: Duration) {
        let store = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut ticks = tokio::time::interval(interval);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                ticks.tick().await;
                let Some(store) = store.upgrade() else { return };
                if let Err(e) = store.flush().await {
                    tracing::warn!(error = ?e, "writing usage (kept for the next try)");
                }
            }
        });
    }

    /// Changes not written yet.
    pub fn buffered(&self) -> usize {
        self.pending.lock().expect("usage buffer lock").len()
    }
}

impl<S: BatchStore> UsageStore for BufferedStore<S> {
    fn record(
        &self,
        user: &str,
        service: Service,
        day: &str,
        delta: i64,
    ) -> BoxFuture<'static, anyhow::Result<()>> {
        let mut pending = self.pending.lock().expect("usage buffer lock");
        *pending
            .entry((user.to_owned(), service, day.to_owned()))
            .or_default() += delta;
        Box::pin(async { Ok(()) })
    }

    fn load(
        &self,
        user: &str,
        periods: &Periods,
    ) -> BoxFuture<'static, anyhow::Result<HashMap<Service, Used>>> {
        let (inner, pending, flushing) = (self.inner.clone(), self.pending.clone(), self.flushing.clone());
        let (user, periods) = (user.to_owned(), periods.clone());
        Box::pin(async move {
            // No flush may move changes between the buffer and the store meanwhile.
            let _no_flush = flushing.read().await;
            let mut used = inner.load(&user, &periods).await?;
            let pending = pending.lock().expect("usage buffer lock");
            let add = |n: u32, delta: i64| (i64::from(n) + delta).max(0) as u32;
            for ((u, service, day), delta) in pending.iter() {
                if *u != user || !day.starts_with(&periods.month) {
                    continue;
                }
                let entry = used.entry(*service).or_default();
                entry.month = add(entry.month, *delta);
                if *day == periods.day {
                    entry.day = add(entry.day, *delta);
                }
            }
            Ok(used)
        })
    }
}

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

    impl BatchStore for MemoryStore {
        fn load(&self, u: &str, p: &Periods) -> BoxFuture<'static, anyhow::Result<HashMap<Service, Used>>> {
            UsageStore::load(self, u, p)
        }

        fn record_batch(&self, deltas: UsageDeltas) -> BoxFuture<'static, anyhow::Result<()>> {
            let mut records = self.0.lock().unwrap();
            for (key, delta) in deltas {
                *records.entry(key).or_default() += delta;
            }
            Box::pin(async { Ok(()) })
        }
    }

    /// A store whose batch writes fail (the database is away).
    #[derive(Default)]
    struct DownStore(MemoryStore);

    impl BatchStore for DownStore {
        fn load(&self, u: &str, p: &Periods) -> BoxFuture<'static, anyhow::Result<HashMap<Service, Used>>> {
            UsageStore::load(&self.0, u, p)
        }

        fn record_batch(&self, _: UsageDeltas) -> BoxFuture<'static, anyhow::Result<()>> {
            Box::pin(async { Err(anyhow::anyhow!("database away")) })
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
            deadline: None,
            user: "u1".into(),
            service: Service::Responses,
            limits,
            periods: periods(day),
        }
    }

    #[actix_rt::test]
    async fn concurrent_consumes_at_the_edge_let_exactly_the_limit_through() {
        let store = Arc::new(MemoryStore::default());
        let quotas = QuotaActors::new(Counters::InProcess, store.clone(), None);
        let limits = Limits {
            day: Some(50),
            month: None,
        };
        for _ in 0..49 {
            quotas.ask(consume("2026-11-22", limits)).await.unwrap();
        }
        let racers = (0..20).map(|_| quotas.ask(consume("2026-11-22", limits)));
        let results = futures_util::future::join_all(racers).await;
        let allowed = results
            .iter()
            .filter(|r| {
                matches!(
                    r,
                    Ok(Counted {
                        decision: Decision::Allowed { .. },
                        ..
                    })
                )
            })
            .count();
        assert_eq!(allowed, 1);
        let usage = quotas
            .ask(GetUsage {
                user: "u1".into(),
                periods: periods("2026-11-22"),
            })
            .await
            .unwrap();
        assert_eq!(usage[&Service::Responses], Used { day: 50, month: 50 });
    }

    #[actix_rt::test]
    async fn a_check_that_waited_past_its_deadline_is_refused_and_counts_nothing() {
        let store = Arc::new(MemoryStore::default());
        let quotas = QuotaActors::new(Counters::InProcess, store.clone(), None);
        let limits = Limits {
            day: Some(5),
            month: None,
        };
        let mut late = consume("2026-11-22", limits);
        late.deadline = Some(Instant::now() - Duration::from_millis(1));
        let refused = quotas.ask(late).await.unwrap_err();
        assert!(refused.is::<Overdue>(), "{refused:?}");
        let mut timely = consume("2026-11-22", limits);
        timely.deadline = Some(Instant::now() + Duration::from_secs(5));
        let counted = quotas.ask(timely).await.unwrap();
        assert_eq!(
            counted.decision,
            Decision::Allowed {
                used: Used { day: 1, month: 1 }
            }
        );
    }

    #[actix_rt::test]
    async fn a_new_day_resets_the_daily_count_but_not_the_monthly_one() {
        let store = Arc::new(MemoryStore::default());
        let quotas = QuotaActors::new(Counters::InProcess, store, None);
        let limits = Limits {
            day: Some(2),
            month: Some(3),
        };
        for _ in 0..2 {
            assert!(matches!(
                quotas.ask(consume("2026-11-22", limits)).await.unwrap().decision,
                Decision::Allowed { .. }
            ));
        }
        let refused = quotas.ask(consume("2026-11-22", limits)).await.unwrap().decision;
        assert!(matches!(
            refused,
            Decision::Refused {
                period: Period::Day,
                ..
            }
        ));
        let next_day = quotas.ask(consume("2026-11-23", limits)).await.unwrap().decision;
        assert_eq!(
            next_day,
            Decision::Allowed {
                used: Used { day: 1, month: 3 }
            }
        );
        let month_full = quotas.ask(consume("2026-11-24", limits)).await.unwrap().decision;
        assert!(matches!(
            month_full,
            Decision::Refused {
                period: Period::Month,
                ..
            }
        ));
        let next_month = quotas.ask(consume("2026-12-01", limits)).await.unwrap().decision;
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
            let quotas = QuotaActors::new(Counters::InProcess, store.clone(), None);
            quotas.ask(consume("2026-11-22", limits)).await.unwrap();
            let refund = Refund {
                user: "u1".into(),
                service: Service::Responses,
                periods: periods("2026-11-22"),
            };
            quotas.ask(refund).await.unwrap();
            assert!(matches!(
                quotas.ask(consume("2026-11-22", limits)).await.unwrap().decision,
                Decision::Allowed { .. }
            ));
        }
        // New actors (a restart) knows the day's usage from the store.
        let quotas = QuotaActors::new(Counters::InProcess, store, None);
        let again = quotas.ask(consume("2026-11-22", limits)).await.unwrap().decision;
        assert!(matches!(
            again,
            Decision::Refused {
                period: Period::Day,
                used: Used { day: 1, month: 1 }
            }
        ));
    }

    #[actix_rt::test]
    async fn usage_written_behind_counts_before_and_after_its_flush() {
        let buffered = BufferedStore::new(MemoryStore::default());
        let limits = Limits {
            day: Some(3),
            month: None,
        };
        let quotas = QuotaActors::new(Counters::InProcess, buffered.clone(), None);
        for _ in 0..2 {
            quotas.ask(consume("2026-11-22", limits)).await.unwrap();
        }
        // Nothing written yet: the database has no record, the buffer has both.
        assert!(buffered.inner.0.lock().unwrap().is_empty());
        assert_eq!(buffered.buffered(), 1);
        // New actors (as after idling out) reload the buffered units too.
        let reloaded = QuotaActors::new(Counters::InProcess, buffered.clone(), None);
        let third = reloaded
            .ask(consume("2026-11-22", limits))
            .await
            .unwrap()
            .decision;
        assert_eq!(
            third,
            Decision::Allowed {
                used: Used { day: 3, month: 3 }
            }
        );
        buffered.flush().await.unwrap();
        assert_eq!(buffered.buffered(), 0);
        let key = ("u1".to_owned(), Service::Responses, "2026-11-22".to_owned());
        assert_eq!(buffered.inner.0.lock().unwrap()[&key], 3);
        let again = QuotaActors::new(Counters::InProcess, buffered.clone(), None);
        assert!(matches!(
            again.ask(consume("2026-11-22", limits)).await.unwrap().decision,
            Decision::Refused {
                period: Period::Day,
                ..
            }
        ));
    }

    #[actix_rt::test]
    async fn a_failed_flush_keeps_the_usage_for_the_next_one() {
        let buffered = BufferedStore::new(DownStore::default());
        buffered
            .record("u1", Service::Responses, "2026-11-22", 1)
            .await
            .unwrap();
        buffered
            .record("u1", Service::Responses, "2026-11-22", 1)
            .await
            .unwrap();
        assert!(buffered.flush().await.is_err());
        buffered
            .record("u1", Service::Responses, "2026-11-22", -1)
            .await
            .unwrap();
        let used = buffered.load("u1", &periods("2026-11-22")).await.unwrap();
        assert_eq!(used[&Service::Responses], Used { day: 1, month: 1 });
    }
}
