//! Quotas as the rest of the server uses them: limits come from the user's plan, periods
//! from the clock in the catalogue's timezone, and the count itself from the quota actors
//! (`chat_actors::quota`), backed by Redis when configured.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use chat_actors::quota::{
    BatchStore, BufferedStore, Consume, Counted, Counters, Decision, GetUsage, Limits, Period, Periods,
    QuotaActors, Refund, ResetDay, SharedCounters, UndoReset, UsageDeltas, UsageStore, Used,
};
use chat_actors::shard::Shards;
use chat_contract::states::Service;
use chat_contract::views::{LimitInfo, Usage, UsageCounter, UsageService, UsageServices};
use chrono::{DateTime, Datelike, Months, NaiveDate, TimeZone};
use chrono_tz::Tz;
use futures_util::future::BoxFuture;

use crate::clock::{SharedClock, DAY_MS};
use crate::db::Db;
use crate::error::{ApiError, ErrorCode, Result};
use crate::outage::redis_call;
use crate::plans::{Catalogue, PlanType};

/// The current day and month with their bounds (unix ms).
#[derive(Debug, Clone)]
pub struct Window {
    pub periods: Periods,
    pub day_start: i64,
    pub day_end: i64,
    pub month_start: i64,
    pub month_end: i64,
}

fn local_midnight(tz: Tz, date: NaiveDate) -> i64 {
    // Where DST skips midnight, the day starts at the first instant that exists.
    (0..3)
        .find_map(|h| tz.from_local_datetime(&date.and_hms_opt(h, 0, 0)?).earliest())
        .map_or_else(
            || date.and_hms_opt(0, 0, 0).unwrap().and_utc().timestamp_millis(),
            |t| t.timestamp_millis(),
        )
}

/// The day and month around `now_ms` in `tz`.
pub fn window(now_ms: i64, tz: Tz) -> Window {
    let local = DateTime::from_timestamp_millis(now_ms)
        .unwrap_or_default()
        .with_timezone(&tz);
    let date = local.date_naive();
    let month_first = date.with_day(1).expect("day 1 exists");
    let next_month = month_first.checked_add_months(Months::new(1)).expect("in range");
    let next_day = date.succ_opt().expect("in range");
    let (day_start, day_end) = (local_midnight(tz, date), local_midnight(tz, next_day));
    let (month_start, month_end) = (local_midnight(tz, month_first), local_midnight(tz, next_month));
    // Counters outlive their period by a day, so a refund near midnight still finds them.
    let ttl = |end: i64| Duration::from_millis((end - now_ms + DAY_MS).max(DAY_MS) as u64);
    Window {
        periods: Periods {
            day: date.format("%Y-%m-%d").to_string(),
            month: date.format("%Y-%m").to_string(),
            day_ttl: ttl(day_end),
            month_ttl: ttl(month_end),
        },
        day_start,
        day_end,
        month_start,
        month_end,
    }
}

pub use crate::clock::iso;

/// How often counted units are written to the database (and at shutdown).
const USAGE_FLUSH: Duration = Duration::from_secs(1);

#[derive(Clone)]
pub struct Quotas {
    actors: QuotaActors,
    /// The Redis counters the actors use, if any: read directly for many users at once.
    shared: Option<Arc<RedisCounters>>,
    usage: Arc<BufferedStore<DbUsageStore>>,
    db: Db,
    catalogue: Arc<Catalogue>,
    clock: SharedClock,
    /// How long a check may wait for its turn (see [`Consume::deadline`]).
    deadline: Duration,
}

impl Quotas {
    /// Quota actors on the users' shards (or, without shards, where first asked), and
    /// the usage record written behind every second.
    pub fn start(
        db: Db,
        redis: Option<(crate::redis_conn::Redis, String, Duration)>,
        catalogue: Arc<Catalogue>,
        clock: SharedClock,
        shards: Option<Shards>,
    ) -> Quotas {
        let usage = BufferedStore::new(DbUsageStore(db.clone()));
        usage.spawn_flusher(USAGE_FLUSH);
        // In process, a check waits only for the user's earlier ones (a database read
        // at most): the deadline is for a backend that may pause.
        let mut deadline = Duration::from_secs(10);
        let shared = redis.map(|(conn, prefix, timeout)| {
            deadline = timeout;
            let record: Arc<dyn UsageStore> = usage.clone();
            Arc::new(RedisCounters::new(conn, prefix, timeout, record))
        });
        let counters = match &shared {
            Some(redis) => Counters::Shared(redis.clone()),
            None => Counters::InProcess,
        };
        let actors = QuotaActors::new(counters, usage.clone(), shards);
        Quotas {
            actors,
            shared,
            usage,
            db,
            catalogue,
            clock,
            deadline,
        }
    }

