-- Visitors of the public site: the demo ledger cloned once, per-owner message counters, failed
-- sign-ins, the quota gate as one function, and deferrable owner references so a sign-in can move
-- an anonymous visitor's rows onto an account in one transaction.

-- When the demo ledger was cloned into this visitor's ledger (NULL: not yet). app_user sets it,
-- on its own row only (users_self), in the transaction that loads the ledger.
ALTER TABLE users ADD COLUMN demo_cloned_at timestamptz;
GRANT SELECT (demo_cloned_at), UPDATE (demo_cloned_at) ON users TO app_user;

-- Sessions carry the epoch they were issued in; bumping it (sign-up, sign-out) ends every
-- earlier session of the user, copied tokens included.
ALTER TABLE users ADD COLUMN session_epoch integer NOT NULL DEFAULT 0;
-- An operator is made by `kakeibo operator add` (the owner role), never by signing up: the
-- admin door needs this flag and the email on ADMIN_EMAILS.
ALTER TABLE users ADD COLUMN operator boolean NOT NULL DEFAULT false;
GRANT SELECT (session_epoch, operator) ON users TO app_user;

-- Messages admitted per owner and UTC day. Written only by the quota gate (owner role); deleted
-- with the user.
CREATE TABLE owner_daily_messages (
    owner_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    day      date NOT NULL,
    count    integer NOT NULL DEFAULT 0 CHECK (count >= 0),
    PRIMARY KEY (owner_id, day)
);

-- Sign-in attempts per key ('account:<email>' or 'address:<sha256(ip|salt|date)>'), counted
-- before the password is checked and cleared on success; no raw address is stored. Owner role
-- only.
CREATE TABLE sign_in_failures (
    key            text PRIMARY KEY,
    failures       integer NOT NULL CHECK (failures >= 0),
    last_failed_at timestamptz NOT NULL
);

-- Children reference parents by (id, owner_id). Moving a visitor's rows to another owner updates
-- parent and child in one transaction, so those references are checked at commit when asked
-- (SET CONSTRAINTS ALL DEFERRED); everywhere else they stay immediate.
DO $$
DECLARE
    c record;
BEGIN
    FOR c IN
        SELECT conrelid::regclass AS tbl, conname
        FROM pg_constraint
        WHERE contype = 'f' AND connamespace = 'public'::regnamespace AND cardinality(conkey) = 2
    LOOP
        EXECUTE format('ALTER TABLE %s ALTER CONSTRAINT %I DEFERRABLE INITIALLY IMMEDIATE', c.tbl, c.conname);
    END LOOP;
END
$$;

-- The quota gate: check and charge in one call, race-free (the counters are upserts that only
-- count while under their cap; a refusal after a charge takes the charge back inside the same
-- statement). Returns 'ok' or the reason of the refusal, in this order:
--   paused (operator switch) > blocked (user.blocked_at) > owner_quota (message only) >
--   ip_quota (message only) > daily_cap (today's cost over all owners).
-- A resume is never refused for the message quotas. "Today" is the UTC day of p_now.
CREATE FUNCTION consume_quota(
    p_owner uuid,
    p_address_key text,
    p_kind text,
    p_anonymous_cap integer,
    p_signed_in_cap integer,
    p_address_cap integer,
    p_budget_usd numeric,
    p_now timestamptz
) RETURNS text
    LANGUAGE plpgsql
    AS $$
DECLARE
    today     date := (p_now AT TIME ZONE 'UTC')::date;
    day_start timestamptz := (today::timestamp AT TIME ZONE 'UTC');
    visitor   record;
    counted   integer;
    spent     numeric;
BEGIN
    IF p_kind NOT IN ('message', 'resume') THEN
        RAISE EXCEPTION 'consume_quota: unknown kind %', p_kind;
    END IF;
    IF coalesce((SELECT value FROM operator_flags WHERE key = 'live_chat_paused'), false) THEN
        RETURN 'paused';
    END IF;
    SELECT blocked_at, is_anonymous INTO visitor FROM users WHERE id = p_owner;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'consume_quota: no user %', p_owner;
    END IF;
    IF visitor.blocked_at IS NOT NULL THEN
        RETURN 'blocked';
    END IF;
    IF p_kind = 'message' THEN
        counted := NULL;
        IF (CASE WHEN visitor.is_anonymous THEN p_anonymous_cap ELSE p_signed_in_cap END) > 0 THEN
            INSERT INTO owner_daily_messages AS m (owner_id, day, count) VALUES (p_owner, today, 1)
            ON CONFLICT (owner_id, day) DO UPDATE SET count = m.count + 1
                WHERE m.count < (CASE WHEN visitor.is_anonymous THEN p_anonymous_cap ELSE p_signed_in_cap END)
            RETURNING m.count INTO counted;
        END IF;
        IF counted IS NULL THEN
            RETURN 'owner_quota';
        END IF;
        IF p_address_key IS NOT NULL THEN
            counted := NULL;
            IF p_address_cap > 0 THEN
                INSERT INTO rate_limits AS r (key, window_start, count) VALUES (p_address_key, today, 1)
                ON CONFLICT (key) DO UPDATE SET count = r.count + 1 WHERE r.count < p_address_cap
                RETURNING r.count INTO counted;
            END IF;
            IF counted IS NULL THEN
                UPDATE owner_daily_messages SET count = count - 1 WHERE owner_id = p_owner AND day = today;
                RETURN 'ip_quota';
            END IF;
        END IF;
    END IF;
    SELECT coalesce(sum(cost_usd_est), 0) INTO spent FROM trace_runs WHERE started_at >= day_start;
    IF spent >= p_budget_usd THEN
        IF p_kind = 'message' THEN
            UPDATE owner_daily_messages SET count = count - 1 WHERE owner_id = p_owner AND day = today;
            IF p_address_key IS NOT NULL THEN
                UPDATE rate_limits SET count = count - 1 WHERE key = p_address_key;
            END IF;
        END IF;
        RETURN 'daily_cap';
    END IF;
    RETURN 'ok';
END
$$;
REVOKE ALL ON FUNCTION consume_quota(uuid, text, text, integer, integer, integer, numeric, timestamptz) FROM PUBLIC;

-- What each nightly housekeeping run deleted (the reap function, `cargo xtask reap`).
CREATE TABLE housekeeping_runs (
    id      uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    ran_at  timestamptz NOT NULL DEFAULT now(),
    deleted jsonb NOT NULL
);

-- The tenant of a transaction is set through this function rather than a bare set_config: RDS
-- Proxy pins a connection to its client when it sees SET or set_config, but not for a function
-- call. Transaction-local, like before.
CREATE FUNCTION app_set_owner(owner uuid) RETURNS void
    LANGUAGE sql VOLATILE
    AS $$ SELECT set_config('app.owner_id', owner::text, true) $$;
GRANT EXECUTE ON FUNCTION app_set_owner(uuid) TO app_user;
