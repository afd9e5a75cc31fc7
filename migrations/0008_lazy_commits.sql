-- A transaction whose loss in a crash loses nothing anyone was told — a turn's opening (its run
-- row), a confirm's claim — may commit without waiting for its log to reach the disk. The next
-- durable commit flushes the log up to itself, so it carries the earlier ones with it: a finished
-- turn's run row, or an applied write's claim, is always on disk. Only a crash in between drops
-- them, and with them only work that had not finished. Transaction-local; through a function for
-- the same reason as app_set_owner (RDS Proxy pins a connection on a bare set_config).
CREATE FUNCTION app_commit_lazily() RETURNS void
    LANGUAGE sql VOLATILE
    AS $$ SELECT set_config('synchronous_commit', 'off', true) $$;
GRANT EXECUTE ON FUNCTION app_commit_lazily() TO app_user;