    pub fn window(&self) -> Window {
        window(self.clock.now_ms(), self.catalogue.timezone)
    }

    async fn plan_of(&self, user_id: &str) -> Result<PlanType> {
        let sub = self.db.subscription(user_id, self.clock.now_ms()).await?;
        Ok(sub.plan_type)
    }

    /// Writes the usage counted so far to the database (at shutdown, and in tests).
    pub async fn flush(&self) -> anyhow::Result<()> {
        self.usage.flush().await
    }

    /// Checks and counts one unit of `service` for the user on `plan`, atomically.
    pub async fn consume_on(&self, user_id: &str, plan: PlanType, service: Service) -> Result<Counted> {
        let msg = Consume {
            user: user_id.to_owned(),
            service,
            limits: self.catalogue.plan(plan).limits(service),
            periods: self.window().periods,
            deadline: Some(std::time::Instant::now() + self.deadline),
        };
        Ok(self.actors.ask(msg).await.context("quota actor")?)
    }

    /// Checks and counts one unit of `service` for the user, atomically.
    pub async fn consume(&self, user_id: &str, service: Service) -> Result<Decision> {
        let plan = self.plan_of(user_id).await?;
        Ok(self.consume_on(user_id, plan, service).await?.decision)
    }

    /// Counts one response, or refuses with `limit_reached` (and when to come back).
    pub async fn consume_response(&self, user_id: &str) -> Result<Used> {
        let plan = self.plan_of(user_id).await?;
        let counted = self.consume_response_on(user_id, plan).await?;
        Ok(counted
            .usage
            .get(&Service::Responses)
            .copied()
            .unwrap_or_default())
    }

    /// The same for a user whose plan is known, with every service's usage.
    pub async fn consume_response_on(&self, user_id: &str, plan: PlanType) -> Result<Counted> {
        let counted = self.consume_on(user_id, plan, Service::Responses).await?;
        match counted.decision {
            Decision::Allowed { .. } => Ok(counted),
            Decision::Refused { period, .. } => {
                let w = self.window();
                let (field, resets_at) = match period {
                    Period::Day => ("day", w.day_end),
                    Period::Month => ("month", w.month_end),
                };
                let secs = ((resets_at - self.clock.now_ms()) / 1000).max(1) as u64;
                Err(ApiError::Client {
                    code: ErrorCode::LimitReached,
                    field: Some(field),
                    max: None,
                    retry_after_secs: Some(secs),
                })
            }
        }
    }

    /// Gives back a unit (a failed or cancelled generation).
    pub async fn refund(&self, user_id: &str, service: Service) -> Result<()> {
        let msg = Refund {
            user: user_id.to_owned(),
            service,
            periods: self.window().periods,
        };
        Ok(self.actors.ask(msg).await.context("quota actor")?)
    }

