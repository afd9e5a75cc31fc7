-- A subagent's run (issue 43): the `task` tool hands a piece of work to the same loop with a
-- fresh context. Its run is a row of its own, linked to the run that started it, so its trace
-- (model calls, tool calls, confirms) reads on its own. Its usage and cost are counted in the
-- parent's row — the run a person started is what it cost them — so a subagent's row holds no
-- totals of its own (zero tokens, zero cost; its events carry each call's usage), and every sum
-- over `trace_runs` (the daily budget, a visitor's spend, a conversation's) counts it once.
ALTER TABLE trace_runs ADD COLUMN parent_run_id uuid;
ALTER TABLE trace_runs ADD CONSTRAINT trace_runs_parent_fkey
    FOREIGN KEY (parent_run_id, owner_id) REFERENCES trace_runs (id, owner_id) ON DELETE CASCADE;
CREATE INDEX trace_runs_parent_idx ON trace_runs (parent_run_id) WHERE parent_run_id IS NOT NULL;

-- The subagent runs of a parent run, before the events that name them: each finished, with its
-- start, end, status and model calls. A run already stored (a turn's leg stored again) is kept.
CREATE FUNCTION app_insert_subruns(p_owner uuid, p_parent uuid, p_runs jsonb) RETURNS void
    LANGUAGE plpgsql VOLATILE
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
GRANT EXECUTE ON FUNCTION app_insert_subruns(uuid, uuid, jsonb) TO app_user;
