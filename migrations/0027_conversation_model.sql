-- The model a conversation was given: its first run's. The router picks a model once, on a
-- conversation's first message; every later turn and confirm of the conversation goes to the same
-- model (a provider's cache and thought signatures are per model).
CREATE FUNCTION app_conversation_model(p_owner uuid, p_conversation uuid) RETURNS text
    LANGUAGE plpgsql VOLATILE
    AS $$
BEGIN
    PERFORM set_config('app.owner_id', p_owner::text, true);
    RETURN (SELECT model FROM trace_runs
             WHERE owner_id = p_owner AND conversation_id = p_conversation
             ORDER BY started_at LIMIT 1);
END
$$;
GRANT EXECUTE ON FUNCTION app_conversation_model(uuid, uuid) TO app_user;
