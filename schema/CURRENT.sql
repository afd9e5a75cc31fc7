-- Name: account_kind; Type: TYPE; Schema: public; Owner: -

CREATE TYPE public.account_kind AS ENUM (
    'checking',
    'savings',
    'card',
    'cash',
    'loan',
    'transit'
);

-- Name: account_type; Type: TYPE; Schema: public; Owner: -

CREATE TYPE public.account_type AS ENUM (
    'asset',
    'liability',
    'income',
    'expense',
    'equity'
);

-- Name: channel; Type: TYPE; Schema: public; Owner: -

CREATE TYPE public.channel AS ENUM (
    'cli',
    'web',
    'mcp',
    'eval',
    'library',
    'acp'
);

-- Name: import_status; Type: TYPE; Schema: public; Owner: -

CREATE TYPE public.import_status AS ENUM (
    'planned',
    'committed'
);

-- Name: memory_source; Type: TYPE; Schema: public; Owner: -

CREATE TYPE public.memory_source AS ENUM (
    'user_stated',
    'agent_inferred'
);

-- Name: run_status; Type: TYPE; Schema: public; Owner: -

CREATE TYPE public.run_status AS ENUM (
    'running',
    'ok',
    'error',
    'blocked',
    'aborted',
    'stuck'
);

-- Name: suspended_status; Type: TYPE; Schema: public; Owner: -

CREATE TYPE public.suspended_status AS ENUM (
    'pending',
    'claimed',
    'applied'
);

-- Name: trace_event_type; Type: TYPE; Schema: public; Owner: -

CREATE TYPE public.trace_event_type AS ENUM (
    'model_call',
    'tool_call',
    'confirm',
    'summary_eviction',
    'error'
);

-- Name: app_append_history(uuid, uuid, jsonb[], integer, jsonb); Type: FUNCTION; Schema: public; Owner: -

CREATE FUNCTION public.app_append_history(p_owner uuid, p_conversation uuid, p_messages jsonb[], p_evicted integer, p_summary jsonb) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    UPDATE conversations c SET updated_at = now(),
           summary = CASE WHEN p_evicted IS NULL THEN c.summary ELSE p_summary END,
           history_from = CASE WHEN p_evicted IS NULL THEN c.history_from ELSE coalesce(
               (SELECT m.seq FROM conversation_messages m
                WHERE m.owner_id = p_owner AND m.conversation_id = p_conversation AND m.seq >= c.history_from
                ORDER BY m.seq OFFSET p_evicted LIMIT 1),
               (SELECT coalesce(max(m.seq) + 1, 0) FROM conversation_messages m
                WHERE m.owner_id = p_owner AND m.conversation_id = p_conversation)) END
    WHERE c.owner_id = p_owner AND c.id = p_conversation;
    IF cardinality(p_messages) > 0 THEN
        INSERT INTO conversation_messages (owner_id, conversation_id, seq, message)
        SELECT p_owner, p_conversation, (last.next + m.ord - 1)::int, m.message
        FROM (SELECT coalesce(max(seq) + 1, 0) AS next FROM conversation_messages
              WHERE owner_id = p_owner AND conversation_id = p_conversation) AS last,
             unnest(p_messages) WITH ORDINALITY AS m(message, ord);
    END IF;
END
$$;

-- Name: app_close_turn(uuid, uuid, jsonb[], integer, jsonb, jsonb, uuid, bigint, bigint, bigint, numeric, integer, public.run_status); Type: FUNCTION; Schema: public; Owner: -

CREATE FUNCTION public.app_close_turn(p_owner uuid, p_conversation uuid, p_messages jsonb[], p_evicted integer, p_summary jsonb, p_events jsonb, p_run uuid, p_input bigint, p_output bigint, p_cached bigint, p_cost numeric, p_iterations integer, p_status public.run_status) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM set_config('app.owner_id', p_owner::text, true);
    PERFORM app_append_history(p_owner, p_conversation, p_messages, p_evicted, p_summary);
    PERFORM app_insert_events(p_owner, p_events);
    PERFORM app_update_run(p_owner, p_run, p_input, p_output, p_cached, p_cost, p_iterations, p_status);
END
$$;

-- Name: app_commit_lazily(); Type: FUNCTION; Schema: public; Owner: -

CREATE FUNCTION public.app_commit_lazily() RETURNS void
    LANGUAGE sql
    AS $$ SELECT set_config('synchronous_commit', 'off', true) $$;

-- Name: app_conversation(uuid, uuid, text); Type: FUNCTION; Schema: public; Owner: -

CREATE FUNCTION public.app_conversation(p_owner uuid, p_requested uuid, p_title text) RETURNS uuid
    LANGUAGE plpgsql
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

-- Name: app_conversation_busy(uuid, uuid); Type: FUNCTION; Schema: public; Owner: -

CREATE FUNCTION public.app_conversation_busy(p_owner uuid, p_conversation uuid) RETURNS text
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

-- Name: app_conversation_model(uuid, uuid); Type: FUNCTION; Schema: public; Owner: -

CREATE FUNCTION public.app_conversation_model(p_owner uuid, p_conversation uuid) RETURNS text
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM set_config('app.owner_id', p_owner::text, true);
    RETURN (SELECT model FROM trace_runs
             WHERE owner_id = p_owner AND conversation_id = p_conversation
             ORDER BY started_at LIMIT 1);
END
$$;

-- Name: app_conversation_state(uuid, uuid); Type: FUNCTION; Schema: public; Owner: -

CREATE FUNCTION public.app_conversation_state(p_owner uuid, p_conversation uuid) RETURNS text
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM set_config('app.owner_id', p_owner::text, true);
    IF NOT EXISTS (SELECT 1 FROM conversations WHERE owner_id = p_owner AND id = p_conversation) THEN
        RETURN 'missing';
    END IF;
    RETURN coalesce(app_conversation_busy(p_owner, p_conversation), 'free');
END
$$;

-- Name: app_finish_turn(uuid, uuid, timestamp with time zone, uuid, jsonb[], boolean, jsonb, uuid, bigint, bigint, bigint, numeric, integer, public.run_status); Type: FUNCTION; Schema: public; Owner: -

CREATE FUNCTION public.app_finish_turn(p_owner uuid, p_suspended uuid, p_fence timestamp with time zone, p_conversation uuid, p_messages jsonb[], p_replace boolean, p_events jsonb, p_run uuid, p_input bigint, p_output bigint, p_cached bigint, p_cost numeric, p_iterations integer, p_status public.run_status) RETURNS boolean
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM set_config('app.owner_id', p_owner::text, true);
    DELETE FROM suspended_turns WHERE owner_id = p_owner AND id = p_suspended AND claimed_at = p_fence;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    IF p_replace THEN
        PERFORM app_replace_history(p_owner, p_conversation, p_messages);
    ELSE
        PERFORM app_append_history(p_owner, p_conversation, p_messages, NULL, NULL);
    END IF;
    PERFORM app_insert_events(p_owner, p_events);
    PERFORM app_update_run(p_owner, p_run, p_input, p_output, p_cached, p_cost, p_iterations, p_status);
    RETURN true;
END
$$;

-- Name: app_history(uuid, uuid); Type: FUNCTION; Schema: public; Owner: -

CREATE FUNCTION public.app_history(p_owner uuid, p_conversation uuid) RETURNS jsonb[]
    LANGUAGE plpgsql STABLE
    AS $$
BEGIN
    RETURN (SELECT coalesce(array_agg(h.message ORDER BY h.part, h.n), '{}') FROM (
        SELECT 0 AS part, s.ord::int AS n, s.message
        FROM conversations c, jsonb_array_elements(c.summary) WITH ORDINALITY AS s(message, ord)
        WHERE c.owner_id = p_owner AND c.id = p_conversation
        UNION ALL
        SELECT 1, m.seq, m.message
        FROM conversation_messages m JOIN conversations c ON c.id = m.conversation_id
        WHERE m.owner_id = p_owner AND m.conversation_id = p_conversation AND c.owner_id = p_owner
          AND m.seq >= c.history_from
    ) AS h);
END
$$;

-- Name: app_insert_events(uuid, jsonb); Type: FUNCTION; Schema: public; Owner: -

CREATE FUNCTION public.app_insert_events(p_owner uuid, p_events jsonb) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF jsonb_array_length(p_events) > 0 THEN
        INSERT INTO trace_events (owner_id, run_id, seq, type, payload, latency_ms, input_tokens, output_tokens,
                                  cached_tokens, thought_summary)
        SELECT p_owner, e.*
        FROM jsonb_to_recordset(p_events) AS e(run_id uuid, seq integer, type trace_event_type, payload jsonb,
                                               latency_ms integer, input_tokens bigint, output_tokens bigint,
                                               cached_tokens bigint, thought_summary text)
        ON CONFLICT (owner_id, run_id, seq) DO NOTHING;
    END IF;
