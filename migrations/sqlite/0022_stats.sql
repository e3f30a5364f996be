-- The operator's stats (issue 35).
--
-- A renewing plan set to cancel: one row each time a monthly paid plan is set to end at
-- its end date (by the user, or in Stripe's dashboard), kept after the plan has ended,
-- so the stats can count cancellations by day. Taking the cancellation back before the
-- plan ends deletes its row: a plan that goes on renewing was not cancelled.
CREATE TABLE subscription_cancellations (
    id              TEXT PRIMARY KEY NOT NULL,
    at              INTEGER NOT NULL,
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

-- Model calls summed by UTC hour (`at` / 3,600,000), read by the stats instead of every
-- call (docs/performance.md, "Operator stats"). Hours are finished (written once) up to
-- `stats_rollup.done_until`; the hours after it are summed again by each stats call, as
-- their calls may still be coming. The answers' write path stays one insert.
CREATE TABLE stats_hours (
    hour            INTEGER NOT NULL,
    model           TEXT NOT NULL,
    plan_type       TEXT NOT NULL,
    messages        INTEGER NOT NULL,
    calls           INTEGER NOT NULL,
    input_tokens    INTEGER NOT NULL,
    output_tokens   INTEGER NOT NULL,
    images          INTEGER NOT NULL,
    cost_nanos      INTEGER NOT NULL,
    PRIMARY KEY (hour, model, plan_type)
);
-- The same by user (NULL for deleted accounts, as in model_calls), for active and top users.
CREATE TABLE stats_user_hours (
    hour            INTEGER NOT NULL,
    user_id         TEXT REFERENCES users(id) ON DELETE SET NULL,
    messages        INTEGER NOT NULL,
    tokens          INTEGER NOT NULL,
    cost_nanos      INTEGER NOT NULL
);
CREATE INDEX stats_user_hours_hour ON stats_user_hours (hour, user_id);
CREATE INDEX stats_user_hours_user ON stats_user_hours (user_id);
-- One row: the hours before `done_until` are finished (NULL: none yet). Its update is the
-- lock that keeps two instances from summing the same hours at once.
CREATE TABLE stats_rollup (
    id              INTEGER PRIMARY KEY NOT NULL,
    done_until      INTEGER,
    updated_at      INTEGER NOT NULL
);
INSERT INTO stats_rollup (id, done_until, updated_at) VALUES (1, NULL, 0);
