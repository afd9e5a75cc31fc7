-- The visitor a session names, in one statement as app_user (row-level security: a visitor reads
-- only their own row), instead of an UPDATE through the owner role that rewrote `last_seen_at` and
-- waited for the disk on every request of every function.
--
-- `last_seen_at` moves only when it is five minutes old or more: it serves the nightly reaper
-- (anonymous visitors unseen for a day) and the operator's counts, for which five minutes is
-- exact enough, and most requests now only read. When it moves, the commit does not wait for the
-- disk: a crash can lose only a visit's timestamp, which the next request writes again.
--
-- No row when the user does not exist (deleted since the session was issued).
CREATE FUNCTION app_visitor(p_owner uuid)
    RETURNS TABLE (id uuid, email text, is_anonymous boolean, blocked boolean, operator boolean,
                   session_epoch integer, demo_cloned boolean)
    LANGUAGE plpgsql VOLATILE
    AS $$
#variable_conflict use_column
BEGIN
    PERFORM set_config('app.owner_id', p_owner::text, true);
    UPDATE users u SET last_seen_at = now()
    WHERE u.id = p_owner AND u.last_seen_at < now() - interval '5 minutes';
    IF FOUND THEN
        PERFORM set_config('synchronous_commit', 'off', true);
    END IF;
    RETURN QUERY
        SELECT u.id, u.email, u.is_anonymous, u.blocked_at IS NOT NULL, u.operator, u.session_epoch,
               u.demo_cloned_at IS NOT NULL
        FROM users u WHERE u.id = p_owner;
END
$$;
GRANT EXECUTE ON FUNCTION app_visitor(uuid) TO app_user;
