-- Accounts, settings, billing info, pending registrations and password resets.
-- Times are unix milliseconds (BIGINT) so both backends share one representation.

CREATE TABLE users (
    id              TEXT PRIMARY KEY NOT NULL,
    name            TEXT NOT NULL,
    email           TEXT NOT NULL UNIQUE,
    password_hash   TEXT NOT NULL,
    profile_image   TEXT,
    -- Bumped by a password change or reset: tokens carrying an older version are revoked.
    token_version   BIGINT NOT NULL DEFAULT 0,
    language        TEXT NOT NULL DEFAULT 'en-US',
    ai_enabled      BOOLEAN NOT NULL DEFAULT FALSE,
    ai_user_name    TEXT NOT NULL DEFAULT '',
    ai_user_info    TEXT NOT NULL DEFAULT '',
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL
);

CREATE TABLE billing_info (
    user_id         TEXT PRIMARY KEY NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    billing_type    TEXT NOT NULL CHECK (billing_type IN ('private', 'company')),
    name            TEXT NOT NULL,
    company_name    TEXT,
    address         TEXT NOT NULL,
    city            TEXT NOT NULL,
    postal_code     TEXT NOT NULL,
    country         TEXT NOT NULL,
    vat_number      TEXT,
    updated_at      BIGINT NOT NULL
);

-- A registration waits here until its e-mailed code is verified; the password is
-- already hashed and the code and token are stored only as keyed hashes.
CREATE TABLE pending_registrations (
    token_hash      TEXT PRIMARY KEY NOT NULL,
    name            TEXT NOT NULL,
    email           TEXT NOT NULL,
    password_hash   TEXT NOT NULL,
    language        TEXT NOT NULL,
    code_hash       TEXT NOT NULL,
    attempts        BIGINT NOT NULL DEFAULT 0,
    expires_at      BIGINT NOT NULL,
    created_at      BIGINT NOT NULL
);
CREATE INDEX pending_registrations_email ON pending_registrations (email);

CREATE TABLE password_resets (
    token_hash      TEXT PRIMARY KEY NOT NULL,
    user_id         TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    code_hash       TEXT NOT NULL,
    attempts        BIGINT NOT NULL DEFAULT 0,
    -- Set once the code is verified; only a verified reset may change the password.
    verified        BOOLEAN NOT NULL DEFAULT FALSE,
    expires_at      BIGINT NOT NULL,
    created_at      BIGINT NOT NULL
);
CREATE INDEX password_resets_user ON password_resets (user_id);
