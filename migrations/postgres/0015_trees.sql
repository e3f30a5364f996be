-- Conversations as trees (issue 30): a message follows its parent (NULL for a
-- conversation's first question); messages with one parent are versions of each other.
-- The conversation remembers the last message of the branch it shows.
ALTER TABLE messages ADD COLUMN parent_id TEXT;
-- A question's send options, replayed when its answer is made again: NULL (a plain
-- question), 'web_search', 'deep_search' or 'image_generation'.
ALTER TABLE messages ADD COLUMN mode TEXT;
-- An answer's rating ('up' or 'down') and the user's comment on it.
ALTER TABLE messages ADD COLUMN feedback_rating TEXT;
ALTER TABLE messages ADD COLUMN feedback_comment TEXT;
ALTER TABLE conversations ADD COLUMN current_message_id TEXT;

-- Conversations stored before were one chain, in order.
UPDATE messages SET parent_id = (
    SELECT p.id FROM messages p
    WHERE p.conversation_id = messages.conversation_id
      AND (p.created_at < messages.created_at OR (p.created_at = messages.created_at AND p.id < messages.id))
    ORDER BY p.created_at DESC, p.id DESC LIMIT 1
);
UPDATE conversations SET current_message_id = (
    SELECT m.id FROM messages m WHERE m.conversation_id = conversations.id
    ORDER BY m.created_at DESC, m.id DESC LIMIT 1
);
-- A message's versions and replies.
CREATE INDEX messages_parent ON messages (parent_id);
