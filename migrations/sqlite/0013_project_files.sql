-- A project's own files (issue 15): documents its conversations retrieve from. Such a file
-- is never sent in a message; it goes with the project, or when deleted on its own.
ALTER TABLE files ADD COLUMN project_id TEXT;
CREATE INDEX files_project ON files (project_id) WHERE project_id IS NOT NULL;
