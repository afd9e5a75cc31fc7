-- The rows of an import plan, in chunks: a statement of 10 MiB plans some 140,000 rows, and one
-- JSON document of them would take its size several times over in the memory of the function that
-- writes or reads it. The plan itself (import_batches.plan) keeps everything else; the commit reads
-- the chunks one at a time, and deletes them once the rows are in the ledger.
CREATE TABLE import_plan_rows (
    owner_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    batch_id uuid NOT NULL,
    chunk    integer NOT NULL CHECK (chunk >= 0),
    rows     jsonb NOT NULL,
    PRIMARY KEY (batch_id, chunk),
    -- Deferrable like every (id, owner_id) reference (0003): a visitor's rows move to another owner
    -- in one transaction.
    FOREIGN KEY (batch_id, owner_id) REFERENCES import_batches (id, owner_id) ON DELETE CASCADE
        DEFERRABLE INITIALLY IMMEDIATE
);

GRANT SELECT, INSERT, UPDATE, DELETE ON import_plan_rows TO app_user;
ALTER TABLE import_plan_rows ENABLE ROW LEVEL SECURITY;
CREATE POLICY import_plan_rows_owner ON import_plan_rows
    USING (owner_id = app_owner_id()) WITH CHECK (owner_id = app_owner_id());