    /// An operator's reset: gives back today's count of `service`, and lowers the
    /// month's by as much (the month keeps what the other days used, so the reset never
    /// hands out more than a day's worth of the month). Answers the count taken.
    ///
    /// The counters and the audit row cannot share a transaction, so the order makes it
    /// exact: the counters are reset first, atomically, which tells the exact count taken;
    /// then `keep(taken)` writes the audit row with it; if that fails, the reset is undone
    /// by its id (in Redis, retried while Redis is away; a reset Redis never answered is
    /// undone the same way, so it cannot run later) and the call fails, with no row. Only
    /// once the row is kept does the usage record get the change.
    pub async fn reset_today<F, Fut>(&self, user_id: &str, service: Service, keep: F) -> Result<u32>
    where
        F: FnOnce(u32) -> Fut,
        Fut: std::future::Future<Output = Result<()>>,
    {
        let periods = self.window().periods;
        let reset = ResetDay {
            user: user_id.to_owned(),
            service,
            periods: periods.clone(),
            id: uuid::Uuid::now_v7().to_string(),
        };
        let taken = self.actors.ask(reset.clone()).await.context("quota actor")?;
        if let Err(e) = keep(taken).await {
            let undo = UndoReset {
                user: reset.user,
                service,
                periods: reset.periods,
                id: reset.id,
                taken,
            };
            if let Err(undo) = self.actors.ask(undo).await {
                tracing::error!(error = ?undo, user = user_id, "undoing a usage reset whose audit row failed");
            }
            return Err(e);
        }
        self.usage
            .record(user_id, service, &periods.day, -i64::from(taken))
            .await?;
        Ok(taken)
    }

    /// Today's and this month's counts of every service, for many users at once (the
    /// operator's users table), in the order of `user_ids`. Read where the actors read,
    /// without starting an actor per user: with Redis, one `MGET` for all (a user whose
    /// counters Redis lost is asked of their actor, which rebuilds them); in process, the
    /// usage record with what is buffered for it, which is what the actors hold.
    pub async fn used_of_many(&self, user_ids: &[&str]) -> Result<Vec<HashMap<Service, Used>>> {
        let periods = self.window().periods;
        let found = match &self.shared {
            Some(redis) => redis.used_many(user_ids, &periods).await?,
            None => vec![None; user_ids.len()],
        };
        let reads = user_ids.iter().zip(found).map(|(user, found)| {
            let periods = periods.clone();
            async move {
                match (found, &self.shared) {
                    (Some(used), _) => Ok(used),
                    (None, Some(_)) => {
                        let ask = GetUsage {
                            user: (*user).to_owned(),
                            periods,
                        };
                        self.actors.ask(ask).await
                    }
                    (None, None) => self.usage.load(user, &periods).await,
                }
            }
        });
        let answers = futures_util::future::join_all(reads).await;
        Ok(answers
            .into_iter()
            .collect::<anyhow::Result<Vec<_>>>()
            .context("reading quota counters")?)
    }

    /// The user's counters (`GET /api/usage/limits`, `usage.updated`).
    pub async fn usage(&self, user_id: &str) -> Result<Usage> {
        let plan = self.plan_of(user_id).await?;
        self.usage_on(user_id, plan).await
    }

    /// The counters of a user whose plan is known.
    pub async fn usage_on(&self, user_id: &str, plan: PlanType) -> Result<Usage> {
        let used = self
            .actors
            .ask(GetUsage {
                user: user_id.to_owned(),
                periods: self.window().periods,
            })
            .await
            .context("quota actor")?;
        Ok(self.usage_of(plan, &used))
    }

    /// The counters of `plan` from usage already known (a check's [`Counted::usage`]).
    pub fn usage_of(&self, plan: PlanType, used: &HashMap<Service, Used>) -> Usage {
        let plan = self.catalogue.plan(plan);
        let w = self.window();
        let counter = |limit: Option<u32>, used: u32, resets_at: i64| UsageCounter {
            limit,
            used,
            remaining: limit.map(|l| l.saturating_sub(used)),
            unlimited: limit.is_none(),
            resets_at: iso(resets_at),
        };
        let service = |service: Service| {
            let limits = plan.limits(service);
            let u = used.get(&service).copied().unwrap_or_default();
            UsageService {
                daily: counter(limits.day, u.day, w.day_end),
                monthly: counter(limits.month, u.month, w.month_end),
            }
        };
        Usage {
            has_active_limit: plan.has_limits(),
            limit_info: LimitInfo {
                limit_type: plan.plan_type,
                start_date: iso(w.day_start),
                end_date: iso(w.day_end),
                month_start_date: iso(w.month_start),
                month_end_date: iso(w.month_end),
                timezone: self.catalogue.timezone.name().to_owned(),
                services: UsageServices {
                    responses: service(Service::Responses),
                    searches: service(Service::WebSearches),
                    images: service(Service::ImageGenerations),
                },
            },
        }
    }
}

