-- Attachments (issue 13): files a user uploaded, each sent in at most one message.
--
-- No foreign keys on purpose: a row stays after its account, conversation or message
-- is deleted, until the sweep has removed its objects from the store (the local disk or
-- S3). So the database always lists every object the store holds.

CREATE TABLE files (
    id              TEXT PRIMARY KEY NOT NULL,
    user_id         TEXT NOT NULL,
    -- Both set when the file is sent in a message; NULL while it waits in a composer.
    conversation_id TEXT,
    message_id      TEXT,
    -- image (documents later)
    kind            TEXT NOT NULL,
    name            TEXT NOT NULL,
    mime            TEXT NOT NULL,
    -- Bytes stored, the thumbnail included: counted against the plan's storage.
    size            BIGINT NOT NULL,
    width           INTEGER,
    height          INTEGER,
    created_at      BIGINT NOT NULL
);
CREATE INDEX files_user ON files (user_id, created_at);
CREATE INDEX files_message ON files (message_id);
CREATE INDEX files_conversation ON files (conversation_id);
-- The sweep's stale uploads: only files never sent.
CREATE INDEX files_unsent ON files (created_at) WHERE message_id IS NULL;
