-- A trace shows the question it answered (issue 38): a run keeps the person's message that began
-- it (its first 500 characters), written with the run's row in the turn's one opening statement.
-- Runs from before keep none, and say so.
ALTER TABLE trace_runs ADD COLUMN question text CHECK (char_length(question) <= 500);

DROP FUNCTION app_open_turn(uuid, uuid, uuid, text, text, channel, bigint, text[], boolean, text);

CREATE FUNCTION app_open_turn(p_owner uuid, p_conversation uuid, p_run uuid, p_provider text, p_model text,
                              p_channel channel, p_recent bigint, p_categories text[], p_new boolean,
                              p_title text, p_question text, OUT history jsonb[], OUT memories text[])
    LANGUAGE plpgsql VOLATILE
    AS $$
DECLARE
    busy text;
BEGIN
    PERFORM set_config('app.owner_id', p_owner::text, true);
    PERFORM set_config('synchronous_commit', 'off', true);
    IF p_new THEN
        INSERT INTO conversations (id, owner_id, title) VALUES (p_conversation, p_owner, p_title);
        history := '{}';
    ELSE
        PERFORM 1 FROM conversations WHERE owner_id = p_owner AND id = p_conversation FOR NO KEY UPDATE;
        busy := app_conversation_busy(p_owner, p_conversation);
        IF busy IS NOT NULL THEN
            RAISE EXCEPTION USING ERRCODE = 'KB409', MESSAGE = busy;
        END IF;
        history := app_history(p_owner, p_conversation);
    END IF;
    INSERT INTO trace_runs (id, owner_id, conversation_id, provider, model, channel, question)
    VALUES (p_run, p_owner, p_conversation, p_provider, p_model, p_channel, left(p_question, 500));
    memories := app_recall(p_owner, p_recent, p_categories);
END
$$;

GRANT EXECUTE ON FUNCTION app_open_turn(uuid, uuid, uuid, text, text, channel, bigint, text[], boolean, text, text)
    TO app_user;
