-- Secrets the server generates for itself (the token key when JWT_SECRET is unset, the
-- key that hashes codes), kept here so every instance on this database uses the same.
CREATE TABLE server_secrets (
    name            TEXT PRIMARY KEY NOT NULL,
    value           TEXT NOT NULL,
    created_at      INTEGER NOT NULL
);

-- Code checks per account (or registration e-mail) and flow, in fixed windows: a new
-- token from a resend or a new reset request does not give a guesser a fresh budget.
CREATE TABLE code_attempts (
    subject         TEXT NOT NULL,
    purpose         TEXT NOT NULL,
    window_start    INTEGER NOT NULL,
    attempts        INTEGER NOT NULL,
    PRIMARY KEY (subject, purpose)
);
