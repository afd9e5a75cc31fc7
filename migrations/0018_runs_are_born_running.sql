-- A run is `running` from its opening until a phase end sets its status (`ok`, `error`, …); a run
-- that waits for a person stays `running` until the confirm finishes it. One whose turn failed
-- before its end is set to `error` by the turn when it can, and by the nightly reaper when it
-- cannot (its function died): `running` for an hour with nothing waiting on it.
ALTER TABLE trace_runs ALTER COLUMN status SET DEFAULT 'running';