END
$$;

-- Name: app_insert_subruns(uuid, uuid, jsonb); Type: FUNCTION; Schema: public; Owner: -

CREATE FUNCTION public.app_insert_subruns(p_owner uuid, p_parent uuid, p_runs jsonb) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM set_config('app.owner_id', p_owner::text, true);
    INSERT INTO trace_runs (id, owner_id, conversation_id, started_at, finished_at, provider, model, status,
                            iterations, latency_ms, channel, question, parent_run_id)
    SELECT r.run_id, p_owner, parent.conversation_id, to_timestamp(r.started_at_ms / 1000.0),
           to_timestamp((r.started_at_ms + r.latency_ms) / 1000.0), r.provider, r.model, r.status, r.iterations,
           least(r.latency_ms, 2147483647)::int, parent.channel, left(r.description, 500), p_parent
    FROM jsonb_to_recordset(p_runs) AS r(run_id uuid, started_at_ms bigint, latency_ms bigint, provider text,
                                         model text, status run_status, iterations integer, description text)
    JOIN trace_runs parent ON parent.owner_id = p_owner AND parent.id = p_parent
    ON CONFLICT (id) DO NOTHING;
END
$$;

-- Name: app_open_turn(uuid, uuid, uuid, text, text, public.channel, bigint, text[], boolean, text, text); Type: FUNCTION; Schema: public; Owner: -

CREATE FUNCTION public.app_open_turn(p_owner uuid, p_conversation uuid, p_run uuid, p_provider text, p_model text, p_channel public.channel, p_recent bigint, p_categories text[], p_new boolean, p_title text, p_question text, OUT history jsonb[], OUT memories text[]) RETURNS record
    LANGUAGE plpgsql
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
    INSERT INTO trace_runs (id, owner_id, conversation_id, provider, model, channel, question)
    VALUES (p_run, p_owner, p_conversation, p_provider, p_model, p_channel, left(p_question, 500));
    memories := app_recall(p_owner, p_recent, p_categories);
END
$$;

-- Name: app_owner_id(); Type: FUNCTION; Schema: public; Owner: -

CREATE FUNCTION public.app_owner_id() RETURNS uuid
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$ SELECT nullif(current_setting('app.owner_id', true), '')::uuid $$;

-- Name: app_recall(uuid, bigint, text[]); Type: FUNCTION; Schema: public; Owner: -

CREATE FUNCTION public.app_recall(p_owner uuid, p_recent bigint, p_categories text[]) RETURNS text[]
    LANGUAGE plpgsql STABLE
    AS $$
BEGIN
    RETURN (SELECT coalesce(array_agg(r.content ORDER BY r.created_at DESC, r.id), '{}') FROM (
        SELECT DISTINCT ON (id) id, content, created_at FROM (
            (SELECT id, content, created_at FROM memories WHERE owner_id = p_owner
             ORDER BY created_at DESC, id LIMIT p_recent)
            UNION ALL
            (SELECT id, content, created_at FROM memories
             WHERE owner_id = p_owner AND lower(category) = ANY (p_categories))
        ) both_sets
    ) r);
END
$$;

-- Name: app_replace_history(uuid, uuid, jsonb[]); Type: FUNCTION; Schema: public; Owner: -

CREATE FUNCTION public.app_replace_history(p_owner uuid, p_conversation uuid, p_messages jsonb[]) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    DELETE FROM conversation_messages WHERE owner_id = p_owner AND conversation_id = p_conversation;
    UPDATE conversations SET summary = NULL, history_from = 0 WHERE owner_id = p_owner AND id = p_conversation;
    PERFORM app_append_history(p_owner, p_conversation, p_messages, NULL, NULL);
END
$$;

-- Name: app_reserve_budget(uuid, uuid, bigint, bigint, timestamp with time zone, integer); Type: FUNCTION; Schema: public; Owner: -

CREATE FUNCTION public.app_reserve_budget(p_hold uuid, p_run uuid, p_amount bigint, p_cap bigint, p_now timestamp with time zone, p_ttl_seconds integer) RETURNS boolean
    LANGUAGE plpgsql
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

-- Name: app_set_owner(uuid); Type: FUNCTION; Schema: public; Owner: -

CREATE FUNCTION public.app_set_owner(owner uuid) RETURNS void
    LANGUAGE sql
    AS $$ SELECT set_config('app.owner_id', owner::text, true) $$;

-- Name: app_settle_budget(uuid, bigint, timestamp with time zone); Type: FUNCTION; Schema: public; Owner: -

CREATE FUNCTION public.app_settle_budget(p_hold uuid, p_spent bigint, p_now timestamp with time zone) RETURNS void
    LANGUAGE plpgsql
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

-- Name: app_suspend_turn(uuid, uuid, uuid, integer, jsonb, text, timestamp with time zone, integer, integer, jsonb, jsonb, bigint, bigint, bigint, numeric, integer); Type: FUNCTION; Schema: public; Owner: -

CREATE FUNCTION public.app_suspend_turn(p_owner uuid, p_conversation uuid, p_run uuid, p_version integer, p_state jsonb, p_args_hash text, p_expires_at timestamp with time zone, p_history_base integer, p_evicted integer, p_summary jsonb, p_events jsonb, p_input bigint, p_output bigint, p_cached bigint, p_cost numeric, p_iterations integer) RETURNS uuid
    LANGUAGE plpgsql
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

-- Name: app_update_run(uuid, uuid, bigint, bigint, bigint, numeric, integer, public.run_status); Type: FUNCTION; Schema: public; Owner: -

CREATE FUNCTION public.app_update_run(p_owner uuid, p_run uuid, p_input bigint, p_output bigint, p_cached bigint, p_cost numeric, p_iterations integer, p_status public.run_status) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    UPDATE trace_runs SET input_tokens = p_input, output_tokens = p_output, cached_tokens = p_cached,
           cost_usd_est = p_cost, iterations = p_iterations, status = coalesce(p_status, status),
           finished_at = CASE WHEN p_status IS NULL THEN NULL ELSE now() END,
           latency_ms = CASE WHEN p_status IS NULL THEN latency_ms
                             ELSE least(extract(epoch FROM now() - started_at) * 1000, 2147483647)::int END
    WHERE owner_id = p_owner AND id = p_run;
END
$$;

-- Name: app_visitor(uuid); Type: FUNCTION; Schema: public; Owner: -

CREATE FUNCTION public.app_visitor(p_owner uuid) RETURNS TABLE(id uuid, email text, is_anonymous boolean, blocked boolean, operator boolean, session_epoch integer, demo_cloned boolean, human_checked boolean, email_verified boolean)
    LANGUAGE plpgsql
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

-- Name: consume_quota(uuid, text, text, integer, integer, integer, numeric, timestamp with time zone); Type: FUNCTION; Schema: public; Owner: -

CREATE FUNCTION public.consume_quota(p_owner uuid, p_address_key text, p_kind text, p_anonymous_cap integer, p_signed_in_cap integer, p_address_cap integer, p_budget_usd numeric, p_now timestamp with time zone) RETURNS text
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

-- Name: accounts; Type: TABLE; Schema: public; Owner: -

CREATE TABLE public.accounts (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    owner_id uuid NOT NULL,
    name text NOT NULL,
    type public.account_type NOT NULL,
    currency character(3),
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    kind public.account_kind,
    CONSTRAINT accounts_currency_check CHECK ((currency ~ '^[A-Z]{3}$'::text)),
    CONSTRAINT accounts_currency_fits_type CHECK (((currency IS NULL) = (type = ANY (ARRAY['expense'::public.account_type, 'income'::public.account_type])))),
    CONSTRAINT accounts_kind_fits_type CHECK (
CASE type
    WHEN 'asset'::public.account_type THEN (kind = ANY (ARRAY['checking'::public.account_kind, 'savings'::public.account_kind, 'cash'::public.account_kind, 'transit'::public.account_kind]))
    WHEN 'liability'::public.account_type THEN (kind = ANY (ARRAY['card'::public.account_kind, 'loan'::public.account_kind]))
    ELSE (kind IS NULL)
END),
    CONSTRAINT accounts_name_check CHECK ((btrim(name) <> ''::text))
);

-- Name: budget_days; Type: TABLE; Schema: public; Owner: -

