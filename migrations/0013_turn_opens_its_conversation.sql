-- A new conversation is made by its first turn's opening, in the same statement: before, the first
-- message of every conversation paid a round trip and a commit that waited for the disk (the
-- conversation's insert) before the turn's own opening. The caller picks the new conversation's id
-- (a random UUID) and its title; `p_new` false opens a turn of a conversation that exists, as
-- before. A new conversation has no history to read.
--
-- The insert commits lazily with the rest of the opening (0008): a crash before the turn's next,
-- durable commit loses the conversation with the run row of the turn that died with it, and nobody
-- was told of it yet — its id reaches the person with the turn's end, after that commit.
DROP FUNCTION app_open_turn(uuid, uuid, uuid, text, text, channel, bigint, text[]);

CREATE FUNCTION app_open_turn(p_owner uuid, p_conversation uuid, p_run uuid, p_provider text, p_model text,
                              p_channel channel, p_recent bigint, p_categories text[], p_new boolean, p_title text,
                              OUT history jsonb[], OUT memories text[])
    LANGUAGE plpgsql VOLATILE
    AS $$
BEGIN
    PERFORM set_config('app.owner_id', p_owner::text, true);
    PERFORM set_config('synchronous_commit', 'off', true);
    IF p_new THEN
        INSERT INTO conversations (id, owner_id, title) VALUES (p_conversation, p_owner, p_title);
        history := '{}';
    ELSE
        history := app_history(p_owner, p_conversation);
    END IF;
    INSERT INTO trace_runs (id, owner_id, conversation_id, provider, model, channel)
    VALUES (p_run, p_owner, p_conversation, p_provider, p_model, p_channel);
    memories := app_recall(p_owner, p_recent, p_categories);
END
$$;

GRANT EXECUTE ON FUNCTION app_open_turn(uuid, uuid, uuid, text, text, channel, bigint, text[], boolean, text)
    TO app_user;
