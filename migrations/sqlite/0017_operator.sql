-- The operator console (issue 34): roles, suspension, activity, and the audit log.

-- `admin` may use /api/admin; granted and revoked from the command line only.
ALTER TABLE users ADD COLUMN role TEXT NOT NULL DEFAULT 'user' CHECK (role IN ('user', 'admin'));
-- Set while an admin has suspended the account: no login and no call work.
ALTER TABLE users ADD COLUMN suspended_at INTEGER;
-- The last login or socket connection, written at most once an hour.
ALTER TABLE users ADD COLUMN last_active_at INTEGER;

-- What an operator did, append-only: the API has no route that changes or deletes a row,
-- and each is written in the transaction of the change it records. A deleted account's
-- rows stay, detached (like its invoices): the e-mails then are copied in.
CREATE TABLE audit_log (
    -- UUIDv7: ordered by time, the page cursor.
    id              TEXT PRIMARY KEY NOT NULL,
    at              INTEGER NOT NULL,
    -- NULL for the command line, or once the admin's account is deleted.
    actor_id        TEXT REFERENCES users(id) ON DELETE SET NULL,
    actor           TEXT NOT NULL,
    action          TEXT NOT NULL,
    target_user_id  TEXT REFERENCES users(id) ON DELETE SET NULL,
    target          TEXT NOT NULL,
    reason          TEXT NOT NULL,
    -- JSON objects of texts: what the action changed, before and after.
    before          TEXT NOT NULL,
    after           TEXT NOT NULL
);
CREATE INDEX audit_log_target ON audit_log (target_user_id, id);
CREATE INDEX audit_log_actor ON audit_log (actor_id, id);

-- What is kept of a deleted account, for support ("is my account gone?") and the users
-- table's `deleted` filter: its id, e-mail, name and dates. Nothing else of it stays.
CREATE TABLE deleted_accounts (
    id              TEXT PRIMARY KEY NOT NULL,
    email           TEXT NOT NULL,
    name            TEXT NOT NULL,
    created_at      INTEGER NOT NULL,
    deleted_at      INTEGER NOT NULL
);
CREATE INDEX deleted_accounts_email ON deleted_accounts (email);