CREATE TABLE public.budget_days (
    day date NOT NULL,
    settled_micro_usd bigint DEFAULT 0 NOT NULL,
    reserved_micro_usd bigint DEFAULT 0 NOT NULL,
    CONSTRAINT budget_days_reserved_micro_usd_check CHECK ((reserved_micro_usd >= 0)),
    CONSTRAINT budget_days_settled_micro_usd_check CHECK ((settled_micro_usd >= 0))
);

-- Name: budget_holds; Type: TABLE; Schema: public; Owner: -

CREATE TABLE public.budget_holds (
    id uuid NOT NULL,
    day date NOT NULL,
    run_id uuid,
    amount_micro_usd bigint NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    CONSTRAINT budget_holds_amount_micro_usd_check CHECK ((amount_micro_usd >= 0))
);

-- Name: budgets; Type: TABLE; Schema: public; Owner: -

CREATE TABLE public.budgets (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    owner_id uuid NOT NULL,
    account_id uuid NOT NULL,
    month character(7) NOT NULL,
    amount_minor bigint NOT NULL,
    currency character(3) DEFAULT 'INR'::bpchar NOT NULL,
    CONSTRAINT budgets_amount_minor_check CHECK ((amount_minor >= 0)),
    CONSTRAINT budgets_currency_check CHECK ((currency ~ '^[A-Z]{3}$'::text)),
    CONSTRAINT budgets_month_check CHECK ((month ~ '^[0-9]{4}-(0[1-9]|1[0-2])$'::text))
);

-- Name: conversation_messages; Type: TABLE; Schema: public; Owner: -

CREATE TABLE public.conversation_messages (
    owner_id uuid NOT NULL,
    conversation_id uuid NOT NULL,
    seq integer NOT NULL,
    message jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT conversation_messages_seq_check CHECK ((seq >= 0))
);
ALTER TABLE ONLY public.conversation_messages ALTER COLUMN message SET COMPRESSION lz4;

-- Name: conversations; Type: TABLE; Schema: public; Owner: -

CREATE TABLE public.conversations (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    owner_id uuid NOT NULL,
    title text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    summary jsonb,
    history_from integer DEFAULT 0 NOT NULL,
    CONSTRAINT conversations_history_from_check CHECK ((history_from >= 0)),
    CONSTRAINT conversations_summary_check CHECK (((summary IS NULL) OR (jsonb_typeof(summary) = 'array'::text)))
);
ALTER TABLE ONLY public.conversations ALTER COLUMN summary SET COMPRESSION lz4;

-- Name: email_tokens; Type: TABLE; Schema: public; Owner: -

CREATE TABLE public.email_tokens (
    token_hash bytea NOT NULL,
    user_id uuid NOT NULL,
    purpose text NOT NULL,
    email text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    used_at timestamp with time zone,
    CONSTRAINT email_tokens_purpose_check CHECK ((purpose = ANY (ARRAY['verify'::text, 'reset'::text])))
);

-- Name: eval_reports; Type: TABLE; Schema: public; Owner: -

CREATE TABLE public.eval_reports (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    started_at timestamp with time zone NOT NULL,
    finished_at timestamp with time zone NOT NULL,
    trigger text NOT NULL,
    model text NOT NULL,
    filter text,
    complete boolean NOT NULL,
    task_count integer NOT NULL,
    passed integer NOT NULL,
    report jsonb NOT NULL,
    CONSTRAINT eval_reports_check CHECK (((passed >= 0) AND (passed <= task_count))),
    CONSTRAINT eval_reports_task_count_check CHECK ((task_count >= 0)),
    CONSTRAINT eval_reports_trigger_check CHECK ((trigger = ANY (ARRAY['schedule'::text, 'admin'::text, 'cli'::text])))
);

-- Name: housekeeping_runs; Type: TABLE; Schema: public; Owner: -

CREATE TABLE public.housekeeping_runs (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    ran_at timestamp with time zone DEFAULT now() NOT NULL,
    deleted jsonb NOT NULL
);

-- Name: import_batches; Type: TABLE; Schema: public; Owner: -

CREATE TABLE public.import_batches (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    owner_id uuid NOT NULL,
    account_id uuid,
    filename text NOT NULL,
    source_sha256 text,
    status public.import_status DEFAULT 'committed'::public.import_status NOT NULL,
    plan jsonb,
    row_count integer DEFAULT 0 NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    imported_at timestamp with time zone,
    options_key text,
    undone_at timestamp with time zone,
    CONSTRAINT import_batches_row_count_check CHECK ((row_count >= 0))
);
ALTER TABLE ONLY public.import_batches ALTER COLUMN plan SET COMPRESSION lz4;

-- Name: import_mappings; Type: TABLE; Schema: public; Owner: -

CREATE TABLE public.import_mappings (
    owner_id uuid NOT NULL,
    account text NOT NULL,
    mapping jsonb NOT NULL,
    source text NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT import_mappings_account_check CHECK ((length(account) > 0))
);

-- Name: import_plan_rows; Type: TABLE; Schema: public; Owner: -

CREATE TABLE public.import_plan_rows (
    owner_id uuid NOT NULL,
    batch_id uuid NOT NULL,
    chunk integer NOT NULL,
    rows jsonb NOT NULL,
    CONSTRAINT import_plan_rows_chunk_check CHECK ((chunk >= 0))
);
ALTER TABLE ONLY public.import_plan_rows ALTER COLUMN rows SET COMPRESSION lz4;

-- Name: ledger_edits; Type: TABLE; Schema: public; Owner: -

CREATE TABLE public.ledger_edits (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    owner_id uuid NOT NULL,
    made_at timestamp with time zone DEFAULT now() NOT NULL,
    made_by text DEFAULT 'web'::text NOT NULL,
    kind text NOT NULL,
    summary text NOT NULL,
    before jsonb NOT NULL,
    after jsonb NOT NULL,
    import_batch_id uuid,
    reverted_at timestamp with time zone,
    reverted_by uuid,
    detail jsonb,
    CONSTRAINT ledger_edits_kind_check CHECK ((kind = ANY (ARRAY['recategorize'::text, 'describe'::text, 'split'::text, 'delete'::text, 'undo_import'::text, 'revert'::text, 'merge'::text, 'apply_rule'::text]))),
    CONSTRAINT ledger_edits_made_by_check CHECK ((made_by = ANY (ARRAY['web'::text, 'cli'::text]))),
    CONSTRAINT ledger_edits_summary_check CHECK ((char_length(summary) <= 500))
);

-- Name: memories; Type: TABLE; Schema: public; Owner: -

CREATE TABLE public.memories (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    owner_id uuid NOT NULL,
    content text NOT NULL,
    category text NOT NULL,
    source public.memory_source DEFAULT 'user_stated'::public.memory_source NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT memories_content_check CHECK (((char_length(content) >= 3) AND (char_length(content) <= 500)))
);

-- Name: operator_flags; Type: TABLE; Schema: public; Owner: -

CREATE TABLE public.operator_flags (
    key text NOT NULL,
    value boolean DEFAULT false NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL
);

-- Name: owner_daily_messages; Type: TABLE; Schema: public; Owner: -

CREATE TABLE public.owner_daily_messages (
    owner_id uuid NOT NULL,
    day date NOT NULL,
    count integer DEFAULT 0 NOT NULL,
    CONSTRAINT owner_daily_messages_count_check CHECK ((count >= 0))
);

-- Name: postings; Type: TABLE; Schema: public; Owner: -

CREATE TABLE public.postings (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    owner_id uuid NOT NULL,
    transaction_id uuid NOT NULL,
    account_id uuid NOT NULL,
    amount_minor bigint NOT NULL,
    currency character(3) DEFAULT 'INR'::bpchar NOT NULL,
    CONSTRAINT postings_currency_check CHECK ((currency ~ '^[A-Z]{3}$'::text))
);

-- Name: rate_limits; Type: TABLE; Schema: public; Owner: -

CREATE TABLE public.rate_limits (
    key text NOT NULL,
    window_start date NOT NULL,
    count integer DEFAULT 0 NOT NULL,
    CONSTRAINT rate_limits_count_check CHECK ((count >= 0))
);

-- Name: rules; Type: TABLE; Schema: public; Owner: -

CREATE TABLE public.rules (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    owner_id uuid NOT NULL,
    pattern text NOT NULL,
    account_id uuid NOT NULL,
    priority integer DEFAULT 100 NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT rules_pattern_check CHECK ((length(pattern) >= 2)),
    CONSTRAINT rules_priority_check CHECK (((priority >= 1) AND (priority <= 1000)))
);

-- Name: sign_in_failures; Type: TABLE; Schema: public; Owner: -

CREATE TABLE public.sign_in_failures (
    key text NOT NULL,
    failures integer NOT NULL,
    last_failed_at timestamp with time zone NOT NULL,
    CONSTRAINT sign_in_failures_failures_check CHECK ((failures >= 0))
);

