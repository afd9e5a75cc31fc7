-- An e-mail address counts only once somebody proved it (issue 36): a password sign-up claims an
-- address, and the claim is proven by the link mailed to it (or by Google, which verified it).
-- Google sign-in links only to an account whose address is proven, so nobody can sign up with
-- somebody else's address and wait for its owner to arrive through Google.
ALTER TABLE users ADD COLUMN email_verified_at timestamptz;
GRANT SELECT (email_verified_at) ON users TO app_user;
-- A Google-linked account's address is the one Google verified; an operator's was set by whoever
-- runs the deployment.
UPDATE users SET email_verified_at = now() WHERE email IS NOT NULL AND (google_sub IS NOT NULL OR operator);

-- The one-time links mailed to an address: `verify` proves it, `reset` sets a new password. Only
-- the SHA-256 of a token is kept; a token is good for the address it was sent to, once, until it
-- expires. Only the owner role reads or writes them.
CREATE TABLE email_tokens (
    token_hash  bytea PRIMARY KEY,
    user_id     uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    purpose     text NOT NULL CHECK (purpose IN ('verify', 'reset')),
    email       text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    used_at     timestamptz
);
CREATE INDEX email_tokens_user_idx ON email_tokens (user_id, purpose);
CREATE INDEX email_tokens_expires_idx ON email_tokens (expires_at);
REVOKE ALL ON email_tokens FROM app_user;

-- app_visitor (0022) returns whether the address is proven; its row type changes, so it is made
-- again.
DROP FUNCTION app_visitor(uuid);
CREATE FUNCTION app_visitor(p_owner uuid)
    RETURNS TABLE (id uuid, email text, is_anonymous boolean, blocked boolean, operator boolean,
                   session_epoch integer, demo_cloned boolean, human_checked boolean,
                   email_verified boolean)
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
               u.demo_cloned_at IS NOT NULL, u.human_checked_at IS NOT NULL,
               u.email_verified_at IS NOT NULL
        FROM users u WHERE u.id = p_owner;
END
$$;
GRANT EXECUTE ON FUNCTION app_visitor(uuid) TO app_user;
