-- What each model call used and cost (issue 35): answers, titles, web search steps,
-- document embeddings and images. One row a call, written when it ends (a cancelled or
-- failed answer too); the stats of the operator console are read from these rows.
CREATE TABLE model_calls (
    -- UUIDv7: ordered by time.
    id              TEXT PRIMARY KEY NOT NULL,
    at              BIGINT NOT NULL,
    -- NULL once the account is deleted: what it cost stays in the figures.
    user_id         TEXT REFERENCES users(id) ON DELETE SET NULL,
    -- The user's plan when the call was made.
    plan_type       TEXT NOT NULL,
    -- answer | title | search | embedding | image
    kind            TEXT NOT NULL,
    model           TEXT NOT NULL,
    -- The answer a call belongs to (its title, search steps and image too), if any.
    message_id      TEXT,
    input_tokens    BIGINT NOT NULL,
    output_tokens   BIGINT NOT NULL,
    images          BIGINT NOT NULL,
    -- The provider sent no counts: ours (the model's tokenizer, or its estimate).
    estimated       BOOLEAN NOT NULL,
    -- complete | cancelled | error
    outcome         TEXT NOT NULL,
    -- At the catalogue's prices when the call was made, in billionths of a euro.
    cost_nanos      BIGINT NOT NULL
);
CREATE INDEX model_calls_at ON model_calls (at);
CREATE INDEX model_calls_user ON model_calls (user_id, at);
CREATE INDEX model_calls_message ON model_calls (message_id);