-- Name: suspended_turns; Type: TABLE; Schema: public; Owner: -

CREATE TABLE public.suspended_turns (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    owner_id uuid NOT NULL,
    conversation_id uuid NOT NULL,
    run_id uuid NOT NULL,
    version integer NOT NULL,
    state jsonb NOT NULL,
    args_hash text NOT NULL,
    status public.suspended_status DEFAULT 'pending'::public.suspended_status NOT NULL,
    claimed_at timestamp with time zone,
    results jsonb,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    history_base integer,
    claimed_by text,
    CONSTRAINT suspended_turns_claim_consistent CHECK (((status = 'pending'::public.suspended_status) = (claimed_at IS NULL))),
    CONSTRAINT suspended_turns_history_base_check CHECK ((history_base >= 0)),
    CONSTRAINT suspended_turns_results_when_applied CHECK (((status = 'applied'::public.suspended_status) = (results IS NOT NULL))),
    CONSTRAINT suspended_turns_state_check CHECK ((octet_length((state)::text) <= 262144)),
    CONSTRAINT suspended_turns_version_check CHECK ((version >= 1))
);
ALTER TABLE ONLY public.suspended_turns ALTER COLUMN state SET COMPRESSION lz4;
ALTER TABLE ONLY public.suspended_turns ALTER COLUMN results SET COMPRESSION lz4;

-- Name: trace_events; Type: TABLE; Schema: public; Owner: -

CREATE TABLE public.trace_events (
    owner_id uuid NOT NULL,
    run_id uuid NOT NULL,
    seq integer NOT NULL,
    type public.trace_event_type NOT NULL,
    payload jsonb NOT NULL,
    latency_ms integer,
    input_tokens bigint,
    output_tokens bigint,
    cached_tokens bigint,
    thought_summary text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT trace_events_seq_check CHECK ((seq >= 0))
);
ALTER TABLE ONLY public.trace_events ALTER COLUMN payload SET COMPRESSION lz4;

-- Name: trace_runs; Type: TABLE; Schema: public; Owner: -

CREATE TABLE public.trace_runs (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    owner_id uuid NOT NULL,
    conversation_id uuid,
    started_at timestamp with time zone DEFAULT now() NOT NULL,
    finished_at timestamp with time zone,
    provider text NOT NULL,
    model text NOT NULL,
    status public.run_status DEFAULT 'running'::public.run_status NOT NULL,
    iterations integer DEFAULT 0 NOT NULL,
    input_tokens bigint DEFAULT 0 NOT NULL,
    output_tokens bigint DEFAULT 0 NOT NULL,
    cached_tokens bigint DEFAULT 0 NOT NULL,
    cost_usd_est numeric(10,6) DEFAULT 0 NOT NULL,
    latency_ms integer DEFAULT 0 NOT NULL,
    channel public.channel NOT NULL,
    geo_country character(2),
    geo_region text,
    geo_city text,
    geo_lat double precision,
    geo_lon double precision,
    question text,
    parent_run_id uuid,
    CONSTRAINT trace_runs_question_check CHECK ((char_length(question) <= 500))
);

-- Name: transactions; Type: TABLE; Schema: public; Owner: -

CREATE TABLE public.transactions (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    owner_id uuid NOT NULL,
    date date NOT NULL,
    description text NOT NULL,
    raw_description text NOT NULL,
    import_batch_id uuid,
    source_hash text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    paired_source_hash text,
    paired_description text,
    paired_batch_id uuid,
    paired_date date,
    bank_category text,
    bank_ref text
);

-- Name: uploads; Type: TABLE; Schema: public; Owner: -

CREATE TABLE public.uploads (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    owner_id uuid NOT NULL,
    filename text NOT NULL,
    content_type text,
    size_bytes integer NOT NULL,
    sha256 text NOT NULL,
    content bytea NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    sample boolean DEFAULT false NOT NULL,
    CONSTRAINT uploads_content_check CHECK ((octet_length(content) <= 10485760)),
    CONSTRAINT uploads_size_bytes_check CHECK ((size_bytes >= 0)),
    CONSTRAINT uploads_size_matches CHECK ((size_bytes = octet_length(content)))
);
ALTER TABLE ONLY public.uploads ALTER COLUMN content SET COMPRESSION lz4;

-- Name: users; Type: TABLE; Schema: public; Owner: -

CREATE TABLE public.users (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    email text,
    password_hash text,
    is_anonymous boolean DEFAULT true NOT NULL,
    blocked_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    last_seen_at timestamp with time zone DEFAULT now() NOT NULL,
    demo_cloned_at timestamp with time zone,
    session_epoch integer DEFAULT 0 NOT NULL,
    operator boolean DEFAULT false NOT NULL,
    human_checked_at timestamp with time zone,
    google_sub text,
    email_verified_at timestamp with time zone,
    home_currency character(3),
    CONSTRAINT users_email_normalised CHECK (((email IS NULL) OR (email = lower(btrim(email))))),
    CONSTRAINT users_google_needs_email CHECK (((google_sub IS NULL) OR (email IS NOT NULL))),
    CONSTRAINT users_home_currency_check CHECK ((home_currency ~ '^[A-Z]{3}$'::text)),
    CONSTRAINT users_password_needs_email CHECK (((password_hash IS NULL) OR (email IS NOT NULL)))
);

-- Name: accounts accounts_id_owner_key; Type: CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.accounts
    ADD CONSTRAINT accounts_id_owner_key UNIQUE (id, owner_id);

-- Name: accounts accounts_owner_name_key; Type: CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.accounts
    ADD CONSTRAINT accounts_owner_name_key UNIQUE (owner_id, name);

-- Name: accounts accounts_pkey; Type: CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.accounts
    ADD CONSTRAINT accounts_pkey PRIMARY KEY (id);

-- Name: budget_days budget_days_pkey; Type: CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.budget_days
    ADD CONSTRAINT budget_days_pkey PRIMARY KEY (day);

-- Name: budget_holds budget_holds_pkey; Type: CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.budget_holds
    ADD CONSTRAINT budget_holds_pkey PRIMARY KEY (id);

-- Name: budgets budgets_account_month_key; Type: CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.budgets
    ADD CONSTRAINT budgets_account_month_key UNIQUE (account_id, month);

-- Name: budgets budgets_pkey; Type: CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.budgets
    ADD CONSTRAINT budgets_pkey PRIMARY KEY (id);

-- Name: conversation_messages conversation_messages_pkey; Type: CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.conversation_messages
    ADD CONSTRAINT conversation_messages_pkey PRIMARY KEY (owner_id, conversation_id, seq);

-- Name: conversations conversations_id_owner_key; Type: CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.conversations
    ADD CONSTRAINT conversations_id_owner_key UNIQUE (id, owner_id);

-- Name: conversations conversations_pkey; Type: CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.conversations
    ADD CONSTRAINT conversations_pkey PRIMARY KEY (id);

-- Name: email_tokens email_tokens_pkey; Type: CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.email_tokens
    ADD CONSTRAINT email_tokens_pkey PRIMARY KEY (token_hash);

-- Name: eval_reports eval_reports_pkey; Type: CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.eval_reports
    ADD CONSTRAINT eval_reports_pkey PRIMARY KEY (id);

-- Name: housekeeping_runs housekeeping_runs_pkey; Type: CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.housekeeping_runs
    ADD CONSTRAINT housekeeping_runs_pkey PRIMARY KEY (id);

-- Name: import_batches import_batches_id_owner_key; Type: CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.import_batches
    ADD CONSTRAINT import_batches_id_owner_key UNIQUE (id, owner_id);

-- Name: import_batches import_batches_pkey; Type: CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.import_batches
    ADD CONSTRAINT import_batches_pkey PRIMARY KEY (id);

-- Name: import_mappings import_mappings_pkey; Type: CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.import_mappings
    ADD CONSTRAINT import_mappings_pkey PRIMARY KEY (owner_id, account);

-- Name: import_plan_rows import_plan_rows_pkey; Type: CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.import_plan_rows
    ADD CONSTRAINT import_plan_rows_pkey PRIMARY KEY (batch_id, chunk);

-- Name: ledger_edits ledger_edits_id_owner_key; Type: CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.ledger_edits
    ADD CONSTRAINT ledger_edits_id_owner_key UNIQUE (id, owner_id);

-- Name: ledger_edits ledger_edits_pkey; Type: CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.ledger_edits
    ADD CONSTRAINT ledger_edits_pkey PRIMARY KEY (id);

