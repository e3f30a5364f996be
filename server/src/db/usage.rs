//! Durable usage records, per user, service and day.

use std::collections::HashMap;

use chat_actors::quota::{Service, Used};

use super::{on_pool, Db};

impl Db {
    /// Adds `delta` to the day's count, never going below zero (a refund of a unit
    /// counted before the records were kept). The two backends spell "larger of" apart.
    pub async fn record_usage(
        &self,
        user_id: &str,
        service: &str,
        day: &str,
        delta: i64,
    ) -> sqlx::Result<()> {
        let greatest = match self {
            Db::Sqlite(_) => "MAX",
            Db::Postgres(_) => "GREATEST",
        };
        let sql = format!(
            "INSERT INTO usage_daily (user_id, service, day, used) VALUES ($1, $2, $3, {greatest}($4, 0)) \
             ON CONFLICT (user_id, service, day) DO UPDATE SET used = {greatest}(usage_daily.used + $4, 0)"
        );
        on_pool!(self, pool => sqlx::query(&sql)
            .bind(user_id)
            .bind(service)
            .bind(day)
            .bind(delta)
            .execute(pool)
            .await
            .map(drop))
    }

    /// Units used on `day` and in the month of `month` (keys `2026-11-22`, `2026-11`).
    pub async fn usage(&self, user_id: &str, day: &str, month: &str) -> sqlx::Result<HashMap<Service, Used>> {
        let sql = "SELECT service, day, used FROM usage_daily WHERE user_id = $1 AND day >= $2 AND day <= $3";
        let first = format!("{month}-01");
        let last = format!("{month}-31");
        let rows: Vec<(String, String, i64)> = on_pool!(self, pool => sqlx::query_as(sql).bind(user_id).bind(&first).bind(&last).fetch_all(pool).await)?;
        let mut used: HashMap<Service, Used> = HashMap::new();
        for (service, row_day, n) in rows {
            let Some(service) = Service::parse(&service) else {
                continue;
            };
            let entry = used.entry(service).or_default();
            let n = u32::try_from(n).unwrap_or(0);
            entry.month += n;
            if row_day == day {
                entry.day += n;
            }
        }
        Ok(used)
    }

    /// Deletes usage records of days before `day` (the 24-month retention).
    pub async fn delete_usage_before(&self, day: &str) -> sqlx::Result<u64> {
        let sql = "DELETE FROM usage_daily WHERE day < $1";
        on_pool!(self, pool => sqlx::query(sql).bind(day).execute(pool).await.map(|r| r.rows_affected()))
    }
}
