-- Documents (issue 13): their text is cut into chunks that questions are matched against.

-- ready, processing (text being read, chunks embedded) or failed; images are always ready.
ALTER TABLE files ADD COLUMN status TEXT NOT NULL DEFAULT 'ready';
-- How far processing is, in percent (100 once ready).
ALTER TABLE files ADD COLUMN progress INTEGER NOT NULL DEFAULT 100;
-- The model that embedded the pieces (a question must be embedded by the same one);
-- NULL when they were not embedded.
ALTER TABLE files ADD COLUMN embedding_model TEXT;
-- A PDF's page count; NULL for other kinds.
ALTER TABLE files ADD COLUMN pages INTEGER;
-- The sweep's check for documents whose instance stopped while processing them.
CREATE INDEX files_processing ON files (created_at) WHERE status = 'processing';

-- A document's text in pieces, in reading order. Deleted with its file by the sweep (no
-- foreign key, like files itself).
CREATE TABLE file_chunks (
    file_id   TEXT NOT NULL,
    seq       INTEGER NOT NULL,
    -- The PDF page the piece starts on; NULL for formats without pages.
    page      INTEGER,
    text      TEXT NOT NULL,
    -- The embedding as little-endian f32s; NULL when none was made (BM25 ranks them).
    embedding BLOB,
    PRIMARY KEY (file_id, seq)
);

-- An answer's sources: a JSON array of {fileId, name, page}; NULL when it has none.
ALTER TABLE messages ADD COLUMN sources TEXT;