-- Name: memories memories_owner_content_category_key; Type: CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.memories
    ADD CONSTRAINT memories_owner_content_category_key UNIQUE (owner_id, content, category);

-- Name: memories memories_pkey; Type: CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.memories
    ADD CONSTRAINT memories_pkey PRIMARY KEY (id);

-- Name: operator_flags operator_flags_pkey; Type: CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.operator_flags
    ADD CONSTRAINT operator_flags_pkey PRIMARY KEY (key);

-- Name: owner_daily_messages owner_daily_messages_pkey; Type: CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.owner_daily_messages
    ADD CONSTRAINT owner_daily_messages_pkey PRIMARY KEY (owner_id, day);

-- Name: postings postings_pkey; Type: CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.postings
    ADD CONSTRAINT postings_pkey PRIMARY KEY (id);

-- Name: rate_limits rate_limits_pkey; Type: CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.rate_limits
    ADD CONSTRAINT rate_limits_pkey PRIMARY KEY (key);

-- Name: rules rules_pkey; Type: CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.rules
    ADD CONSTRAINT rules_pkey PRIMARY KEY (id);

-- Name: sign_in_failures sign_in_failures_pkey; Type: CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.sign_in_failures
    ADD CONSTRAINT sign_in_failures_pkey PRIMARY KEY (key);

-- Name: suspended_turns suspended_turns_pkey; Type: CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.suspended_turns
    ADD CONSTRAINT suspended_turns_pkey PRIMARY KEY (id);

-- Name: trace_events trace_events_pkey; Type: CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.trace_events
    ADD CONSTRAINT trace_events_pkey PRIMARY KEY (owner_id, run_id, seq);

-- Name: trace_runs trace_runs_id_owner_key; Type: CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.trace_runs
    ADD CONSTRAINT trace_runs_id_owner_key UNIQUE (id, owner_id);

-- Name: trace_runs trace_runs_pkey; Type: CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.trace_runs
    ADD CONSTRAINT trace_runs_pkey PRIMARY KEY (id);

-- Name: transactions transactions_id_owner_key; Type: CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.transactions
    ADD CONSTRAINT transactions_id_owner_key UNIQUE (id, owner_id);

-- Name: transactions transactions_pkey; Type: CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.transactions
    ADD CONSTRAINT transactions_pkey PRIMARY KEY (id);

-- Name: uploads uploads_pkey; Type: CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.uploads
    ADD CONSTRAINT uploads_pkey PRIMARY KEY (id);

-- Name: users users_pkey; Type: CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.users
    ADD CONSTRAINT users_pkey PRIMARY KEY (id);

-- Name: budget_holds_day_expires_idx; Type: INDEX; Schema: public; Owner: -

CREATE INDEX budget_holds_day_expires_idx ON public.budget_holds USING btree (day, expires_at);

-- Name: budgets_owner_month_idx; Type: INDEX; Schema: public; Owner: -

CREATE INDEX budgets_owner_month_idx ON public.budgets USING btree (owner_id, month);

-- Name: conversations_owner_updated_idx; Type: INDEX; Schema: public; Owner: -

CREATE INDEX conversations_owner_updated_idx ON public.conversations USING btree (owner_id, updated_at);

-- Name: email_tokens_expires_idx; Type: INDEX; Schema: public; Owner: -

CREATE INDEX email_tokens_expires_idx ON public.email_tokens USING btree (expires_at);

-- Name: email_tokens_user_idx; Type: INDEX; Schema: public; Owner: -

CREATE INDEX email_tokens_user_idx ON public.email_tokens USING btree (user_id, purpose);

-- Name: eval_reports_finished_idx; Type: INDEX; Schema: public; Owner: -

CREATE INDEX eval_reports_finished_idx ON public.eval_reports USING btree ((((filter IS NULL) AND complete)), finished_at DESC);

-- Name: import_batches_owner_created_idx; Type: INDEX; Schema: public; Owner: -

CREATE INDEX import_batches_owner_created_idx ON public.import_batches USING btree (owner_id, created_at);

-- Name: import_batches_planned_idx; Type: INDEX; Schema: public; Owner: -

CREATE INDEX import_batches_planned_idx ON public.import_batches USING btree (owner_id, source_sha256, options_key) WHERE (status = 'planned'::public.import_status);

-- Name: import_mappings_owner_account_ci; Type: INDEX; Schema: public; Owner: -

CREATE UNIQUE INDEX import_mappings_owner_account_ci ON public.import_mappings USING btree (owner_id, lower(account));

-- Name: ledger_edits_owner_made_idx; Type: INDEX; Schema: public; Owner: -

CREATE INDEX ledger_edits_owner_made_idx ON public.ledger_edits USING btree (owner_id, made_at DESC);

-- Name: memories_owner_created_idx; Type: INDEX; Schema: public; Owner: -

CREATE INDEX memories_owner_created_idx ON public.memories USING btree (owner_id, created_at);

-- Name: postings_owner_account_idx; Type: INDEX; Schema: public; Owner: -

CREATE INDEX postings_owner_account_idx ON public.postings USING btree (owner_id, account_id);

-- Name: postings_owner_transaction_idx; Type: INDEX; Schema: public; Owner: -

CREATE INDEX postings_owner_transaction_idx ON public.postings USING btree (owner_id, transaction_id);

-- Name: rules_owner_priority_idx; Type: INDEX; Schema: public; Owner: -

CREATE INDEX rules_owner_priority_idx ON public.rules USING btree (owner_id, priority);

-- Name: suspended_turns_expires_idx; Type: INDEX; Schema: public; Owner: -

CREATE INDEX suspended_turns_expires_idx ON public.suspended_turns USING btree (expires_at);

-- Name: suspended_turns_owner_conversation_idx; Type: INDEX; Schema: public; Owner: -

CREATE INDEX suspended_turns_owner_conversation_idx ON public.suspended_turns USING btree (owner_id, conversation_id);

-- Name: trace_runs_owner_conversation_started_idx; Type: INDEX; Schema: public; Owner: -

CREATE INDEX trace_runs_owner_conversation_started_idx ON public.trace_runs USING btree (owner_id, conversation_id, started_at);

-- Name: trace_runs_owner_started_idx; Type: INDEX; Schema: public; Owner: -

CREATE INDEX trace_runs_owner_started_idx ON public.trace_runs USING btree (owner_id, started_at);

-- Name: trace_runs_parent_idx; Type: INDEX; Schema: public; Owner: -

CREATE INDEX trace_runs_parent_idx ON public.trace_runs USING btree (parent_run_id) WHERE (parent_run_id IS NOT NULL);

-- Name: trace_runs_started_idx; Type: INDEX; Schema: public; Owner: -

CREATE INDEX trace_runs_started_idx ON public.trace_runs USING btree (started_at);

-- Name: transactions_owner_bank_ref; Type: INDEX; Schema: public; Owner: -

CREATE INDEX transactions_owner_bank_ref ON public.transactions USING btree (owner_id, bank_ref) WHERE (bank_ref IS NOT NULL);

-- Name: transactions_owner_date_idx; Type: INDEX; Schema: public; Owner: -

CREATE INDEX transactions_owner_date_idx ON public.transactions USING btree (owner_id, date);

-- Name: transactions_owner_paired_hash_key; Type: INDEX; Schema: public; Owner: -

CREATE UNIQUE INDEX transactions_owner_paired_hash_key ON public.transactions USING btree (owner_id, paired_source_hash) WHERE (paired_source_hash IS NOT NULL);

-- Name: transactions_owner_source_hash_key; Type: INDEX; Schema: public; Owner: -

CREATE UNIQUE INDEX transactions_owner_source_hash_key ON public.transactions USING btree (owner_id, source_hash) WHERE (source_hash IS NOT NULL);

-- Name: uploads_owner_created_idx; Type: INDEX; Schema: public; Owner: -

CREATE INDEX uploads_owner_created_idx ON public.uploads USING btree (owner_id, created_at);

-- Name: uploads_owner_sha256_idx; Type: INDEX; Schema: public; Owner: -

CREATE INDEX uploads_owner_sha256_idx ON public.uploads USING btree (owner_id, sha256);

-- Name: users_anonymous_created_idx; Type: INDEX; Schema: public; Owner: -

CREATE INDEX users_anonymous_created_idx ON public.users USING btree (created_at) WHERE is_anonymous;

-- Name: users_email_key; Type: INDEX; Schema: public; Owner: -

CREATE UNIQUE INDEX users_email_key ON public.users USING btree (email) WHERE (email IS NOT NULL);

-- Name: users_google_sub_key; Type: INDEX; Schema: public; Owner: -

CREATE UNIQUE INDEX users_google_sub_key ON public.users USING btree (google_sub) WHERE (google_sub IS NOT NULL);

