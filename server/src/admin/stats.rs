//! The operator's figures for a range of days (`GET /api/admin/stats`, docs/api.md
//! "Stats"): what the answers cost, by day, model, plan and user, and what the plans
//! brought in. The rules are here: which days a query means in the operator's time zone,
//! what counts as a message, an active user, revenue and margin. `db::stats` sums.

use chat_contract::admin::{
    ActiveSubscriptions, ActiveUsers, AdminStats, Amounts, ModelFigures, PlanFigures, StatsDay, TopUser,
};
use chat_contract::states::{Currency, PaymentKind, PaymentStatus, PlanType};
use chrono::{Datelike, Days, NaiveDate, NaiveTime, TimeZone};
use chrono_tz::Tz;

use super::Admin;
use crate::clock::HOUR_MS;
use crate::db::stats::GroupBy;
use crate::error::{ApiError, ErrorCode, Result};

/// The days a range may hold at most (a leap year).
pub const MAX_DAYS: u64 = chat_contract::limits::MAX_STATS_DAYS;
/// The days of the range when `from` is not given.
pub const DEFAULT_DAYS: u64 = 30;
/// Users shown in `topUsers`.
const TOP_USERS: i64 = 10;
/// How late a model call's row may be written after its `at`: the hour sums are kept
/// once their hour ended this long ago (before, each read sums the hour again).
pub const ROLL_UP_DELAY_MS: i64 = HOUR_MS;

/// The query as sent (empty texts count as absent).
#[derive(Debug, Default)]
pub struct StatsQuery<'a> {
    pub from: Option<&'a str>,
    pub to: Option<&'a str>,
    pub by: Option<&'a str>,
    pub tz: Option<&'a str>,
}

/// The days asked for, each cut at local midnight in `tz` as unix ms `[lo, hi)`.
#[derive(Debug, Clone)]
pub struct Range {
    pub tz: Tz,
    pub dates: Vec<NaiveDate>,
    pub bounds: Vec<(i64, i64)>,
}

impl Range {
    /// The start of the range's first day and the end of its last.
    fn span(&self) -> (i64, i64) {
        (self.bounds[0].0, self.bounds[self.bounds.len() - 1].1)
    }

    /// The days as spans of UTC hours, for the hour sums of the model calls: exact in
    /// zones whose offsets are whole hours; elsewhere a day holds the hours that start in it.
    fn hours(&self) -> Vec<(i64, i64)> {
        self.bounds
            .iter()
            .map(|(lo, hi)| (hour(*lo), hour(*hi)))
            .collect()
    }

    /// The start of the `n` days that end with the range's last day. They may reach back
    /// before the range's first day: weekly and monthly actives mean the same whatever
    /// the range's length.
    fn window_start(&self, n: u64) -> i64 {
        let last = self.dates[self.dates.len() - 1];
        midnight(self.tz, last - Days::new(n - 1))
    }
}

/// The UTC hour an instant is in (hours since the epoch).
fn hour(ms: i64) -> i64 {
    ms.div_euclid(HOUR_MS)
}

fn nonempty(text: Option<&str>) -> Option<&str> {
    text.map(str::trim).filter(|t| !t.is_empty())
}

fn invalid(field: &'static str) -> ApiError {
    ApiError::field(ErrorCode::ValidationError, field)
}

/// The first instant of `date` in `tz`, in unix ms. Where a zone's clocks jump over
/// midnight (a DST change at 00:00), the day starts when its clocks start.
pub fn midnight(tz: Tz, date: NaiveDate) -> i64 {
    let mut local = date.and_time(NaiveTime::MIN);
    // Gaps are at most a few hours long; every zone's offsets are whole quarter hours.
    for _ in 0..4 * 24 {
        if let Some(start) = tz.from_local_datetime(&local).earliest() {
            return start.timestamp_millis();
        }
        local += chrono::Duration::minutes(15);
    }
    unreachable!("a day of {tz} has no instant")
}

