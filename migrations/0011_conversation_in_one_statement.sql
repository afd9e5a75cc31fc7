-- The conversation a message goes to, in one statement (as the turn phases of 0010 are): the
-- requested one when the owner has it (NULL when not), or without one a new conversation titled
-- `p_title`. Before, a lookup was BEGIN with the tenant, the SELECT and COMMIT: three round trips
-- in front of every chat message.
CREATE FUNCTION app_conversation(p_owner uuid, p_requested uuid, p_title text) RETURNS uuid
    LANGUAGE plpgsql VOLATILE
    AS $$
DECLARE
    found_id uuid;
BEGIN
    PERFORM set_config('app.owner_id', p_owner::text, true);
    IF p_requested IS NOT NULL THEN
        SELECT id INTO found_id FROM conversations WHERE owner_id = p_owner AND id = p_requested;
    ELSE
        INSERT INTO conversations (owner_id, title) VALUES (p_owner, p_title) RETURNING id INTO found_id;
    END IF;
    RETURN found_id;
END
$$;
GRANT EXECUTE ON FUNCTION app_conversation(uuid, uuid, text) TO app_user;