-- Name: accounts accounts_owner_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.accounts
    ADD CONSTRAINT accounts_owner_id_fkey FOREIGN KEY (owner_id) REFERENCES public.users(id) ON DELETE CASCADE;

-- Name: budget_holds budget_holds_day_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.budget_holds
    ADD CONSTRAINT budget_holds_day_fkey FOREIGN KEY (day) REFERENCES public.budget_days(day);

-- Name: budgets budgets_account_id_owner_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.budgets
    ADD CONSTRAINT budgets_account_id_owner_id_fkey FOREIGN KEY (account_id, owner_id) REFERENCES public.accounts(id, owner_id) ON DELETE CASCADE DEFERRABLE;

-- Name: budgets budgets_owner_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.budgets
    ADD CONSTRAINT budgets_owner_id_fkey FOREIGN KEY (owner_id) REFERENCES public.users(id) ON DELETE CASCADE;

-- Name: conversation_messages conversation_messages_conversation_id_owner_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.conversation_messages
    ADD CONSTRAINT conversation_messages_conversation_id_owner_id_fkey FOREIGN KEY (conversation_id, owner_id) REFERENCES public.conversations(id, owner_id) ON DELETE CASCADE DEFERRABLE;

-- Name: conversations conversations_owner_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.conversations
    ADD CONSTRAINT conversations_owner_id_fkey FOREIGN KEY (owner_id) REFERENCES public.users(id) ON DELETE CASCADE;

-- Name: email_tokens email_tokens_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.email_tokens
    ADD CONSTRAINT email_tokens_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;

-- Name: import_batches import_batches_account_id_owner_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.import_batches
    ADD CONSTRAINT import_batches_account_id_owner_id_fkey FOREIGN KEY (account_id, owner_id) REFERENCES public.accounts(id, owner_id) ON DELETE CASCADE DEFERRABLE;

-- Name: import_batches import_batches_owner_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.import_batches
    ADD CONSTRAINT import_batches_owner_id_fkey FOREIGN KEY (owner_id) REFERENCES public.users(id) ON DELETE CASCADE;

-- Name: import_mappings import_mappings_owner_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.import_mappings
    ADD CONSTRAINT import_mappings_owner_id_fkey FOREIGN KEY (owner_id) REFERENCES public.users(id) ON DELETE CASCADE;

-- Name: import_plan_rows import_plan_rows_batch_id_owner_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.import_plan_rows
    ADD CONSTRAINT import_plan_rows_batch_id_owner_id_fkey FOREIGN KEY (batch_id, owner_id) REFERENCES public.import_batches(id, owner_id) ON DELETE CASCADE DEFERRABLE;

-- Name: import_plan_rows import_plan_rows_owner_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.import_plan_rows
    ADD CONSTRAINT import_plan_rows_owner_id_fkey FOREIGN KEY (owner_id) REFERENCES public.users(id) ON DELETE CASCADE;

-- Name: ledger_edits ledger_edits_owner_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.ledger_edits
    ADD CONSTRAINT ledger_edits_owner_id_fkey FOREIGN KEY (owner_id) REFERENCES public.users(id) ON DELETE CASCADE;

-- Name: memories memories_owner_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.memories
    ADD CONSTRAINT memories_owner_id_fkey FOREIGN KEY (owner_id) REFERENCES public.users(id) ON DELETE CASCADE;

-- Name: owner_daily_messages owner_daily_messages_owner_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.owner_daily_messages
    ADD CONSTRAINT owner_daily_messages_owner_id_fkey FOREIGN KEY (owner_id) REFERENCES public.users(id) ON DELETE CASCADE;

-- Name: postings postings_account_id_owner_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.postings
    ADD CONSTRAINT postings_account_id_owner_id_fkey FOREIGN KEY (account_id, owner_id) REFERENCES public.accounts(id, owner_id) DEFERRABLE;

-- Name: postings postings_owner_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.postings
    ADD CONSTRAINT postings_owner_id_fkey FOREIGN KEY (owner_id) REFERENCES public.users(id) ON DELETE CASCADE;

-- Name: postings postings_transaction_id_owner_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.postings
    ADD CONSTRAINT postings_transaction_id_owner_id_fkey FOREIGN KEY (transaction_id, owner_id) REFERENCES public.transactions(id, owner_id) ON DELETE CASCADE DEFERRABLE;

-- Name: rules rules_account_id_owner_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.rules
    ADD CONSTRAINT rules_account_id_owner_id_fkey FOREIGN KEY (account_id, owner_id) REFERENCES public.accounts(id, owner_id) ON DELETE CASCADE DEFERRABLE;

-- Name: rules rules_owner_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.rules
    ADD CONSTRAINT rules_owner_id_fkey FOREIGN KEY (owner_id) REFERENCES public.users(id) ON DELETE CASCADE;

-- Name: suspended_turns suspended_turns_conversation_id_owner_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.suspended_turns
    ADD CONSTRAINT suspended_turns_conversation_id_owner_id_fkey FOREIGN KEY (conversation_id, owner_id) REFERENCES public.conversations(id, owner_id) ON DELETE CASCADE DEFERRABLE;

-- Name: suspended_turns suspended_turns_owner_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.suspended_turns
    ADD CONSTRAINT suspended_turns_owner_id_fkey FOREIGN KEY (owner_id) REFERENCES public.users(id) ON DELETE CASCADE;

-- Name: trace_events trace_events_run_id_owner_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.trace_events
    ADD CONSTRAINT trace_events_run_id_owner_id_fkey FOREIGN KEY (run_id, owner_id) REFERENCES public.trace_runs(id, owner_id) ON DELETE CASCADE DEFERRABLE;

-- Name: trace_runs trace_runs_owner_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.trace_runs
    ADD CONSTRAINT trace_runs_owner_id_fkey FOREIGN KEY (owner_id) REFERENCES public.users(id) ON DELETE CASCADE;

-- Name: trace_runs trace_runs_parent_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.trace_runs
    ADD CONSTRAINT trace_runs_parent_fkey FOREIGN KEY (parent_run_id, owner_id) REFERENCES public.trace_runs(id, owner_id) ON DELETE CASCADE;

-- Name: transactions transactions_import_batch_id_owner_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.transactions
    ADD CONSTRAINT transactions_import_batch_id_owner_id_fkey FOREIGN KEY (import_batch_id, owner_id) REFERENCES public.import_batches(id, owner_id) ON DELETE SET NULL (import_batch_id) DEFERRABLE;

-- Name: transactions transactions_owner_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.transactions
    ADD CONSTRAINT transactions_owner_id_fkey FOREIGN KEY (owner_id) REFERENCES public.users(id) ON DELETE CASCADE;

-- Name: uploads uploads_owner_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.uploads
    ADD CONSTRAINT uploads_owner_id_fkey FOREIGN KEY (owner_id) REFERENCES public.users(id) ON DELETE CASCADE;

-- Name: accounts; Type: ROW SECURITY; Schema: public; Owner: -

ALTER TABLE public.accounts ENABLE ROW LEVEL SECURITY;

-- Name: accounts accounts_owner; Type: POLICY; Schema: public; Owner: -

CREATE POLICY accounts_owner ON public.accounts USING ((owner_id = public.app_owner_id())) WITH CHECK ((owner_id = public.app_owner_id()));

-- Name: budgets; Type: ROW SECURITY; Schema: public; Owner: -

ALTER TABLE public.budgets ENABLE ROW LEVEL SECURITY;

-- Name: budgets budgets_owner; Type: POLICY; Schema: public; Owner: -

CREATE POLICY budgets_owner ON public.budgets USING ((owner_id = public.app_owner_id())) WITH CHECK ((owner_id = public.app_owner_id()));

-- Name: conversation_messages; Type: ROW SECURITY; Schema: public; Owner: -

ALTER TABLE public.conversation_messages ENABLE ROW LEVEL SECURITY;

-- Name: conversation_messages conversation_messages_owner; Type: POLICY; Schema: public; Owner: -

CREATE POLICY conversation_messages_owner ON public.conversation_messages USING ((owner_id = public.app_owner_id())) WITH CHECK ((owner_id = public.app_owner_id()));

-- Name: conversations; Type: ROW SECURITY; Schema: public; Owner: -

ALTER TABLE public.conversations ENABLE ROW LEVEL SECURITY;

-- Name: conversations conversations_owner; Type: POLICY; Schema: public; Owner: -

CREATE POLICY conversations_owner ON public.conversations USING ((owner_id = public.app_owner_id())) WITH CHECK ((owner_id = public.app_owner_id()));