/// The range a query means at `now`: `from` and `to` (YYYY-MM-DD, both included) in
/// `tz` (an IANA name, default UTC), by default the 30 days ending today; `by` only
/// `day`. Each wrong part is a `validation_error` about its field.
pub fn range(query: &StatsQuery<'_>, now: i64) -> Result<Range> {
    let tz: Tz = match nonempty(query.tz) {
        Some(name) => name.parse().map_err(|_| invalid("tz"))?,
        None => Tz::UTC,
    };
    if nonempty(query.by).is_some_and(|by| by != "day") {
        return Err(invalid("by"));
    }
    let date = |text: Option<&str>, field| {
        nonempty(text)
            .map(|t| {
                NaiveDate::parse_from_str(t, "%Y-%m-%d")
                    .ok()
                    // Four-digit years: no day arithmetic near chrono's limits.
                    .filter(|d| (1..=9999).contains(&d.year()))
                    .ok_or_else(|| invalid(field))
            })
            .transpose()
    };
    let from = date(query.from, "from")?;
    let to = date(query.to, "to")?;
    let today = tz
        .timestamp_millis_opt(now)
        .single()
        .expect("a clock time is a time")
        .date_naive();
    let to = to.unwrap_or(today);
    let from = from.unwrap_or(to - Days::new(DEFAULT_DAYS - 1));
    if to < from {
        return Err(invalid("to"));
    }
    let count = (to - from).num_days() as u64 + 1;
    if count > MAX_DAYS {
        return Err(invalid("from"));
    }
    let dates: Vec<NaiveDate> = from.iter_days().take(count as usize).collect();
    let bounds = dates
        .iter()
        .map(|d| (midnight(tz, *d), midnight(tz, *d + Days::new(1))))
        .collect();
    Ok(Range { tz, dates, bounds })
}

fn euros(nanos: i64) -> f64 {
    nanos as f64 / 1e9
}

/// Major units of minor ones (cents, fillér).
fn major(minor: i64) -> f64 {
    minor as f64 / 100.0
}

fn add(amounts: &mut Amounts, currency: Currency, minor: i64) {
    match currency {
        Currency::Eur => amounts.eur += major(minor),
        Currency::Huf => amounts.huf += major(minor),
    }
}

fn count(n: i64) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