/// The durable usage record in the database.
struct DbUsageStore(Db);

impl BatchStore for DbUsageStore {
    fn load(
        &self,
        user: &str,
        periods: &Periods,
    ) -> BoxFuture<'static, anyhow::Result<HashMap<Service, Used>>> {
        let (db, user, periods) = (self.0.clone(), user.to_owned(), periods.clone());
        Box::pin(async move { Ok(db.usage(&user, &periods.day, &periods.month).await?) })
    }

    fn record_batch(&self, deltas: UsageDeltas) -> BoxFuture<'static, anyhow::Result<()>> {
        let db = self.0.clone();
        Box::pin(async move {
            let rows: Vec<_> = deltas
                .into_iter()
                .filter(|(_, delta)| *delta != 0)
                .map(|((user, service, day), delta)| (user, service.as_str(), day, delta))
                .collect();
            Ok(db.record_usage_batch(rows).await?)
        })
    }
}

/// Counters in Redis: one key per user, service and period, checked and incremented by
/// one Lua script so concurrent calls from any instance are atomic.
///
/// Redis may lose them (a restart without persistence): a user's counters of a month
/// carry a mark, and counters without it are first rebuilt from the usage record in the
/// database, so a restart never hands out the month again. A check that gets no answer in
/// time may still run later (a paused Redis runs what it queued): each carries an id, and
/// an unanswered one is undone by that id, whether it ran before the undo or runs after.
pub struct RedisCounters {
    /// Shared with the calls in flight (their futures outlive the borrow of `self`).
    inner: Arc<Inner>,
}

struct Inner {
    conn: crate::redis_conn::Redis,
    prefix: String,
    timeout: Duration,
    /// The durable record (database and what is buffered for it), to rebuild from.
    record: Arc<dyn UsageStore>,
    consume: redis::Script,
    refund: redis::Script,
    seed: redis::Script,
    reset_day: redis::Script,
}

/// KEYS: the day and month counters of every service, in `Service::ALL` order, then the
/// month's mark and the check's id. ARGV: day limit, month limit (-1: none), day TTL,
/// month TTL (seconds), and which service (1-based) to check and count. Returns {allowed
/// (1/0), refused period (0 none, 1 day, 2 month), then every counter}: the decision and
/// the usage the tabs are shown, in one call. {0, 3}: the check was undone before it ran;
/// {0, 4}: the counters have no mark (rebuild them first).
pub const CONSUME_LUA: &str = r"
local n = #KEYS - 2
local mark, id = KEYS[n + 1], KEYS[n + 2]
if redis.call('EXISTS', mark) == 0 then return {0, 4} end
if redis.call('EXISTS', id) == 1 then return {0, 3} end
local i = tonumber(ARGV[5])
local dk, mk = KEYS[2 * i - 1], KEYS[2 * i]
local d = tonumber(redis.call('GET', dk) or '0')
local m = tonumber(redis.call('GET', mk) or '0')
local dl, ml = tonumber(ARGV[1]), tonumber(ARGV[2])
local out = {1, 0}
if dl >= 0 and d >= dl then
  out = {0, 1}
elseif ml >= 0 and m >= ml then
  out = {0, 2}
else
  redis.call('INCR', dk)
  redis.call('INCR', mk)
  redis.call('EXPIRE', dk, ARGV[3])
  redis.call('EXPIRE', mk, ARGV[4])
  redis.call('SET', id, 'counted', 'EX', 120)
end
local counts = redis.call('MGET', unpack(KEYS, 1, n))
for k = 1, #counts do out[#out + 1] = tonumber(counts[k] or '0') end
return out
";

/// KEYS: the day and month counters of the checked service, and the check's id. Gives
/// back what the check counted, if it ran; either way it may not run after this.
const UNDO_LUA: &str = r"
local was = redis.call('GET', KEYS[3])
redis.call('SET', KEYS[3], 'undone', 'EX', 600)
if was ~= 'counted' then return 0 end
for i = 1, 2 do
  local v = tonumber(redis.call('GET', KEYS[i]) or '0')
  if v > 0 then redis.call('DECR', KEYS[i]) end
end
return 1
";

