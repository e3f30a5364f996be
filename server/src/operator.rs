//! Operator commands, run from the command line against the configured database.

use anyhow::Context;

use crate::clock::{Clock, SystemClock, DAY_MS};
use crate::config::Settings;
use crate::db::subscriptions::Activation;
use crate::db::Db;
use crate::domain::Email;
use crate::plans::PlanType;
use crate::quota::iso;

/// `chat-server users set-plan EMAIL PLAN [--days N]`: the plan starts now, for `days`
/// days, with no payment and no renewal; `free` ends any paid plan at once.
pub async fn set_plan(settings: &Settings, email: &str, plan: &str, days: i64) -> anyhow::Result<String> {
    let plan = PlanType::parse(Some(plan))
        .map_err(|_| anyhow::anyhow!("unknown plan {plan:?}: use free, base, plus or pro"))?;
    anyhow::ensure!(days >= 1, "--days must be at least 1");
    let email =
        Email::parse(Some(email)).map_err(|_| anyhow::anyhow!("{email:?} is not an e-mail address"))?;
    let db = Db::connect(&settings.database.url, &settings.server.data_dir, 2).await?;
    let user = db
        .user_by_email(email.as_str())
        .await?
        .with_context(|| format!("no user with e-mail {}", email.as_str()))?;
    let now = SystemClock.now_ms();
    let summary = if plan == PlanType::Free {
        db.subscription(&user.id, now).await?;
        db.set_free(&user.id, now).await?;
        format!("{} is now on free", email.as_str())
    } else {
        let end = now + days * DAY_MS;
        let activation = Activation {
            plan_type: plan.as_str(),
            billing_cycle: "one_time",
            payment_method: "operator",
            currency: "EUR",
            start_date: now,
            end_date: end,
        };
        db.activate_subscription(&user.id, &activation, now).await?;
        format!(
            "{} is now on {} until {}",
            email.as_str(),
            plan.as_str(),
            iso(end).unwrap_or_default()
        )
    };
    db.close().await;
    Ok(summary)
}
