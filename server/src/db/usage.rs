//! Durable usage records, per user, service and day.

use std::collections::HashMap;

use chat_actors::quota::Used;
use chat_contract::states::Service;

use super::{on_pool, on_writer, Db};

impl Db {
    /// Adds each `(user, service, day, delta)` to its day's count in one transaction,
    /// never going below zero (a refund of a unit counted before the records were kept).
    /// The two backends spell "larger of" apart.
    pub async fn record_usage_batch(
        &self,
        rows: Vec<(String, &'static str, String, i64)>,
    ) -> sqlx::Result<()> {
        if rows.is_empty() {
            return Ok(());
        }
        let greatest = match self {
            Db::Sqlite(..) => "MAX",
            Db::Postgres(_) => "GREATEST",
        };
        let sql = format!(
            "INSERT INTO usage_daily (user_id, service, day, used) \
             SELECT $1, $2, $3, {greatest}($4, 0) WHERE EXISTS (SELECT 1 FROM users WHERE id = $1) \
             ON CONFLICT (user_id, service, day) DO UPDATE SET used = {greatest}(usage_daily.used + $4, 0)"
        );
        // Written behind: the user may have deleted their account since (skipped, rather
        // than failing the batch of everyone else).
        on_writer!(self, conn => {
            for (user_id, service, day, delta) in &rows {
                sqlx::query(&sql)
                    .bind(user_id)
                    .bind(*service)
                    .bind(day)
                    .bind(*delta)
                    .execute(&mut *conn)
                    .await?;
            }
            Ok(0)
        })
        .map(drop)
    }

    /// Adds `delta` to the day's count (see [`Db::record_usage_batch`]).
    pub async fn record_usage(
        &self,
        user_id: &str,
        service: &'static str,
        day: &str,
        delta: i64,
    ) -> sqlx::Result<()> {
        self.record_usage_batch(vec![(user_id.to_owned(), service, day.to_owned(), delta)])
            .await
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
