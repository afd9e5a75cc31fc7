-- A turn's suspension commits lazily too (0008). What it stores is work that has not finished:
-- no write has run, the person has only been asked. If the server itself crashed before the log
-- reached the disk, the question would be lost and its confirm answered as gone — nothing
-- applied, the person asks again. The WAL writer flushes within wal_writer_delay (200 ms by
-- default), long before a person can answer; and the apply's durable commit, which must read this
-- row first, carries it to disk in any case, because the log is flushed in order. So a confirmed
-- write costs two durable commits: the apply (the write and the record that it ran) and the
-- finish (the answer the person reads).
CREATE OR REPLACE FUNCTION app_suspend_turn(p_owner uuid, p_conversation uuid, p_run uuid, p_version integer,
                                            p_state jsonb, p_args_hash text, p_expires_at timestamptz,
                                            p_history_base integer, p_evicted integer, p_summary jsonb,
                                            p_events jsonb, p_input bigint, p_output bigint, p_cached bigint,
                                            p_cost numeric, p_iterations integer)
    RETURNS uuid
    LANGUAGE plpgsql VOLATILE
    AS $$
DECLARE
    suspended uuid;
BEGIN
    PERFORM set_config('app.owner_id', p_owner::text, true);
    PERFORM set_config('synchronous_commit', 'off', true);
    INSERT INTO suspended_turns (owner_id, conversation_id, run_id, version, state, args_hash, expires_at,
                                 history_base)
    VALUES (p_owner, p_conversation, p_run, p_version, p_state, p_args_hash, p_expires_at, p_history_base)
    RETURNING id INTO suspended;
    IF p_evicted IS NOT NULL THEN
        PERFORM app_append_history(p_owner, p_conversation, '{}', p_evicted, p_summary);
    END IF;
    PERFORM app_insert_events(p_owner, p_events);
    PERFORM app_update_run(p_owner, p_run, p_input, p_output, p_cached, p_cost, p_iterations, NULL);
    RETURN suspended;
END
$$;
