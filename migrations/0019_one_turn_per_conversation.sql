-- One turn per conversation at a time. Before, two messages sent to one conversation together
-- each ran, and the last to store its history won: the other's exchange vanished from the thread.
--
-- A conversation is busy while a suspended turn of it waits for a person (until it expires), or
-- while a run of it is `running` (0018) and younger than fifteen minutes — a function runs at most
-- that long, so an older one belongs to a turn whose function died, and is no reason to wait.
CREATE FUNCTION app_conversation_busy(p_owner uuid, p_conversation uuid) RETURNS text
    LANGUAGE sql STABLE
    AS $$
    SELECT CASE
        WHEN EXISTS (SELECT 1 FROM suspended_turns s
                     WHERE s.owner_id = p_owner AND s.conversation_id = p_conversation
                       AND s.status IN ('pending', 'claimed') AND s.expires_at > now())
            THEN 'awaiting_confirm'
        WHEN EXISTS (SELECT 1 FROM trace_runs r
                     WHERE r.owner_id = p_owner AND r.started_at > now() - interval '15 minutes'
                       AND r.conversation_id = p_conversation AND r.status = 'running')
            THEN 'turn_running'
    END
$$;
GRANT EXECUTE ON FUNCTION app_conversation_busy(uuid, uuid) TO app_user;

-- What a message to a conversation would meet: 'missing' (not the owner's), 'free', or why it
-- must wait. One statement, for the chat route to answer 409 before it charges anything.
CREATE FUNCTION app_conversation_state(p_owner uuid, p_conversation uuid) RETURNS text
    LANGUAGE plpgsql VOLATILE
    AS $$
BEGIN
    PERFORM set_config('app.owner_id', p_owner::text, true);
    IF NOT EXISTS (SELECT 1 FROM conversations WHERE owner_id = p_owner AND id = p_conversation) THEN
        RETURN 'missing';
    END IF;
    RETURN coalesce(app_conversation_busy(p_owner, p_conversation), 'free');
END
$$;
GRANT EXECUTE ON FUNCTION app_conversation_state(uuid, uuid) TO app_user;

-- The opening of a turn of an existing conversation now locks the conversation's row first, so
-- two openings of one conversation queue there, and the second sees the first's run: it is
-- refused with SQLSTATE KB409 and the reason as its message, before anything is written.
CREATE OR REPLACE FUNCTION app_open_turn(p_owner uuid, p_conversation uuid, p_run uuid, p_provider text, p_model text,
                                         p_channel channel, p_recent bigint, p_categories text[], p_new boolean,
                                         p_title text, OUT history jsonb[], OUT memories text[])
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
    INSERT INTO trace_runs (id, owner_id, conversation_id, provider, model, channel)
    VALUES (p_run, p_owner, p_conversation, p_provider, p_model, p_channel);
    memories := app_recall(p_owner, p_recent, p_categories);
END
$$;
