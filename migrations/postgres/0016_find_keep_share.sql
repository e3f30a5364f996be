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
    created_at      BIGINT NOT NULL
);
CREATE INDEX shares_user ON shares (user_id, created_at);
CREATE INDEX shares_conversation ON shares (conversation_id);

-- Full-text search: words without accents, lower case ('simple': no stemming, so a
-- word's beginning finds it in both languages), in generated columns with GIN indexes, so
-- every write keeps them and the existing rows are indexed here. `unaccent` is a contrib
-- extension (in Debian's postgresql package and on managed services); the wrapper is
-- IMMUTABLE, as an index needs, by naming its dictionary (schema-qualified, so a
-- restore's empty search_path finds it).
CREATE EXTENSION IF NOT EXISTS unaccent WITH SCHEMA public;
CREATE FUNCTION search_fold(text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
    AS $$ SELECT lower(public.unaccent('public.unaccent'::regdictionary, $1)) $$;
ALTER TABLE messages ADD COLUMN search_vector tsvector
    GENERATED ALWAYS AS (to_tsvector('simple'::regconfig, search_fold(content))) STORED;
CREATE INDEX messages_search ON messages USING GIN (search_vector);
ALTER TABLE conversations ADD COLUMN search_vector tsvector
    GENERATED ALWAYS AS (to_tsvector('simple'::regconfig, search_fold(coalesce(title, '')))) STORED;
CREATE INDEX conversations_search ON conversations USING GIN (search_vector);
