-- The site's model spend as a hard cap. Before each model call a web turn reserves the call's
-- worst case (its input estimate and its max_tokens at list price) in the statement that checks
-- the cap, and settles the reservation to the real cost when the call ends. Calls in flight
-- count against the cap, so no number of turns started together can spend past it (before, the
-- gate compared the spend already recorded in trace_runs, and a run's cost was written after its
-- calls). Amounts are integer millionths of a dollar.

-- One row per UTC day: what was settled, and what calls in flight hold.
CREATE TABLE budget_days (
    day                date PRIMARY KEY,
    settled_micro_usd  bigint NOT NULL DEFAULT 0 CHECK (settled_micro_usd >= 0),
    reserved_micro_usd bigint NOT NULL DEFAULT 0 CHECK (reserved_micro_usd >= 0)
);

-- One row per call in flight. A hold whose call never settled (its function died) expires, and
-- the next reservation of the day gives its amount back; the nightly reaper deletes older days'.
CREATE TABLE budget_holds (
    id               uuid PRIMARY KEY,
    day              date NOT NULL REFERENCES budget_days (day),
    run_id           uuid,
    amount_micro_usd bigint NOT NULL CHECK (amount_micro_usd >= 0),
    expires_at       timestamptz NOT NULL
);
CREATE INDEX budget_holds_day_expires_idx ON budget_holds (day, expires_at);

-- Reserves p_amount for one call when the day has room for it: true when admitted. The day's row
-- is locked first, so concurrent reservations queue on it and each sees the others' holds.
-- Reserving and settling commit lazily (0008): another reservation sees a hold once it commits,
-- flushed or not, so the cap stays exact; only a crash of the server itself can drop the last
-- fraction of a second of them, and a call whose hold was dropped still counts when it settles.
CREATE FUNCTION app_reserve_budget(p_hold uuid, p_run uuid, p_amount bigint, p_cap bigint,
                                   p_now timestamptz, p_ttl_seconds integer) RETURNS boolean
    LANGUAGE plpgsql VOLATILE
    AS $$
DECLARE
    today    date := (p_now AT TIME ZONE 'UTC')::date;
    released bigint;
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    INSERT INTO budget_days (day) VALUES (today) ON CONFLICT (day) DO NOTHING;
    PERFORM 1 FROM budget_days WHERE day = today FOR UPDATE;
    WITH gone AS (
        DELETE FROM budget_holds WHERE day = today AND expires_at < p_now RETURNING amount_micro_usd
    )
    SELECT coalesce(sum(amount_micro_usd), 0) INTO released FROM gone;
    UPDATE budget_days SET reserved_micro_usd = greatest(reserved_micro_usd - released, 0) + p_amount
    WHERE day = today
      AND settled_micro_usd + greatest(reserved_micro_usd - released, 0) + p_amount <= p_cap;
    IF NOT FOUND THEN
        IF released > 0 THEN
            UPDATE budget_days SET reserved_micro_usd = greatest(reserved_micro_usd - released, 0)
            WHERE day = today;
        END IF;
        RETURN false;
    END IF;
    INSERT INTO budget_holds (id, day, run_id, amount_micro_usd, expires_at)
    VALUES (p_hold, today, p_run, p_amount, p_now + make_interval(secs => p_ttl_seconds));
    RETURN true;
END
$$;

-- Settles a hold at p_spent: its amount leaves the reserved total and the real cost joins the
-- settled one, on the day it was reserved. A hold already released by its expiry still has its
-- cost counted, on the day of p_now.
CREATE FUNCTION app_settle_budget(p_hold uuid, p_spent bigint, p_now timestamptz) RETURNS void
    LANGUAGE plpgsql VOLATILE
    AS $$
DECLARE
    held record;
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    DELETE FROM budget_holds WHERE id = p_hold RETURNING day, amount_micro_usd INTO held;
    IF FOUND THEN
        UPDATE budget_days
        SET reserved_micro_usd = greatest(reserved_micro_usd - held.amount_micro_usd, 0),
            settled_micro_usd = settled_micro_usd + p_spent
        WHERE day = held.day;
    ELSE
        INSERT INTO budget_days AS b (day, settled_micro_usd) VALUES ((p_now AT TIME ZONE 'UTC')::date, p_spent)
        ON CONFLICT (day) DO UPDATE SET settled_micro_usd = b.settled_micro_usd + p_spent;
    END IF;
END
$$;

-- The gate's daily_cap reads the budget: what was settled today and what calls in flight hold.
CREATE OR REPLACE FUNCTION consume_quota(
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
    visitor   record;
    counted   integer;
    spent     bigint;
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
    SELECT settled_micro_usd + reserved_micro_usd INTO spent FROM budget_days WHERE day = today;
    IF coalesce(spent, 0) >= p_budget_usd * 1000000 THEN
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
