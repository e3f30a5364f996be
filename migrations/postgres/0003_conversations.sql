-- Conversations and their messages.

CREATE TABLE conversations (
    id              TEXT PRIMARY KEY NOT NULL,
    user_id         TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    title           TEXT,
    model           TEXT NOT NULL,
    web_search      BOOLEAN NOT NULL DEFAULT FALSE,
    created_at      BIGINT NOT NULL,
    -- Moves on every message: the list is newest first by it.
    updated_at      BIGINT NOT NULL
);
CREATE INDEX conversations_user_updated ON conversations (user_id, updated_at, id);

CREATE TABLE messages (
    id              TEXT PRIMARY KEY NOT NULL,
    conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    role            TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
    content         TEXT NOT NULL,
    -- complete, streaming, cancelled or error
    status          TEXT NOT NULL,
    model           TEXT,
    client_id       TEXT,
    finish_reason   TEXT,
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL
);
CREATE INDEX messages_conversation ON messages (conversation_id, created_at, id);
