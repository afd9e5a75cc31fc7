-- A turn's phases, each one round trip. The function is called as a statement of its own, outside
-- any explicit transaction, so the statement's implicit transaction is the phase's: it sets the
-- tenant first (row-level security then applies to app_user's statements inside exactly as to its
-- own, since the functions run as their caller), does the phase's work, and commits as it returns.
-- Before, a phase was BEGIN, four or five statements and COMMIT, each a round trip of its own.
-- Everything is PL/pgSQL, which keeps each inner statement's plan for the connection's life:
-- prepared once per connection (a LANGUAGE sql function called from PL/pgSQL is planned anew at
-- every call). The tenant and the lazy commit are set_config calls here, as app_set_owner and
-- app_commit_lazily make them: RDS Proxy sees only the statement the client sends. The pieces (history, memories, events, run totals) are functions of their own, so
-- each statement exists once, whichever phase runs it.

-- The history the model sees, in order: the summary that stands for evicted messages, then the
-- messages from `history_from` on.
CREATE FUNCTION app_history(p_owner uuid, p_conversation uuid) RETURNS jsonb[]
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

-- The memories a question recalls, newest first: the `p_recent` newest, and every one filed under
-- a category the question names (lower-cased).
CREATE FUNCTION app_recall(p_owner uuid, p_recent bigint, p_categories text[]) RETURNS text[]
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

-- Appends a turn's new messages to its conversation. With `p_evicted` (how many of the messages
-- the model saw were evicted), `p_summary` stands for them from now on and the model's history
-- starts after them; nothing stored is rewritten.
CREATE FUNCTION app_append_history(p_owner uuid, p_conversation uuid, p_messages jsonb[], p_evicted integer,
                                   p_summary jsonb) RETURNS void
    LANGUAGE plpgsql VOLATILE
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

-- Replaces a conversation's whole history (a turn suspended before histories were appended, whose
-- new messages are not known).
CREATE FUNCTION app_replace_history(p_owner uuid, p_conversation uuid, p_messages jsonb[]) RETURNS void
    LANGUAGE plpgsql VOLATILE
    AS $$
BEGIN
    DELETE FROM conversation_messages WHERE owner_id = p_owner AND conversation_id = p_conversation;
    UPDATE conversations SET summary = NULL, history_from = 0 WHERE owner_id = p_owner AND id = p_conversation;
    PERFORM app_append_history(p_owner, p_conversation, p_messages, NULL, NULL);
END
$$;

-- A leg's trace events, a JSON array of rows; an event already stored (same run and seq) is kept.
CREATE FUNCTION app_insert_events(p_owner uuid, p_events jsonb) RETURNS void
    LANGUAGE plpgsql VOLATILE
    AS $$
BEGIN
    IF jsonb_array_length(p_events) > 0 THEN
        INSERT INTO trace_events (owner_id, run_id, seq, type, payload, latency_ms, input_tokens, output_tokens,
                                  cached_tokens, thought_summary)
        SELECT p_owner, e.*
        FROM jsonb_to_recordset(p_events) AS e(run_id uuid, seq integer, type trace_event_type, payload jsonb,
                                               latency_ms integer, input_tokens bigint, output_tokens bigint,
                                               cached_tokens bigint, thought_summary text)
        ON CONFLICT (run_id, seq) DO NOTHING;
    END IF;
END
$$;

-- A run's totals so far; with `p_status` it is finished, its latency taken from its start.
CREATE FUNCTION app_update_run(p_owner uuid, p_run uuid, p_input bigint, p_output bigint, p_cached bigint,
                               p_cost numeric, p_iterations integer, p_status run_status) RETURNS void
    LANGUAGE plpgsql VOLATILE
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

-- A new turn's opening, before the model is first called: the run's row, the history the model
-- sees and the memories the question recalls. Committed lazily (0008): a crash before the turn's
-- next, durable commit loses only the run row of a turn that died with it.
CREATE FUNCTION app_open_turn(p_owner uuid, p_conversation uuid, p_run uuid, p_provider text, p_model text,
                              p_channel channel, p_recent bigint, p_categories text[],
                              OUT history jsonb[], OUT memories text[])
    LANGUAGE plpgsql VOLATILE
    AS $$
BEGIN
    PERFORM set_config('app.owner_id', p_owner::text, true);
    PERFORM set_config('synchronous_commit', 'off', true);
    history := app_history(p_owner, p_conversation);
    INSERT INTO trace_runs (id, owner_id, conversation_id, provider, model, channel)
    VALUES (p_run, p_owner, p_conversation, p_provider, p_model, p_channel);
    memories := app_recall(p_owner, p_recent, p_categories);
END
$$;

-- A new turn that finished without waiting: its new messages appended, its leg's events, its
-- run's totals and status.
CREATE FUNCTION app_close_turn(p_owner uuid, p_conversation uuid, p_messages jsonb[], p_evicted integer,
                               p_summary jsonb, p_events jsonb, p_run uuid, p_input bigint, p_output bigint,
                               p_cached bigint, p_cost numeric, p_iterations integer, p_status run_status)
    RETURNS void
    LANGUAGE plpgsql VOLATILE
    AS $$
