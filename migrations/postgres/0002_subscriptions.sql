-- Subscriptions, payments and durable usage records.

-- One row per user. A user without a row is on the free plan (the row is created on
-- first use). `pending_plan_type` is a scheduled change that activates at `end_date`;
-- a cancellation is a scheduled change to free.
CREATE TABLE subscriptions (
    id                  TEXT PRIMARY KEY NOT NULL,
    user_id             TEXT NOT NULL UNIQUE REFERENCES users(id) ON DELETE CASCADE,
    plan_type           TEXT NOT NULL CHECK (plan_type IN ('free', 'base', 'plus', 'pro')),
    status              TEXT NOT NULL DEFAULT 'active',
    -- monthly (renews) or one_time (30 days); NULL on free
    billing_cycle       TEXT CHECK (billing_cycle IN ('monthly', 'one_time')),
    payment_method      TEXT,
    currency            TEXT,
    start_date          BIGINT NOT NULL,
    end_date            BIGINT,
    pending_plan_type   TEXT CHECK (pending_plan_type IN ('free', 'base', 'plus', 'pro')),
    pending_since       BIGINT,
    created_at          BIGINT NOT NULL,
    updated_at          BIGINT NOT NULL
);
CREATE INDEX subscriptions_end_date ON subscriptions (end_date);

-- Every charge: a checkout the user starts, or a renewal. Amounts in minor units
-- (cents, fillér); VAT is stored apart from the net amount.
CREATE TABLE payments (
    id                  TEXT PRIMARY KEY NOT NULL,
    user_id             TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    plan_type           TEXT NOT NULL,
    billing_cycle       TEXT NOT NULL,
    kind                TEXT NOT NULL CHECK (kind IN ('checkout', 'renewal')),
    status              TEXT NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed', 'canceled')),
    currency            TEXT NOT NULL,
    net_amount          BIGINT NOT NULL,
    vat_rate            DOUBLE PRECISION NOT NULL,
    vat_amount          BIGINT NOT NULL,
    total_amount        BIGINT NOT NULL,
    provider            TEXT NOT NULL,
    provider_ref        TEXT,
    payment_method      TEXT NOT NULL,
    idempotency_key     TEXT,
    created_at          BIGINT NOT NULL,
    completed_at        BIGINT
);
CREATE INDEX payments_user ON payments (user_id, created_at);
CREATE UNIQUE INDEX payments_idempotency ON payments (user_id, idempotency_key);

-- Units used per user, service and day (in the plan catalogue's timezone). Kept 24
-- months; a daily job deletes older rows.
CREATE TABLE usage_daily (
    user_id             TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    service             TEXT NOT NULL,
    day                 TEXT NOT NULL,
    used                BIGINT NOT NULL,
    PRIMARY KEY (user_id, service, day)
);
CREATE INDEX usage_daily_day ON usage_daily (day);