/// Decrements both counters, never below zero.
const REFUND_LUA: &str = r"
for i = 1, 2 do
  local v = tonumber(redis.call('GET', KEYS[i]) or '0')
  if v > 0 then redis.call('DECR', KEYS[i]) end
end
return 1
";

/// KEYS: every counter (as for the check), then the month's mark. ARGV: day TTL, month
/// TTL, then each counter's value in the record. Sets the counters and the mark, unless
/// another instance did first; a counter Redis still has and that is ahead of the
/// record (units counted and not yet written) keeps its value.
const SEED_LUA: &str = r"
local n = #KEYS - 1
if redis.call('EXISTS', KEYS[n + 1]) == 1 then return 0 end
for i = 1, n do
  local ttl = ARGV[2]
  if i % 2 == 1 then ttl = ARGV[1] end
  local stored = tonumber(ARGV[2 + i])
  local here = tonumber(redis.call('GET', KEYS[i]) or '0')
  if stored > here then redis.call('SET', KEYS[i], stored, 'EX', ttl) end
end
redis.call('SET', KEYS[n + 1], '1', 'EX', ARGV[2])
return 1
";

/// KEYS: the day and month counters of one service, the month's mark, and the reset's
/// id. ARGV: day TTL, month TTL. Sets the day's count to zero, lowers the month's by as
/// much (never below zero), keeps that count under the id for an undo, and answers it;
/// -1: the reset was undone before it ran; -2: the counters have no mark (rebuild first).
const RESET_DAY_LUA: &str = r"
if redis.call('EXISTS', KEYS[3]) == 0 then return -2 end
if redis.call('EXISTS', KEYS[4]) == 1 then return -1 end
local d = tonumber(redis.call('GET', KEYS[1]) or '0')
local m = tonumber(redis.call('GET', KEYS[2]) or '0')
redis.call('SET', KEYS[1], 0, 'EX', ARGV[1])
redis.call('SET', KEYS[2], math.max(m - d, 0), 'EX', ARGV[2])
redis.call('SET', KEYS[4], d, 'EX', 120)
return d
";

/// KEYS: the day and month counters, and the reset's id. Gives back what the reset took,
/// if it ran; either way it may not run after this.
const UNDO_RESET_LUA: &str = r"
local taken = tonumber(redis.call('GET', KEYS[3]) or '')
redis.call('SET', KEYS[3], 'undone', 'EX', 600)
if not taken then return 0 end
redis.call('INCRBY', KEYS[1], taken)
redis.call('INCRBY', KEYS[2], taken)
return 1
";

/// What a check's script answered besides a decision.
const UNDONE: i64 = 3;
const UNSEEDED: i64 = 4;

/// How often an unanswered check's undo is tried, a second apart (about a minute and
/// a half: a counted check's mark lives two minutes, so an undo finds it; the mark of an
/// undone one lives ten, so a check that Redis runs that late still finds it).
const UNDO_TRIES: u32 = 60;

impl RedisCounters {
    pub fn new(
        conn: crate::redis_conn::Redis,
        prefix: String,
        timeout: Duration,
        record: Arc<dyn UsageStore>,
    ) -> Self {
        let inner = Inner {
            conn,
            prefix,
            timeout,
            record,
            consume: redis::Script::new(CONSUME_LUA),
            refund: redis::Script::new(REFUND_LUA),
            seed: redis::Script::new(SEED_LUA),
            reset_day: redis::Script::new(RESET_DAY_LUA),
        };
        RedisCounters {
            inner: Arc::new(inner),
        }
    }
}

