//! The scheduler actor: applies plan changes, renewals and expiries when their time
//! comes (first right at start, so nothing due during a restart is missed), and once a
//! day deletes usage records older than 24 months. Each tick also issues the invoices of
//! paid payments that have none (a crash between the payment and its invoice).

use std::time::Duration;

use actix::prelude::*;
use actix_web::web;
use chrono::Months;

use crate::state::AppState;

pub struct Scheduler {
    state: web::Data<AppState>,
    interval: Duration,
    /// The day the retention job last ran.
    retention_day: Option<String>,
}

impl Scheduler {
    pub fn new(state: web::Data<AppState>, interval: Duration) -> Self {
        Scheduler {
            state,
            interval,
            retention_day: None,
        }
    }
}

/// Run whatever is due now; answers how many subscriptions changed.
#[derive(Message)]
#[rtype(result = "usize")]
pub struct RunDue;

impl Actor for Scheduler {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        ctx.notify(RunDue);
        ctx.run_interval(self.interval, |_, ctx| ctx.notify(RunDue));
    }
}

/// Usage records are kept this long (SPEC §1).
const RETENTION_MONTHS: u32 = 24;

impl Handler<RunDue> for Scheduler {
    // Atomic: a tick never overlaps the previous one.
    type Result = AtomicResponse<Self, usize>;

    fn handle(&mut self, _: RunDue, _: &mut Context<Self>) -> Self::Result {
        let state = self.state.clone();
        let window = state.quotas.window();
        let retention =
            (self.retention_day.as_deref() != Some(&window.periods.day)).then(|| window.periods.day.clone());
        AtomicResponse::new(Box::pin(
            async move {
                let applied = state.billing.apply_due().await.unwrap_or_else(|e| {
                    tracing::error!(error = ?e, "scheduler: applying due subscriptions");
                    0
                });
                // A crash between a payment and its invoice: issue it now.
                if let Err(e) = state.billing.issue_missing_invoices().await {
                    tracing::error!(error = ?e, "scheduler: issuing missing invoices");
                }
                // Answers still streaming after an hour lost their server.
                let now = state.now();
                if let Err(e) = state.db.close_interrupted_messages(now - 3_600_000, now).await {
                    tracing::error!(error = ?e, "scheduler: closing interrupted answers");
                }
                if let Some(today) = &retention {
                    if let Err(e) = delete_old_usage(&state, today).await {
                        tracing::error!(error = ?e, "scheduler: usage retention");
                    }
                }
                (applied, retention)
            }
            .into_actor(self)
            .map(|(applied, retention), act, _| {
                if retention.is_some() {
                    act.retention_day = retention;
                }
                applied
            }),
        ))
    }
}

async fn delete_old_usage(state: &AppState, today: &str) -> anyhow::Result<()> {
    let today = chrono::NaiveDate::parse_from_str(today, "%Y-%m-%d")?;
    let cutoff = today
        .checked_sub_months(Months::new(RETENTION_MONTHS))
        .unwrap_or(today);
    let deleted = state
        .db
        .delete_usage_before(&cutoff.format("%Y-%m-%d").to_string())
        .await?;
    if deleted > 0 {
        tracing::info!(deleted, "deleted usage records older than 24 months");
    }
    Ok(())
}
