-- Stripe: each user's Customer, the recurring Price (a Stripe Plan) made for each plan,
-- currency and amount, the Stripe Subscription behind a monthly plan, and the webhook
-- events already applied (Stripe delivers at least once, in any order).

CREATE TABLE stripe_customers (
    user_id             TEXT PRIMARY KEY NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    customer_id         TEXT NOT NULL UNIQUE,
    created_at          BIGINT NOT NULL
);

-- Keyed by the amount too: a price change in the catalogue makes a new Stripe price
-- instead of silently charging the old one.
CREATE TABLE stripe_prices (
    plan_type           TEXT NOT NULL,
    currency            TEXT NOT NULL,
    amount              BIGINT NOT NULL,
    price_id            TEXT NOT NULL UNIQUE,
    created_at          BIGINT NOT NULL,
    PRIMARY KEY (plan_type, currency, amount)
);

-- The provider's subscription that renews this plan; NULL when nothing renews it there.
ALTER TABLE subscriptions ADD COLUMN provider_subscription_id TEXT;
CREATE INDEX subscriptions_provider_subscription ON subscriptions (provider_subscription_id);

CREATE TABLE stripe_events (
    id                  TEXT PRIMARY KEY NOT NULL,
    type                TEXT NOT NULL,
    received_at         BIGINT NOT NULL
);

-- One renewal payment per paid invoice, however often its events arrive.
CREATE UNIQUE INDEX payments_provider_ref ON payments (provider, provider_ref);