-- Name: import_batches; Type: ROW SECURITY; Schema: public; Owner: -

ALTER TABLE public.import_batches ENABLE ROW LEVEL SECURITY;

-- Name: import_batches import_batches_owner; Type: POLICY; Schema: public; Owner: -

CREATE POLICY import_batches_owner ON public.import_batches USING ((owner_id = public.app_owner_id())) WITH CHECK ((owner_id = public.app_owner_id()));

-- Name: import_mappings; Type: ROW SECURITY; Schema: public; Owner: -

ALTER TABLE public.import_mappings ENABLE ROW LEVEL SECURITY;

-- Name: import_mappings import_mappings_owner; Type: POLICY; Schema: public; Owner: -

CREATE POLICY import_mappings_owner ON public.import_mappings USING ((owner_id = public.app_owner_id())) WITH CHECK ((owner_id = public.app_owner_id()));

-- Name: import_plan_rows; Type: ROW SECURITY; Schema: public; Owner: -

ALTER TABLE public.import_plan_rows ENABLE ROW LEVEL SECURITY;

-- Name: import_plan_rows import_plan_rows_owner; Type: POLICY; Schema: public; Owner: -

CREATE POLICY import_plan_rows_owner ON public.import_plan_rows USING ((owner_id = public.app_owner_id())) WITH CHECK ((owner_id = public.app_owner_id()));

-- Name: ledger_edits; Type: ROW SECURITY; Schema: public; Owner: -

ALTER TABLE public.ledger_edits ENABLE ROW LEVEL SECURITY;

-- Name: ledger_edits ledger_edits_owner; Type: POLICY; Schema: public; Owner: -

CREATE POLICY ledger_edits_owner ON public.ledger_edits USING ((owner_id = public.app_owner_id())) WITH CHECK ((owner_id = public.app_owner_id()));

-- Name: memories; Type: ROW SECURITY; Schema: public; Owner: -

ALTER TABLE public.memories ENABLE ROW LEVEL SECURITY;

-- Name: memories memories_owner; Type: POLICY; Schema: public; Owner: -

CREATE POLICY memories_owner ON public.memories USING ((owner_id = public.app_owner_id())) WITH CHECK ((owner_id = public.app_owner_id()));

-- Name: postings; Type: ROW SECURITY; Schema: public; Owner: -

ALTER TABLE public.postings ENABLE ROW LEVEL SECURITY;

-- Name: postings postings_owner; Type: POLICY; Schema: public; Owner: -

CREATE POLICY postings_owner ON public.postings USING ((owner_id = public.app_owner_id())) WITH CHECK ((owner_id = public.app_owner_id()));

-- Name: rules; Type: ROW SECURITY; Schema: public; Owner: -

ALTER TABLE public.rules ENABLE ROW LEVEL SECURITY;

-- Name: rules rules_owner; Type: POLICY; Schema: public; Owner: -

CREATE POLICY rules_owner ON public.rules USING ((owner_id = public.app_owner_id())) WITH CHECK ((owner_id = public.app_owner_id()));

-- Name: suspended_turns; Type: ROW SECURITY; Schema: public; Owner: -

ALTER TABLE public.suspended_turns ENABLE ROW LEVEL SECURITY;

-- Name: suspended_turns suspended_turns_owner; Type: POLICY; Schema: public; Owner: -

CREATE POLICY suspended_turns_owner ON public.suspended_turns USING ((owner_id = public.app_owner_id())) WITH CHECK ((owner_id = public.app_owner_id()));

-- Name: trace_events; Type: ROW SECURITY; Schema: public; Owner: -

ALTER TABLE public.trace_events ENABLE ROW LEVEL SECURITY;

-- Name: trace_events trace_events_owner; Type: POLICY; Schema: public; Owner: -

CREATE POLICY trace_events_owner ON public.trace_events USING ((owner_id = public.app_owner_id())) WITH CHECK ((owner_id = public.app_owner_id()));

-- Name: trace_runs; Type: ROW SECURITY; Schema: public; Owner: -

ALTER TABLE public.trace_runs ENABLE ROW LEVEL SECURITY;

-- Name: trace_runs trace_runs_owner; Type: POLICY; Schema: public; Owner: -

CREATE POLICY trace_runs_owner ON public.trace_runs USING ((owner_id = public.app_owner_id())) WITH CHECK ((owner_id = public.app_owner_id()));

-- Name: transactions; Type: ROW SECURITY; Schema: public; Owner: -

ALTER TABLE public.transactions ENABLE ROW LEVEL SECURITY;

-- Name: transactions transactions_owner; Type: POLICY; Schema: public; Owner: -

CREATE POLICY transactions_owner ON public.transactions USING ((owner_id = public.app_owner_id())) WITH CHECK ((owner_id = public.app_owner_id()));

-- Name: uploads; Type: ROW SECURITY; Schema: public; Owner: -

ALTER TABLE public.uploads ENABLE ROW LEVEL SECURITY;

-- Name: uploads uploads_owner; Type: POLICY; Schema: public; Owner: -

CREATE POLICY uploads_owner ON public.uploads USING ((owner_id = public.app_owner_id())) WITH CHECK ((owner_id = public.app_owner_id()));

-- Name: users; Type: ROW SECURITY; Schema: public; Owner: -

ALTER TABLE public.users ENABLE ROW LEVEL SECURITY;

-- Name: users users_self; Type: POLICY; Schema: public; Owner: -

CREATE POLICY users_self ON public.users USING ((id = public.app_owner_id())) WITH CHECK ((id = public.app_owner_id()));

-- Name: SCHEMA public; Type: ACL; Schema: -; Owner: -

GRANT USAGE ON SCHEMA public TO app_user;

-- Name: FUNCTION app_append_history(p_owner uuid, p_conversation uuid, p_messages jsonb[], p_evicted integer, p_summary jsonb); Type: ACL; Schema: public; Owner: -

GRANT ALL ON FUNCTION public.app_append_history(p_owner uuid, p_conversation uuid, p_messages jsonb[], p_evicted integer, p_summary jsonb) TO app_user;

-- Name: FUNCTION app_close_turn(p_owner uuid, p_conversation uuid, p_messages jsonb[], p_evicted integer, p_summary jsonb, p_events jsonb, p_run uuid, p_input bigint, p_output bigint, p_cached bigint, p_cost numeric, p_iterations integer, p_status public.run_status); Type: ACL; Schema: public; Owner: -

GRANT ALL ON FUNCTION public.app_close_turn(p_owner uuid, p_conversation uuid, p_messages jsonb[], p_evicted integer, p_summary jsonb, p_events jsonb, p_run uuid, p_input bigint, p_output bigint, p_cached bigint, p_cost numeric, p_iterations integer, p_status public.run_status) TO app_user;

-- Name: FUNCTION app_commit_lazily(); Type: ACL; Schema: public; Owner: -

GRANT ALL ON FUNCTION public.app_commit_lazily() TO app_user;

-- Name: FUNCTION app_conversation(p_owner uuid, p_requested uuid, p_title text); Type: ACL; Schema: public; Owner: -

GRANT ALL ON FUNCTION public.app_conversation(p_owner uuid, p_requested uuid, p_title text) TO app_user;

-- Name: FUNCTION app_conversation_busy(p_owner uuid, p_conversation uuid); Type: ACL; Schema: public; Owner: -

GRANT ALL ON FUNCTION public.app_conversation_busy(p_owner uuid, p_conversation uuid) TO app_user;

-- Name: FUNCTION app_conversation_model(p_owner uuid, p_conversation uuid); Type: ACL; Schema: public; Owner: -

GRANT ALL ON FUNCTION public.app_conversation_model(p_owner uuid, p_conversation uuid) TO app_user;

-- Name: FUNCTION app_conversation_state(p_owner uuid, p_conversation uuid); Type: ACL; Schema: public; Owner: -

GRANT ALL ON FUNCTION public.app_conversation_state(p_owner uuid, p_conversation uuid) TO app_user;

-- Name: FUNCTION app_finish_turn(p_owner uuid, p_suspended uuid, p_fence timestamp with time zone, p_conversation uuid, p_messages jsonb[], p_replace boolean, p_events jsonb, p_run uuid, p_input bigint, p_output bigint, p_cached bigint, p_cost numeric, p_iterations integer, p_status public.run_status); Type: ACL; Schema: public; Owner: -

GRANT ALL ON FUNCTION public.app_finish_turn(p_owner uuid, p_suspended uuid, p_fence timestamp with time zone, p_conversation uuid, p_messages jsonb[], p_replace boolean, p_events jsonb, p_run uuid, p_input bigint, p_output bigint, p_cached bigint, p_cost numeric, p_iterations integer, p_status public.run_status) TO app_user;

