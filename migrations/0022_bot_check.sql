-- The bot check before a visitor's first message (when TURNSTILE_SECRET is set): the moment a
-- visitor passed it, so it is asked once per visitor. An account signed in to from a checked visit
-- keeps the mark (the sign-in's move carries it over).
ALTER TABLE users ADD COLUMN human_checked_at timestamptz;
GRANT SELECT (human_checked_at) ON users TO app_user;

-- app_visitor (0015) returns the mark with the rest; its row type changes, so it is made again.
DROP FUNCTION app_visitor(uuid);
CREATE FUNCTION app_visitor(p_owner uuid)
    RETURNS TABLE (id uuid, email text, is_anonymous boolean, blocked boolean, operator boolean,
                   session_epoch integer, demo_cloned boolean, human_checked boolean)
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
               u.demo_cloned_at IS NOT NULL, u.human_checked_at IS NOT NULL
        FROM users u WHERE u.id = p_owner;
END
$$;
GRANT EXECUTE ON FUNCTION app_visitor(uuid) TO app_user;
