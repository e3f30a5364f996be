-- Projects (issue 15): a user's folders of conversations, each with instructions every
-- conversation in it is given.
CREATE TABLE projects (
    id           TEXT PRIMARY KEY NOT NULL,
    user_id      TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    instructions TEXT NOT NULL DEFAULT '',
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL
);
CREATE INDEX projects_user ON projects (user_id, updated_at);

-- The project a conversation is in; NULL when in none. Cleared (or the conversations
-- deleted) when the project is deleted.
ALTER TABLE conversations ADD COLUMN project_id TEXT;
CREATE INDEX conversations_project ON conversations (project_id) WHERE project_id IS NOT NULL;