-- Name: FUNCTION app_history(p_owner uuid, p_conversation uuid); Type: ACL; Schema: public; Owner: -

GRANT ALL ON FUNCTION public.app_history(p_owner uuid, p_conversation uuid) TO app_user;

-- Name: FUNCTION app_insert_events(p_owner uuid, p_events jsonb); Type: ACL; Schema: public; Owner: -

GRANT ALL ON FUNCTION public.app_insert_events(p_owner uuid, p_events jsonb) TO app_user;

-- Name: FUNCTION app_insert_subruns(p_owner uuid, p_parent uuid, p_runs jsonb); Type: ACL; Schema: public; Owner: -

GRANT ALL ON FUNCTION public.app_insert_subruns(p_owner uuid, p_parent uuid, p_runs jsonb) TO app_user;

-- Name: FUNCTION app_open_turn(p_owner uuid, p_conversation uuid, p_run uuid, p_provider text, p_model text, p_channel public.channel, p_recent bigint, p_categories text[], p_new boolean, p_title text, p_question text, OUT history jsonb[], OUT memories text[]); Type: ACL; Schema: public; Owner: -

GRANT ALL ON FUNCTION public.app_open_turn(p_owner uuid, p_conversation uuid, p_run uuid, p_provider text, p_model text, p_channel public.channel, p_recent bigint, p_categories text[], p_new boolean, p_title text, p_question text, OUT history jsonb[], OUT memories text[]) TO app_user;

-- Name: FUNCTION app_recall(p_owner uuid, p_recent bigint, p_categories text[]); Type: ACL; Schema: public; Owner: -

GRANT ALL ON FUNCTION public.app_recall(p_owner uuid, p_recent bigint, p_categories text[]) TO app_user;

-- Name: FUNCTION app_replace_history(p_owner uuid, p_conversation uuid, p_messages jsonb[]); Type: ACL; Schema: public; Owner: -

GRANT ALL ON FUNCTION public.app_replace_history(p_owner uuid, p_conversation uuid, p_messages jsonb[]) TO app_user;

-- Name: FUNCTION app_set_owner(owner uuid); Type: ACL; Schema: public; Owner: -

GRANT ALL ON FUNCTION public.app_set_owner(owner uuid) TO app_user;

-- Name: FUNCTION app_suspend_turn(p_owner uuid, p_conversation uuid, p_run uuid, p_version integer, p_state jsonb, p_args_hash text, p_expires_at timestamp with time zone, p_history_base integer, p_evicted integer, p_summary jsonb, p_events jsonb, p_input bigint, p_output bigint, p_cached bigint, p_cost numeric, p_iterations integer); Type: ACL; Schema: public; Owner: -

GRANT ALL ON FUNCTION public.app_suspend_turn(p_owner uuid, p_conversation uuid, p_run uuid, p_version integer, p_state jsonb, p_args_hash text, p_expires_at timestamp with time zone, p_history_base integer, p_evicted integer, p_summary jsonb, p_events jsonb, p_input bigint, p_output bigint, p_cached bigint, p_cost numeric, p_iterations integer) TO app_user;

-- Name: FUNCTION app_update_run(p_owner uuid, p_run uuid, p_input bigint, p_output bigint, p_cached bigint, p_cost numeric, p_iterations integer, p_status public.run_status); Type: ACL; Schema: public; Owner: -

GRANT ALL ON FUNCTION public.app_update_run(p_owner uuid, p_run uuid, p_input bigint, p_output bigint, p_cached bigint, p_cost numeric, p_iterations integer, p_status public.run_status) TO app_user;

-- Name: FUNCTION app_visitor(p_owner uuid); Type: ACL; Schema: public; Owner: -

GRANT ALL ON FUNCTION public.app_visitor(p_owner uuid) TO app_user;

-- Name: FUNCTION consume_quota(p_owner uuid, p_address_key text, p_kind text, p_anonymous_cap integer, p_signed_in_cap integer, p_address_cap integer, p_budget_usd numeric, p_now timestamp with time zone); Type: ACL; Schema: public; Owner: -

REVOKE ALL ON FUNCTION public.consume_quota(p_owner uuid, p_address_key text, p_kind text, p_anonymous_cap integer, p_signed_in_cap integer, p_address_cap integer, p_budget_usd numeric, p_now timestamp with time zone) FROM PUBLIC;

-- Name: TABLE accounts; Type: ACL; Schema: public; Owner: -

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.accounts TO app_user;

-- Name: TABLE budgets; Type: ACL; Schema: public; Owner: -

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.budgets TO app_user;

-- Name: TABLE conversation_messages; Type: ACL; Schema: public; Owner: -

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.conversation_messages TO app_user;

-- Name: TABLE conversations; Type: ACL; Schema: public; Owner: -

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.conversations TO app_user;

-- Name: TABLE eval_reports; Type: ACL; Schema: public; Owner: -

GRANT SELECT,INSERT ON TABLE public.eval_reports TO app_user;

-- Name: TABLE import_batches; Type: ACL; Schema: public; Owner: -

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.import_batches TO app_user;

-- Name: TABLE import_mappings; Type: ACL; Schema: public; Owner: -

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.import_mappings TO app_user;

-- Name: TABLE import_plan_rows; Type: ACL; Schema: public; Owner: -

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.import_plan_rows TO app_user;

-- Name: TABLE ledger_edits; Type: ACL; Schema: public; Owner: -

GRANT SELECT,INSERT,UPDATE ON TABLE public.ledger_edits TO app_user;

-- Name: TABLE memories; Type: ACL; Schema: public; Owner: -

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.memories TO app_user;

-- Name: TABLE operator_flags; Type: ACL; Schema: public; Owner: -

GRANT SELECT ON TABLE public.operator_flags TO app_user;

-- Name: TABLE postings; Type: ACL; Schema: public; Owner: -

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.postings TO app_user;

-- Name: TABLE rules; Type: ACL; Schema: public; Owner: -

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.rules TO app_user;

-- Name: TABLE suspended_turns; Type: ACL; Schema: public; Owner: -

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.suspended_turns TO app_user;

-- Name: TABLE trace_events; Type: ACL; Schema: public; Owner: -

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.trace_events TO app_user;

-- Name: TABLE trace_runs; Type: ACL; Schema: public; Owner: -

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.trace_runs TO app_user;

-- Name: TABLE transactions; Type: ACL; Schema: public; Owner: -

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.transactions TO app_user;

-- Name: TABLE uploads; Type: ACL; Schema: public; Owner: -

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.uploads TO app_user;

-- Name: COLUMN users.id; Type: ACL; Schema: public; Owner: -

GRANT SELECT(id) ON TABLE public.users TO app_user;

-- Name: COLUMN users.email; Type: ACL; Schema: public; Owner: -

GRANT SELECT(email) ON TABLE public.users TO app_user;

-- Name: COLUMN users.is_anonymous; Type: ACL; Schema: public; Owner: -

GRANT SELECT(is_anonymous) ON TABLE public.users TO app_user;

-- Name: COLUMN users.blocked_at; Type: ACL; Schema: public; Owner: -

GRANT SELECT(blocked_at) ON TABLE public.users TO app_user;

-- Name: COLUMN users.created_at; Type: ACL; Schema: public; Owner: -

GRANT SELECT(created_at) ON TABLE public.users TO app_user;

-- Name: COLUMN users.last_seen_at; Type: ACL; Schema: public; Owner: -

GRANT SELECT(last_seen_at),UPDATE(last_seen_at) ON TABLE public.users TO app_user;

-- Name: COLUMN users.demo_cloned_at; Type: ACL; Schema: public; Owner: -

GRANT SELECT(demo_cloned_at),UPDATE(demo_cloned_at) ON TABLE public.users TO app_user;

-- Name: COLUMN users.session_epoch; Type: ACL; Schema: public; Owner: -

GRANT SELECT(session_epoch) ON TABLE public.users TO app_user;

-- Name: COLUMN users.operator; Type: ACL; Schema: public; Owner: -

GRANT SELECT(operator) ON TABLE public.users TO app_user;

-- Name: COLUMN users.human_checked_at; Type: ACL; Schema: public; Owner: -

GRANT SELECT(human_checked_at) ON TABLE public.users TO app_user;

-- Name: COLUMN users.email_verified_at; Type: ACL; Schema: public; Owner: -

GRANT SELECT(email_verified_at) ON TABLE public.users TO app_user;

-- Name: COLUMN users.home_currency; Type: ACL; Schema: public; Owner: -

GRANT SELECT(home_currency),UPDATE(home_currency) ON TABLE public.users TO app_user;
