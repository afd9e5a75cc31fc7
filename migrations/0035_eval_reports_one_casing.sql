-- Evaluation reports in the wire's one casing: snake_case keys, and costs in integer
-- micro-dollars (`…_micro_usd`; 1500000 is $1.50) as the runs and the admin overview have them.
-- The reports stored before (camelCase, costs as dollar floats) are rewritten here, so the code
-- writes and reads one shape. The class names under `byClass` are names, not keys: kept.

CREATE OR REPLACE FUNCTION pg_temp.snake_keys(doc jsonb) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
    SELECT coalesce(jsonb_object_agg(lower(regexp_replace(key, '([A-Z])', '_\1', 'g')), value), '{}'::jsonb)
    FROM jsonb_each(doc)
$$;

-- `dollars` (a number, or null) as `micro`, a whole number of micro-dollars.
CREATE OR REPLACE FUNCTION pg_temp.to_micro(doc jsonb, dollars text, micro text) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN doc ? dollars
        THEN (doc - dollars) || jsonb_build_object(micro, round((doc ->> dollars)::numeric * 1000000)::bigint)
        ELSE doc END
$$;

UPDATE eval_reports e SET report = (
    SELECT pg_temp.to_micro(pg_temp.to_micro(pg_temp.to_micro(top,
            'median_cost_usd', 'median_cost_micro_usd'),
            'total_cost_usd', 'total_cost_micro_usd'),
            'judge_cost_usd', 'judge_cost_micro_usd')
        || jsonb_build_object(
            'results', (
                SELECT coalesce(jsonb_agg(
                    pg_temp.to_micro(pg_temp.to_micro(pg_temp.snake_keys(task),
                        'cost_usd_est', 'cost_micro_usd'),
                        'judge_cost_usd_est', 'judge_cost_micro_usd')
                    || jsonb_build_object('checks', (
                        SELECT coalesce(jsonb_agg(
                            pg_temp.to_micro(pg_temp.snake_keys(c), 'cost_usd_est', 'cost_micro_usd')
                            ORDER BY ci), '[]'::jsonb)
                        FROM jsonb_array_elements(coalesce(task -> 'checks', '[]'::jsonb)) WITH ORDINALITY AS cs(c, ci)))
                    ORDER BY ti), '[]'::jsonb)
                FROM jsonb_array_elements(coalesce(top -> 'results', '[]'::jsonb)) WITH ORDINALITY AS ts(task, ti)),
            'by_class', (
                SELECT coalesce(jsonb_object_agg(class, pg_temp.snake_keys(summary)), '{}'::jsonb)
                FROM jsonb_each(coalesce(top -> 'by_class', '{}'::jsonb)) AS bc(class, summary)),
            'injection', CASE WHEN jsonb_typeof(top -> 'injection') = 'object' THEN
                pg_temp.snake_keys(top -> 'injection') || jsonb_build_object('scenarios', (
                    SELECT coalesce(jsonb_agg(pg_temp.snake_keys(s) ORDER BY si), '[]'::jsonb)
                    FROM jsonb_array_elements(coalesce(top -> 'injection' -> 'scenarios', '[]'::jsonb))
                        WITH ORDINALITY AS ss(s, si)))
                ELSE 'null'::jsonb END)
    FROM (SELECT pg_temp.snake_keys(e.report) AS top) AS converted)
WHERE e.report ? 'taskCount';