fn whole(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

/// What the range's days, and the rest, come to.
struct Totals {
    active_users: ActiveUsers,
    by_model: Vec<ModelFigures>,
    top_users: Vec<TopUser>,
    subscriptions: Vec<ActiveSubscriptions>,
    mrr: Amounts,
}

impl Admin {
    /// The figures of the range `query` asks for (see [`range`]). The model calls' hour
    /// sums are brought up to date first; then the days, the plans and the rest are read
    /// at once, on three connections.
    pub async fn stats(&self, query: &StatsQuery<'_>) -> Result<AdminStats> {
        let now = self.clock.now_ms();
        let range = range(query, now)?;
        self.db.stats_roll_up(hour(now - ROLL_UP_DELAY_MS), now).await?;
        let (days, (totals, by_plan)) = futures_util::try_join!(self.days(&range), async {
            futures_util::try_join!(self.totals(&range), self.by_plan(&range))
        })?;
        Ok(AdminStats {
            from: range.dates[0].to_string(),
            to: range.dates[range.dates.len() - 1].to_string(),
            time_zone: range.tz.name().to_owned(),
            days,
            active_users: totals.active_users,
            by_model: totals.by_model,
            by_plan,
            top_users: totals.top_users,
            subscriptions: totals.subscriptions,
            mrr: totals.mrr,
        })
    }

    /// One row a day, zeros included.
    async fn days(&self, range: &Range) -> Result<Vec<StatsDay>> {
        let db = &self.db;
        let hours = range.hours();
        let mut days: Vec<StatsDay> = range
            .dates
            .iter()
            .map(|d| StatsDay {
                date: d.to_string(),
                sign_ups: 0,
                active_users: 0,
                messages: 0,
                input_tokens: 0,
                output_tokens: 0,
                cost: 0.0,
                new_subscriptions: 0,
                cancelled: 0,
                failed_renewals: 0,
                revenue: Amounts::default(),
                refunds: Amounts::default(),
            })
            .collect();
        for c in db.stats_calls_by_day(&hours).await? {
            let d = &mut days[c.day as usize];
            d.messages = count(c.messages);
            d.input_tokens = whole(c.input_tokens);
            d.output_tokens = whole(c.output_tokens);
            d.cost = euros(c.cost_nanos);
        }
        for (i, n) in db.stats_active_by_day(&hours).await? {
            days[i as usize].active_users = count(n);
        }
        for (i, n) in db.stats_sign_ups(&range.bounds).await? {
            days[i as usize].sign_ups = count(n);
        }
        for (i, n) in db.stats_cancellations(&range.bounds).await? {
            days[i as usize].cancelled = count(n);
        }
        for p in db.stats_payments_by_day(&range.bounds).await? {
            let d = &mut days[p.day as usize];
            match (p.kind, p.status) {
                (_, PaymentStatus::Succeeded) => {
                    add(&mut d.revenue, p.currency, p.net);
                    if p.kind == PaymentKind::Checkout {
                        d.new_subscriptions += count(p.count);
                    }
                }
                (PaymentKind::Renewal, PaymentStatus::Failed) => d.failed_renewals += count(p.count),
                _ => {}
            }
        }
        for r in db.stats_refunds_by_day(&range.bounds).await? {
            add(&mut days[r.day as usize].refunds, r.currency, r.net);
        }
        Ok(days)
    }

    /// Active users, models, top users, and the plans held now.
    async fn totals(&self, range: &Range) -> Result<Totals> {
        let db = &self.db;
        let (from, to) = range.span();
        let (from_hour, to_hour) = (hour(from), hour(to));
        let active_users = ActiveUsers {
            daily: count(
                db.stats_active_users(hour(range.window_start(1)), to_hour)
                    .await?,
            ),
            weekly: count(
                db.stats_active_users(hour(range.window_start(7)), to_hour)
                    .await?,
            ),
            monthly: count(
                db.stats_active_users(hour(range.window_start(30)), to_hour)
                    .await?,
            ),
        };

        let mut by_model: Vec<ModelFigures> = db
            .stats_calls_by(GroupBy::Model, from_hour, to_hour)
            .await?
            .into_iter()
            .map(|g| ModelFigures {
                model: g.grp,
                messages: count(g.messages),
                calls: count(g.calls),
                input_tokens: whole(g.input_tokens),
                output_tokens: whole(g.output_tokens),
                images: count(g.images),
                cost: euros(g.cost_nanos),
            })
            .collect();
        by_model.sort_by(|a, b| b.cost.total_cmp(&a.cost).then_with(|| a.model.cmp(&b.model)));

        let mut top_users = Vec::new();
        for u in db.stats_top_users(from_hour, to_hour, TOP_USERS).await? {
            let plan = db.stats_latest_plan(u.user_id.as_deref(), from, to).await?;
            top_users.push(TopUser {
                id: u.user_id,
                email: u.email,
                plan_type: plan.unwrap_or(PlanType::Free),
                messages: count(u.messages),
                tokens: whole(u.tokens),
                cost: euros(u.cost_nanos),
            });
        }

        let catalogue = &self.plans.catalogue;
        let mut subscriptions: Vec<ActiveSubscriptions> = db
            .stats_plans_now()
            .await?
            .into_iter()
            .map(|p| ActiveSubscriptions {
                plan_type: p.plan_type,
                billing_cycle: p.billing_cycle,
                count: count(p.count),
            })
            .collect();
        subscriptions.sort_by_key(|s| (catalogue.plan(s.plan_type).rank, s.billing_cycle.as_str()));
        let mut mrr = Amounts::default();
        for r in db.stats_renewing().await? {
            let price = catalogue.plan(r.plan_type).net_price_minor(r.currency);
            add(&mut mrr, r.currency, price * r.count);
        }
        Ok(Totals {
            active_users,
            by_model,
            top_users,
            subscriptions,
            mrr,
        })
    }

    /// Calls, revenue and margin by plan: every plan with calls or money in the range,
    /// in the catalogue's order.
    async fn by_plan(&self, range: &Range) -> Result<Vec<PlanFigures>> {
        let (from, to) = range.span();
        let rank = |p: PlanType| self.plans.catalogue.plan(p).rank;
        let mut rows: Vec<PlanFigures> = Vec::new();
        let index = |rows: &mut Vec<PlanFigures>, p: PlanType| -> usize {
            match rows.iter().position(|f| f.plan_type == p) {
                Some(i) => i,
                None => {
                    rows.push(PlanFigures {
                        plan_type: p,
                        messages: 0,
                        input_tokens: 0,
                        output_tokens: 0,
                        cost: 0.0,
                        revenue: Amounts::default(),
                        gross_margin: 0.0,
                    });
                    rows.len() - 1
                }
            }
        };
        for g in self
            .db
            .stats_calls_by(GroupBy::Plan, hour(from), hour(to))
            .await?
        {
            let Some(plan) = PlanType::parse(&g.grp) else {
                continue;
            };
            let i = index(&mut rows, plan);
            let f = &mut rows[i];
            f.messages += count(g.messages);
            f.input_tokens += whole(g.input_tokens);
            f.output_tokens += whole(g.output_tokens);
            f.cost += euros(g.cost_nanos);
        }
        for m in self.db.stats_revenue_by_plan(from, to).await? {
            let i = index(&mut rows, m.plan_type);
            add(&mut rows[i].revenue, m.currency, m.net);
        }
        for m in self.db.stats_refunds_by_plan(from, to).await? {
            let i = index(&mut rows, m.plan_type);
            add(&mut rows[i].revenue, m.currency, -m.net);
        }
        let rate = self.huf_per_eur(range).await;
        for f in &mut rows {
            let huf_in_eur = rate.map_or(0.0, |rate| f.revenue.huf / rate);
            f.gross_margin = f.revenue.eur + huf_in_eur - f.cost;
        }
        rows.sort_by_key(|f| rank(f.plan_type));
        Ok(rows)
    }

    /// Forints for one euro, for the margin: MNB's rate of the range's last day (or the
    /// last one published before it; today's at most), else the operator's fallback rate,
    /// else none (forints are then left out of the margin).
    async fn huf_per_eur(&self, range: &Range) -> Option<f64> {
        let today = range
            .tz
            .timestamp_millis_opt(self.clock.now_ms())
            .single()
            .map(|t| t.date_naive())?;
        let last = range.dates[range.dates.len() - 1].min(today);
        self.billing.huf_per_eur(last).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::MINUTE_MS;

    const HOUR: i64 = 60 * MINUTE_MS;

    fn range_of(from: &str, to: &str, tz: &str) -> Result<Range> {
        let query = StatsQuery {
            from: Some(from),
            to: Some(to),
            by: None,
            tz: Some(tz),
        };
        range(&query, 1_790_000_000_000)
    }

    #[test]
    fn days_are_cut_at_local_midnight_and_dst_days_are_23_or_25_hours() {
        let r = range_of("2026-03-28", "2026-03-30", "Europe/Budapest").unwrap();
        let lengths: Vec<i64> = r.bounds.iter().map(|(lo, hi)| (hi - lo) / HOUR).collect();
        assert_eq!(lengths, [24, 23, 24]);
        let r = range_of("2026-10-25", "2026-10-25", "Europe/Budapest").unwrap();
        assert_eq!((r.bounds[0].1 - r.bounds[0].0) / HOUR, 25);
        // Budapest's 2026-03-28 starts at 23:00 UTC the day before.
        assert_eq!(r.bounds.len(), 1);
        let r = range_of("2026-03-28", "2026-03-28", "Europe/Budapest").unwrap();
        let utc = range_of("2026-03-28", "2026-03-28", "UTC").unwrap();
        assert_eq!(utc.bounds[0].0 - r.bounds[0].0, HOUR);
    }

    #[test]
    fn a_zone_whose_clocks_skip_midnight_starts_the_day_when_they_start() {
        // Santiago moved its clocks from 00:00 to 01:00 on 2024-09-08.
        let r = range_of("2024-09-08", "2024-09-08", "America/Santiago").unwrap();
        assert_eq!((r.bounds[0].1 - r.bounds[0].0) / HOUR, 23);
    }

    #[test]
    fn wrong_queries_name_their_field() {
        let field = |r: Result<Range>| match r {
            Err(ApiError::Client { field, .. }) => field,
            other => panic!("{other:?}"),
        };
        assert_eq!(field(range_of("2026-01-02", "2026-01-01", "UTC")), Some("to"));
        assert_eq!(field(range_of("2025-01-01", "2026-01-02", "UTC")), Some("from"));
        assert!(range_of("2025-01-01", "2026-01-01", "UTC").is_ok());
        assert_eq!(field(range_of("2026-02-30", "2026-03-01", "UTC")), Some("from"));
        assert_eq!(field(range_of("2026-01-01", "01/02/2026", "UTC")), Some("to"));
        assert_eq!(
            field(range_of("2026-01-01", "2026-01-02", "Mars/Olympus")),
            Some("tz")
        );
    }
}
