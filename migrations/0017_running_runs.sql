-- A run that has not finished says so. Before, a run's row was born `ok` and stayed `ok` when its
-- turn failed before its end (a store error, a function that died): a failure read as a success.
-- The value is added here and used from the next migration (PostgreSQL does not let a new enum
-- value be used in the transaction that adds it).
ALTER TYPE run_status ADD VALUE IF NOT EXISTS 'running' BEFORE 'ok';
