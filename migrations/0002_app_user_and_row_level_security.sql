-- app_user: the role the functions use for owner-scoped work. It owns no table, so row-level
-- security applies to it (owners and superusers bypass it). Locally `cargo xtask db up` creates it
-- as a login role first; elsewhere this creates it without login, for an operator to enable.
DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'app_user') THEN
        CREATE ROLE app_user NOLOGIN;
    END IF;
END
$$;

-- The tenant of the current transaction, set by the ledger's with_owner through
-- set_config('app.owner_id', <uuid>, true). Unset (NULL) or reset ('') means no tenant: every
-- policy below then matches no row.
CREATE FUNCTION app_owner_id() RETURNS uuid
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$ SELECT nullif(current_setting('app.owner_id', true), '')::uuid $$;

GRANT USAGE ON SCHEMA public TO app_user;

-- Grants are explicit, table by table: a table added later is invisible to app_user until a
-- migration grants it. No default privileges.
GRANT SELECT, INSERT, UPDATE, DELETE ON
    accounts, import_batches, transactions, postings, rules, budgets, memories,
    trace_runs, trace_events, conversations, conversation_messages, suspended_turns, uploads
    TO app_user;

-- users: app_user may see its own row, never the password hash, and may only touch last_seen_at.
-- Creating visitors, credentials and blocking go through the owner role (crates/auth, admin).
GRANT SELECT (id, email, is_anonymous, blocked_at, created_at, last_seen_at) ON users TO app_user;
GRANT UPDATE (last_seen_at) ON users TO app_user;

-- The operator's switches are readable (the quota gate checks the pause); the counters and the
-- switches are written only by the owner role.
GRANT SELECT ON operator_flags TO app_user;

-- One policy per owner-scoped table, named <table>_owner, identical USING and WITH CHECK.
DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY[
        'accounts', 'import_batches', 'transactions', 'postings', 'rules', 'budgets', 'memories',
        'trace_runs', 'trace_events', 'conversations', 'conversation_messages', 'suspended_turns',
        'uploads'
    ]
    LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format(
            'CREATE POLICY %I ON %I USING (owner_id = app_owner_id()) WITH CHECK (owner_id = app_owner_id())',
            t || '_owner', t
        );
    END LOOP;
END
$$;

ALTER TABLE users ENABLE ROW LEVEL SECURITY;
CREATE POLICY users_self ON users USING (id = app_owner_id()) WITH CHECK (id = app_owner_id());
