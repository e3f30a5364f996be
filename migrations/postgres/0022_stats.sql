-- The operator's stats (issue 35).
--
-- A renewing plan set to cancel: one row each time a monthly paid plan is set to end at
-- its end date (by the user, or in Stripe's dashboard), kept after the plan has ended,
-- so the stats can count cancellations by day. Taking the cancellation back before the
-- plan ends deletes its row: a plan that goes on renewing was not cancelled.
CREATE TABLE subscription_cancellations (
    id              TEXT PRIMARY KEY NOT NULL,
    at              BIGINT NOT NULL,
    -- NULL once the account is deleted: the cancellation still counts.
    user_id         TEXT REFERENCES users(id) ON DELETE SET NULL,
    -- The plan that was to renew.
    plan_type       TEXT NOT NULL
);
CREATE INDEX subscription_cancellations_at ON subscription_cancellations (at);
CREATE INDEX subscription_cancellations_user ON subscription_cancellations (user_id, at);
-- The stats read sign-ups and refunds by day.
CREATE INDEX users_created ON users (created_at);
CREATE INDEX deleted_accounts_created ON deleted_accounts (created_at);
CREATE INDEX refunds_created ON refunds (created_at);
