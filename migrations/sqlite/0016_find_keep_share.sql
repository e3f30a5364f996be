-- Find, keep and share conversations (issue 31).

-- Pinned ones are listed first; archived ones only in the archived list.
ALTER TABLE conversations ADD COLUMN pinned BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE conversations ADD COLUMN archived BOOLEAN NOT NULL DEFAULT FALSE;
DROP INDEX conversations_user_updated;
CREATE INDEX conversations_user_list ON conversations (user_id, archived, pinned, updated_at, id);

-- A share link: a read-only snapshot of the branch ending at `message_id` (messages never
-- change once complete, and later ones are not its ancestors, so the snapshot stays as
-- shared). The conversation's or the account's deletion ends it.
CREATE TABLE shares (
    id              TEXT PRIMARY KEY NOT NULL,
    -- 32 random bytes, base64url: the only way to the snapshot.
    token           TEXT NOT NULL UNIQUE,
    user_id         TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    message_id      TEXT NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
    title           TEXT,
    -- Shown on the shared page only when the owner chose to show it.
    owner_name      TEXT,
    created_at      INTEGER NOT NULL
);
CREATE INDEX shares_user ON shares (user_id, created_at);
CREATE INDEX shares_conversation ON shares (conversation_id);

-- Full-text search: case- and accent-insensitive words (`unicode61 remove_diacritics 2`).
-- Each index row's rowid is its message's (conversation's) rowid, so triggers keep it in
-- step with every write, including the cascades of a deleted conversation or account.
-- (No VACUUM: it may renumber the rowids of tables without an INTEGER PRIMARY KEY.)
CREATE VIRTUAL TABLE message_search USING fts5(body, tokenize = 'unicode61 remove_diacritics 2');
CREATE VIRTUAL TABLE conversation_search USING fts5(title, tokenize = 'unicode61 remove_diacritics 2');

-- A streamed answer is stored empty, then indexed once its text is written.
CREATE TRIGGER messages_search_insert AFTER INSERT ON messages WHEN new.content <> '' BEGIN
    INSERT INTO message_search (rowid, body) VALUES (new.rowid, new.content);
END;
CREATE TRIGGER messages_search_update AFTER UPDATE OF content ON messages BEGIN
    DELETE FROM message_search WHERE rowid = old.rowid;
    INSERT INTO message_search (rowid, body) SELECT new.rowid, new.content WHERE new.content <> '';
END;
CREATE TRIGGER messages_search_delete AFTER DELETE ON messages BEGIN
    DELETE FROM message_search WHERE rowid = old.rowid;
END;
CREATE TRIGGER conversations_search_insert AFTER INSERT ON conversations WHEN new.title IS NOT NULL BEGIN
    INSERT INTO conversation_search (rowid, title) VALUES (new.rowid, new.title);
END;
CREATE TRIGGER conversations_search_update AFTER UPDATE OF title ON conversations BEGIN
    DELETE FROM conversation_search WHERE rowid = old.rowid;
    INSERT INTO conversation_search (rowid, title) SELECT new.rowid, new.title WHERE new.title IS NOT NULL;
END;
CREATE TRIGGER conversations_search_delete AFTER DELETE ON conversations BEGIN
    DELETE FROM conversation_search WHERE rowid = old.rowid;
END;

-- What was stored before.
INSERT INTO message_search (rowid, body) SELECT rowid, content FROM messages WHERE content <> '';
INSERT INTO conversation_search (rowid, title) SELECT rowid, title FROM conversations WHERE title IS NOT NULL;
