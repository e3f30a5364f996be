//! Billing information, one row per user.

use chat_contract::views::BillingType;

use super::{on_pool, Db};

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct BillingRow {
    pub billing_type: BillingType,
    pub name: String,
    pub company_name: Option<String>,
    pub address: String,
    pub city: String,
    pub postal_code: String,
    pub country: String,
    pub vat_number: Option<String>,
    /// The last VIES check of `vat_number` ([`crate::billing::vies::Check`] as JSON), when it
    /// could be reverse charged.
    pub vat_check: Option<String>,
}

impl BillingRow {
    pub fn vies_check(&self) -> Option<crate::billing::vies::Check> {
        crate::billing::vies::Check::from_json(self.vat_check.as_deref())
    }
}

impl Db {
    pub async fn billing_info(&self, user_id: &str) -> sqlx::Result<Option<BillingRow>> {
        let sql =
            "SELECT billing_type, name, company_name, address, city, postal_code, country, vat_number, \
                   vat_check FROM billing_info WHERE user_id = $1";
        on_pool!(self, pool => sqlx::query_as(sql).bind(user_id).fetch_optional(pool).await)
    }

    pub async fn put_billing_info(&self, user_id: &str, b: &BillingRow, now: i64) -> sqlx::Result<()> {
        let sql = "INSERT INTO billing_info \
            (user_id, billing_type, name, company_name, address, city, postal_code, country, vat_number, vat_check, \
            updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) \
            ON CONFLICT (user_id) DO UPDATE SET billing_type = excluded.billing_type, name = excluded.name, \
            company_name = excluded.company_name, address = excluded.address, city = excluded.city, \
            postal_code = excluded.postal_code, country = excluded.country, \
            vat_number = excluded.vat_number, vat_check = excluded.vat_check, updated_at = excluded.updated_at";
        on_pool!(self, pool => sqlx::query(sql)
            .bind(user_id)
            .bind(b.billing_type)
            .bind(&b.name)
            .bind(&b.company_name)
            .bind(&b.address)
            .bind(&b.city)
            .bind(&b.postal_code)
            .bind(&b.country)
            .bind(&b.vat_number)
            .bind(&b.vat_check)
            .bind(now)
            .execute(pool)
            .await
            .map(drop))
    }

    /// Replaces the VIES check of `user_id`'s billing info, unless its VAT number is no
    /// longer `vat_number` (saved anew meanwhile). False if nothing was replaced.
    pub async fn set_vat_check(&self, user_id: &str, vat_number: &str, check: &str) -> sqlx::Result<bool> {
        let sql = "UPDATE billing_info SET vat_check = $3 WHERE user_id = $1 AND vat_number = $2";
        let done = on_pool!(self, pool => sqlx::query(sql)
            .bind(user_id)
            .bind(vat_number)
            .bind(check)
            .execute(pool)
            .await
            .map(|r| r.rows_affected()))?;
        Ok(done == 1)
    }
}