impl RedisCounters {
    /// The counters of many users in one round trip (a pipeline of one `MGET` a user, so
    /// no command spans two users' slots), in their order; `None` for a user whose
    /// counters have no mark (Redis lost them: read them through the actor, which
    /// rebuilds them).
    async fn used_many(
        &self,
        users: &[&str],
        periods: &Periods,
    ) -> anyhow::Result<Vec<Option<HashMap<Service, Used>>>> {
        if users.is_empty() {
            return Ok(Vec::new());
        }
        let inner = &self.inner;
        let mut pipe = redis::pipe();
        for user in users {
            pipe.cmd("MGET").arg(inner.counter_keys(user, periods));
        }
        let values: Vec<Vec<Option<u32>>> =
            redis_call(inner.timeout, pipe.query_async(&mut inner.conn.clone()))
                .await
                .context("reading quota counters")?;
        anyhow::ensure!(
            values.len() == users.len(),
            "the pipeline answered {} users",
            values.len()
        );
        Ok(values
            .iter()
            .map(|v| {
                // The last key is the month's mark.
                v.last().is_some_and(Option::is_some).then(|| {
                    Service::ALL
                        .iter()
                        .enumerate()
                        .map(|(i, s)| {
                            let used = Used {
                                day: v.get(2 * i).copied().flatten().unwrap_or(0),
                                month: v.get(2 * i + 1).copied().flatten().unwrap_or(0),
                            };
                            (*s, used)
                        })
                        .collect()
                })
            })
            .collect())
    }
}

impl Inner {
    /// The braces keep a user's keys in one Redis Cluster slot.
    fn base(&self, user: &str) -> String {
        format!("{}quota:{{{user}}}", self.prefix)
    }

    fn keys(&self, user: &str, service: Service, periods: &Periods) -> (String, String) {
        let base = format!("{}:{}", self.base(user), service.as_str());
        (
            format!("{base}:d:{}", periods.day),
            format!("{base}:m:{}", periods.month),
        )
    }

    /// Every service's day and month counter, in `Service::ALL` order, then the month's
    /// mark: the keys of [`SEED_LUA`], and the first of [`CONSUME_LUA`]'s.
    fn counter_keys(&self, user: &str, periods: &Periods) -> Vec<String> {
        let mut keys: Vec<String> = Service::ALL
            .iter()
            .copied()
            .flat_map(|s| {
                let (d, m) = self.keys(user, s, periods);
                [d, m]
            })
            .collect();
        // Says that the user's counters of the month are in Redis.
        keys.push(format!("{}:counted:{}", self.base(user), periods.month));
        keys
    }

    /// Rebuilds the user's counters (`keys`: [`Inner::counter_keys`]) from the usage
    /// record, unless they are there. Only when a call found them missing: a read of the
    /// database.
    async fn rebuild(&self, user: &str, periods: &Periods, keys: &[String]) -> anyhow::Result<()> {
        let stored = self
            .record
            .load(user, periods)
            .await
            .context("reading usage to rebuild the quota counters")?;
        let mut invocation = self.seed.prepare_invoke();
        for key in keys {
            invocation.key(key);
        }
        invocation
            .arg(periods.day_ttl.as_secs())
            .arg(periods.month_ttl.as_secs());
        for &service in Service::ALL {
            let used = stored.get(&service).copied().unwrap_or_default();
            invocation.arg(used.day).arg(used.month);
        }
        let rebuilt: i64 = redis_call(self.timeout, invocation.invoke_async(&mut self.conn.clone()))
            .await
            .context("rebuilding quota counters in Redis")?;
        if rebuilt == 1 {
            tracing::debug!("quota counters rebuilt from the usage record (Redis had lost them)");
        }
        Ok(())
    }
}

