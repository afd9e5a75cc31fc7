-- A finished turn appends only its new messages to the conversation: the cost of a turn no longer
-- grows with the conversation. Evicted messages stay in the thread (the person's record); the
-- model sees the `summary` that stands for them, then the messages from `history_from` on.
ALTER TABLE conversations
    ADD COLUMN summary jsonb CHECK (summary IS NULL OR jsonb_typeof(summary) = 'array'),
    ADD COLUMN history_from integer NOT NULL DEFAULT 0 CHECK (history_from >= 0);

-- A conversation stored before this held its summary as its first two messages (the summary and
-- the model's "Understood."): they become the summary, and the model's history starts after them.
UPDATE conversations c
SET summary = (
        SELECT jsonb_agg(m.message ORDER BY m.seq) FROM conversation_messages m
        WHERE m.conversation_id = c.id AND m.seq < 2
    ),
    history_from = 2
WHERE EXISTS (
    SELECT 1 FROM conversation_messages m
    WHERE m.conversation_id = c.id AND m.seq = 0
      AND m.message #>> '{content,0,text}' LIKE '<context\_summary>%'
);

-- How many leading messages of a waiting turn's history the conversation already holds: the
-- finish appends the rest. NULL for a turn suspended before this column, whose finish rewrites
-- the conversation's history as it did then.
ALTER TABLE suspended_turns ADD COLUMN history_base integer CHECK (history_base >= 0);
