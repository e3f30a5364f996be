//! What Stripe payments keep: customers, prices, applied webhook events, and the
//! subscription that renews a user's plan there.

use super::payments::{insert_payment_query, insert_sql, PaymentRow, SELECT as PAYMENT_SELECT};
use super::subscriptions::{activation_query, Activation};
use super::{on_pool, Db};

impl Db {
    pub async fn stripe_customer(&self, user_id: &str) -> sqlx::Result<Option<String>> {
        let sql = "SELECT customer_id FROM stripe_customers WHERE user_id = $1";
        on_pool!(self, pool => sqlx::query_scalar(sql).bind(user_id).fetch_optional(pool).await)
    }

    /// Stores the user's customer unless one is stored already.
    pub async fn insert_stripe_customer(&self, user_id: &str, customer_id: &str) -> sqlx::Result<()> {
        let sql = "INSERT INTO stripe_customers (user_id, customer_id, created_at) VALUES ($1, $2, $3) \
                   ON CONFLICT DO NOTHING";
        let now = chrono::Utc::now().timestamp_millis();
        on_pool!(self, pool => sqlx::query(sql).bind(user_id).bind(customer_id).bind(now).execute(pool).await.map(drop))
    }

    pub async fn stripe_price(
        &self,
        plan_type: &str,
        currency: &str,
        amount: i64,
    ) -> sqlx::Result<Option<String>> {
        let sql = "SELECT price_id FROM stripe_prices WHERE plan_type = $1 AND currency = $2 AND amount = $3";
        on_pool!(self, pool => sqlx::query_scalar(sql).bind(plan_type).bind(currency).bind(amount).fetch_optional(pool).await)
    }

    pub async fn insert_stripe_price(
        &self,
        plan_type: &str,
        currency: &str,
        amount: i64,
        price_id: &str,
    ) -> sqlx::Result<()> {
        let sql = "INSERT INTO stripe_prices (plan_type, currency, amount, price_id, created_at) \
                   VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING";
        let now = chrono::Utc::now().timestamp_millis();
        on_pool!(self, pool => sqlx::query(sql)
            .bind(plan_type)
            .bind(currency)
            .bind(amount)
            .bind(price_id)
            .bind(now)
            .execute(pool)
            .await
            .map(drop))
    }

    /// The plan, currency and amount a price of ours charges.
    pub async fn stripe_price_plan(&self, price_id: &str) -> sqlx::Result<Option<(String, String, i64)>> {
        let sql = "SELECT plan_type, currency, amount FROM stripe_prices WHERE price_id = $1";
        on_pool!(self, pool => sqlx::query_as(sql).bind(price_id).fetch_optional(pool).await)
    }

    pub async fn stripe_event_seen(&self, id: &str) -> sqlx::Result<bool> {
        let sql = "SELECT COUNT(*) FROM stripe_events WHERE id = $1";
        let n: i64 = on_pool!(self, pool => sqlx::query_scalar(sql).bind(id).fetch_one(pool).await)?;
        Ok(n > 0)
    }

    /// Records an applied event; false if it was recorded already.
    pub async fn record_stripe_event(&self, id: &str, event_type: &str, now: i64) -> sqlx::Result<bool> {
        let sql =
            "INSERT INTO stripe_events (id, type, received_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING";
        let done = on_pool!(self, pool => sqlx::query(sql)
            .bind(id)
            .bind(event_type)
            .bind(now)
            .execute(pool)
            .await
            .map(|r| r.rows_affected()))?;
        Ok(done == 1)
    }

    /// The user whose plan `subscription_id` renews.
    pub async fn user_of_provider_subscription(&self, subscription_id: &str) -> sqlx::Result<Option<String>> {
        let sql = "SELECT user_id FROM subscriptions WHERE provider_subscription_id = $1";
        on_pool!(self, pool => sqlx::query_scalar(sql).bind(subscription_id).fetch_optional(pool).await)
    }

    pub async fn set_provider_subscription(
        &self,
        user_id: &str,
        subscription_id: Option<&str>,
    ) -> sqlx::Result<()> {
        let sql = "UPDATE subscriptions SET provider_subscription_id = $2 WHERE user_id = $1";
        on_pool!(self, pool => sqlx::query(sql).bind(user_id).bind(subscription_id).execute(pool).await.map(drop))
    }

    pub async fn payment_by_provider_ref(
        &self,
        provider: &str,
        provider_ref: &str,
    ) -> sqlx::Result<Option<PaymentRow>> {
        let sql = format!("{PAYMENT_SELECT} WHERE provider = $1 AND provider_ref = $2");
        on_pool!(self, pool => sqlx::query_as(&sql).bind(provider).bind(provider_ref).fetch_optional(pool).await)
    }

    /// Gives a pending upgrade its Stripe invoice and what that invoice charges (the
    /// prorations), in minor units.
    pub async fn set_upgrade_invoice(
        &self,
        payment_id: &str,
        invoice_id: &str,
        (net, vat, total): (i64, i64, i64),
    ) -> sqlx::Result<()> {
        let sql =
            "UPDATE payments SET provider_ref = $2, net_amount = $3, vat_amount = $4, total_amount = $5 \
                   WHERE id = $1 AND status = 'pending'";
        on_pool!(self, pool => sqlx::query(sql)
            .bind(payment_id)
            .bind(invoice_id)
            .bind(net)
            .bind(vat)
            .bind(total)
            .execute(pool)
            .await
            .map(drop))
    }

    /// Stores a renewal the provider was paid for and extends the plan to the paid
    /// period, in one transaction. Never moves the period back (an old invoice's event
    /// arriving late). False if this renewal (its `provider_ref`) was stored already.
    pub async fn record_paid_renewal(
        &self,
        payment: &PaymentRow,
        a: &Activation<'_>,
        now: i64,
    ) -> sqlx::Result<bool> {
        let insert = insert_sql("ON CONFLICT DO NOTHING");
        let current_end = "SELECT end_date FROM subscriptions WHERE user_id = $1";
        on_pool!(self, pool => {
            let mut tx = pool.begin().await?;
            let inserted = insert_payment_query!(&insert, payment)
                .execute(&mut *tx)
                .await?
                .rows_affected();
            if inserted != 1 {
                return Ok(false);
            }
            let end: Option<Option<i64>> = sqlx::query_scalar(current_end)
                .bind(&payment.user_id)
                .fetch_optional(&mut *tx)
                .await?;
            if end.flatten().is_none_or(|end| end < a.end_date) {
                activation_query!(&payment.user_id, a, now).execute(&mut *tx).await?;
            }
            tx.commit().await?;
            super::payments::count_payment(payment.status);
            Ok(true)
        })
    }
}
