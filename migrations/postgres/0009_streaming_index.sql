-- Answers still streaming (the scheduler closes those whose server stopped): a small
-- index instead of a scan of every message under the write lock.
CREATE INDEX messages_streaming ON messages (updated_at) WHERE status = 'streaming';