BEGIN
    PERFORM set_config('app.owner_id', p_owner::text, true);
    PERFORM app_append_history(p_owner, p_conversation, p_messages, p_evicted, p_summary);
    PERFORM app_insert_events(p_owner, p_events);
    PERFORM app_update_run(p_owner, p_run, p_input, p_output, p_cached, p_cost, p_iterations, p_status);
END
$$;

-- A new turn that waits for a person: the stored turn, the summary of a fitted context, the leg's
-- events and the run's totals so far. Returns the id a confirm names.
CREATE FUNCTION app_suspend_turn(p_owner uuid, p_conversation uuid, p_run uuid, p_version integer, p_state jsonb,
                                 p_args_hash text, p_expires_at timestamptz, p_history_base integer,
                                 p_evicted integer, p_summary jsonb, p_events jsonb, p_input bigint,
                                 p_output bigint, p_cached bigint, p_cost numeric, p_iterations integer)
    RETURNS uuid
    LANGUAGE plpgsql VOLATILE
    AS $$
DECLARE
    suspended uuid;
BEGIN
    PERFORM set_config('app.owner_id', p_owner::text, true);
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

-- A confirm's claim (compare-and-set: `pending` → `claimed`, or a claim older than the lease taken
-- over), committed lazily (0008: a crash before the apply's durable commit loses only the claim,
-- and nothing was applied under it). `o_claimed` says whether it was claimed, `o_present` whether
-- the owner has such a row at all; the rest is the claimed row.
CREATE FUNCTION app_claim_turn(p_owner uuid, p_suspended uuid, p_lease_seconds double precision,
                               OUT o_claimed boolean, OUT o_present boolean, OUT o_conversation uuid,
                               OUT o_fence timestamptz, OUT o_state jsonb, OUT o_results jsonb,
                               OUT o_expired boolean, OUT o_args_hash text, OUT o_history_base integer)
    LANGUAGE plpgsql VOLATILE
    AS $$
BEGIN
    PERFORM set_config('app.owner_id', p_owner::text, true);
    PERFORM set_config('synchronous_commit', 'off', true);
    UPDATE suspended_turns
    SET status = CASE WHEN status = 'pending' THEN 'claimed'::suspended_status ELSE status END,
        claimed_at = clock_timestamp()
    WHERE owner_id = p_owner AND id = p_suspended
      AND (status = 'pending' OR claimed_at < clock_timestamp() - make_interval(secs => p_lease_seconds))
    RETURNING conversation_id, claimed_at, state, results, expires_at <= now(), args_hash, history_base
    INTO o_conversation, o_fence, o_state, o_results, o_expired, o_args_hash, o_history_base;
    o_claimed := FOUND;
    o_present := o_claimed OR EXISTS (SELECT 1 FROM suspended_turns WHERE owner_id = p_owner AND id = p_suspended);
END
$$;

-- A confirmed turn's end, under the claim's fence: the stored turn goes, the conversation gets the
-- turn's new messages (`p_messages`: those after the stored turn's `history_base`, or its whole
-- history when `p_replace`, for a turn stored before histories were appended), the run its leg's
-- events, totals and status. False, with nothing done, when the fence no longer holds.
CREATE FUNCTION app_finish_turn(p_owner uuid, p_suspended uuid, p_fence timestamptz, p_conversation uuid,
                                p_messages jsonb[], p_replace boolean, p_events jsonb, p_run uuid,
                                p_input bigint, p_output bigint, p_cached bigint, p_cost numeric,
                                p_iterations integer, p_status run_status)
    RETURNS boolean
    LANGUAGE plpgsql VOLATILE
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

GRANT EXECUTE ON FUNCTION
    app_history(uuid, uuid),
    app_recall(uuid, bigint, text[]),
    app_append_history(uuid, uuid, jsonb[], integer, jsonb),
    app_replace_history(uuid, uuid, jsonb[]),
    app_insert_events(uuid, jsonb),
    app_update_run(uuid, uuid, bigint, bigint, bigint, numeric, integer, run_status),
    app_open_turn(uuid, uuid, uuid, text, text, channel, bigint, text[]),
    app_close_turn(uuid, uuid, jsonb[], integer, jsonb, jsonb, uuid, bigint, bigint, bigint, numeric, integer,
                   run_status),
    app_suspend_turn(uuid, uuid, uuid, integer, jsonb, text, timestamptz, integer, integer, jsonb, jsonb, bigint,
                     bigint, bigint, numeric, integer),
    app_claim_turn(uuid, uuid, double precision),
    app_finish_turn(uuid, uuid, timestamptz, uuid, jsonb[], boolean, jsonb, uuid, bigint, bigint, bigint, numeric,
                    integer, run_status)
TO app_user;