/// Undoes an unanswered check (KEYS of [`UNDO_LUA`]) or reset ([`UNDO_RESET_LUA`]), now
/// or, while Redis is away, as soon as it can. One `EVAL` (not a cached script): an undo
/// queued in a paused Redis must run right behind the call, not fail there for want of a
/// loaded script.
fn undo_later(
    mut conn: crate::redis_conn::Redis,
    timeout: Duration,
    script: &'static str,
    keys: [String; 3],
) {
    let mut undo = redis::cmd("EVAL");
    undo.arg(script).arg(keys.len()).arg(&keys);
    tokio::spawn(async move {
        for _ in 0..UNDO_TRIES {
            if redis_call(timeout, undo.query_async::<i64>(&mut conn))
                .await
                .is_ok()
            {
                return;
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    });
}

fn limit_arg(limit: Option<u32>) -> i64 {
    limit.map_or(-1, i64::from)
}

impl SharedCounters for RedisCounters {
    fn try_consume(
        &self,
        user: &str,
        service: Service,
        limits: Limits,
        periods: &Periods,
    ) -> BoxFuture<'static, anyhow::Result<Counted>> {
        let index = Service::ALL.iter().position(|s| *s == service).unwrap_or(0) + 1;
        let (inner, user, periods) = (self.inner.clone(), user.to_owned(), periods.clone());
        Box::pin(async move {
            let mut keys = inner.counter_keys(&user, &periods);
            let id = format!(
                "{}:check:{}",
                inner.base(&user),
                crate::accounts::codes::new_token()
            );
            keys.push(id.clone());
            let mut invocation = inner.consume.prepare_invoke();
            for key in &keys {
                invocation.key(key);
            }
            invocation
                .arg(limit_arg(limits.day))
                .arg(limit_arg(limits.month))
                .arg(periods.day_ttl.as_secs())
                .arg(periods.month_ttl.as_secs())
                .arg(index);
            let mut conn = inner.conn.clone();
            let mut rebuilt = false;
            let r: Vec<i64> = loop {
                let called = redis_call(inner.timeout, invocation.invoke_async::<Vec<i64>>(&mut conn)).await;
                match called {
                    Ok(r) if r == [0, UNSEEDED] => {
                        anyhow::ensure!(!rebuilt, "quota counters still missing after a rebuild");
                        rebuilt = true;
                        inner.rebuild(&user, &periods, &keys[..keys.len() - 1]).await?;
                    }
                    Ok(r) => break r,
                    Err(e) => {
                        let (day_key, month_key) = inner.keys(&user, service, &periods);
                        undo_later(conn, inner.timeout, UNDO_LUA, [day_key, month_key, id]);
                        return Err(e.context("quota script in Redis"));
                    }
                }
            };
            anyhow::ensure!(r.get(1) != Some(&UNDONE), "a quota check ran after it was undone");
            anyhow::ensure!(
                r.len() == 2 + 2 * Service::ALL.len(),
                "quota script answered {r:?}"
            );
            let usage: HashMap<Service, Used> = Service::ALL
                .iter()
                .copied()
                .enumerate()
                .map(|(k, s)| {
                    let used = Used {
                        day: r[2 + 2 * k] as u32,
                        month: r[3 + 2 * k] as u32,
                    };
                    (s, used)
                })
                .collect();
            let used = usage[&service];
            let decision = match (r[0], r[1]) {
                (1, _) => Decision::Allowed { used },
                (_, 1) => Decision::Refused {
                    used,
                    period: Period::Day,
                },
                _ => Decision::Refused {
                    used,
                    period: Period::Month,
                },
            };
            Ok(Counted { decision, usage })
        })
    }

    fn refund(
        &self,
        user: &str,
        service: Service,
        periods: &Periods,
    ) -> BoxFuture<'static, anyhow::Result<()>> {
        // Counters that Redis lost are rebuilt from the record, which has this refund:
        // no mark, nothing to give back here.
        let inner = self.inner.clone();
        let (day_key, month_key) = inner.keys(user, service, periods);
        Box::pin(async move {
            let mut invocation = inner.refund.key(day_key);
            invocation.key(month_key);
            let _: i64 = redis_call(inner.timeout, invocation.invoke_async(&mut inner.conn.clone()))
                .await
                .context("refund script in Redis")?;
            Ok(())
        })
    }

    fn reset_day(
        &self,
        user: &str,
        service: Service,
        periods: &Periods,
        id: &str,
    ) -> BoxFuture<'static, anyhow::Result<u32>> {
        let (inner, user, periods) = (self.inner.clone(), user.to_owned(), periods.clone());
        let id = format!("{}:reset:{id}", inner.base(&user));
        Box::pin(async move {
            let (day_key, month_key) = inner.keys(&user, service, &periods);
            let counter_keys = inner.counter_keys(&user, &periods);
            let mark = counter_keys.last().cloned().unwrap_or_default();
            let mut invocation = inner.reset_day.prepare_invoke();
            for key in [&day_key, &month_key, &mark, &id] {
                invocation.key(key);
            }
            invocation
                .arg(periods.day_ttl.as_secs())
                .arg(periods.month_ttl.as_secs());
            let mut conn = inner.conn.clone();
            let mut rebuilt = false;
            loop {
                match redis_call(inner.timeout, invocation.invoke_async::<i64>(&mut conn)).await {
                    Ok(-2) if !rebuilt => {
                        rebuilt = true;
                        inner.rebuild(&user, &periods, &counter_keys).await?;
                    }
                    Ok(taken) if taken >= 0 => return Ok(taken as u32),
                    Ok(other) => anyhow::bail!("the usage reset script answered {other}"),
                    Err(e) => {
                        // It may still run (a paused Redis runs what it queued): undone by id.
                        undo_later(conn, inner.timeout, UNDO_RESET_LUA, [day_key, month_key, id]);
                        return Err(e.context("usage reset script in Redis"));
                    }
                }
            }
        })
    }

    fn undo_reset(
        &self,
        user: &str,
        service: Service,
        periods: &Periods,
        id: &str,
    ) -> BoxFuture<'static, anyhow::Result<()>> {
        let inner = self.inner.clone();
        let (day_key, month_key) = inner.keys(user, service, periods);
        let keys = [day_key, month_key, format!("{}:reset:{id}", inner.base(user))];
        Box::pin(async move {
            let mut undo = redis::cmd("EVAL");
            undo.arg(UNDO_RESET_LUA).arg(keys.len()).arg(&keys);
            let mut conn = inner.conn.clone();
            if let Err(e) = redis_call(inner.timeout, undo.query_async::<i64>(&mut conn)).await {
                // Redis is away: tried again until it answers.
                undo_later(conn, inner.timeout, UNDO_RESET_LUA, keys);
                return Err(e.context("undoing a usage reset in Redis (tried again)"));
            }
            Ok(())
        })
    }

    fn used(
        &self,
        user: &str,
        periods: &Periods,
    ) -> BoxFuture<'static, anyhow::Result<HashMap<Service, Used>>> {
        let (inner, user, periods) = (self.inner.clone(), user.to_owned(), periods.clone());
        Box::pin(async move {
            let keys = inner.counter_keys(&user, &periods);
            let mut cmd = redis::cmd("MGET");
            cmd.arg(&keys);
            let mut conn = inner.conn.clone();
            let mut values: Vec<Option<u32>> = redis_call(inner.timeout, cmd.query_async(&mut conn))
                .await
                .context("reading quota counters")?;
            if values.last().is_some_and(Option::is_none) {
                inner.rebuild(&user, &periods, &keys).await?;
                values = redis_call(inner.timeout, cmd.query_async(&mut conn))
                    .await
                    .context("reading quota counters")?;
            }
            Ok(Service::ALL
                .iter()
                .copied()
                .enumerate()
                .map(|(i, s)| {
                    let used = Used {
                        day: values[2 * i].unwrap_or(0),
                        month: values[2 * i + 1].unwrap_or(0),
                    };
                    (s, used)
                })
                .collect())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(rfc3339: &str) -> i64 {
        DateTime::parse_from_rfc3339(rfc3339).unwrap().timestamp_millis()
    }

    #[test]
    fn days_and_months_follow_the_configured_timezone() {
        let w = window(at("2026-11-30T23:30:00Z"), chrono_tz::UTC);
        assert_eq!(
            (w.periods.day.as_str(), w.periods.month.as_str()),
            ("2026-11-30", "2026-11")
        );
        assert_eq!(w.day_end, at("2026-12-01T00:00:00Z"));
        assert_eq!(w.month_end, at("2026-12-01T00:00:00Z"));
        // Half past midnight in Budapest is already the next day and month.
        let w = window(at("2026-11-30T23:30:00Z"), chrono_tz::Europe::Budapest);
        assert_eq!(
            (w.periods.day.as_str(), w.periods.month.as_str()),
            ("2026-12-01", "2026-12")
        );
        assert_eq!(w.day_start, at("2026-11-30T23:00:00Z"));
    }

    #[test]
    fn a_dst_day_is_23_hours_long() {
        let w = window(at("2026-03-29T12:00:00Z"), chrono_tz::Europe::Budapest);
        assert_eq!(w.day_end - w.day_start, 23 * 3600 * 1000);
    }
}
