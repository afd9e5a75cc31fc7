-- The evaluation harness: its own owner, whose ledger is reset and reseeded before every task,
-- and the reports it stores for GET /api/evals/latest.

-- The evaluation owner. Not anonymous, so the nightly reaper never deletes it; it has no email,
-- so nobody can sign in to it. Its ledger is a copy of the demo seed, rewritten by every run.
INSERT INTO users (id, is_anonymous) VALUES ('00000000-0000-4000-8000-0000000000e1', false)
ON CONFLICT (id) DO NOTHING;

-- One row per finished evaluation run. The report holds only the evaluation owner's demo data.
CREATE TABLE eval_reports (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    started_at  timestamptz NOT NULL,
    finished_at timestamptz NOT NULL,
    trigger     text NOT NULL CHECK (trigger IN ('schedule', 'admin', 'cli')),
    model       text NOT NULL,
    -- The filter a local run was given (NULL: the whole suite), and whether every selected task
    -- ran: GET /api/evals/latest prefers the newest whole, complete run.
    filter      text,
    complete    boolean NOT NULL,
    task_count  integer NOT NULL CHECK (task_count >= 0),
    passed      integer NOT NULL CHECK (passed >= 0 AND passed <= task_count),
    report      jsonb NOT NULL
);
CREATE INDEX eval_reports_finished_idx ON eval_reports ((filter IS NULL AND complete), finished_at DESC);

-- The eval function stores reports and the runs function reads the latest, both as app_user.
-- The table holds no owner's data, so it has no row-level policy.
GRANT SELECT, INSERT ON eval_reports TO app_user;
