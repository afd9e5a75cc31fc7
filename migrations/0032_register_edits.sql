-- The register (issue 38): a person's own edits on the site — a category changed, a description
-- rewritten, a split, a deletion, an import undone — need no confirmation card, but each is
-- recorded with the transactions as they were and as the edit left them, so any one can be
-- reverted while nothing has changed them since.
CREATE TABLE ledger_edits (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    owner_id    uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    made_at     timestamptz NOT NULL DEFAULT now(),
    -- Where it was made: the site's register is the only door today.
    made_by     text NOT NULL DEFAULT 'web' CHECK (made_by IN ('web', 'cli')),
    kind        text NOT NULL CHECK (kind IN ('recategorize', 'describe', 'split', 'delete', 'undo_import', 'revert')),
    summary     text NOT NULL CHECK (char_length(summary) <= 500),
    -- Snapshots (the transaction row and its postings) before and after; a transaction absent
    -- from `after` was deleted, one absent from `before` was created.
    before      jsonb NOT NULL,
    after       jsonb NOT NULL,
    import_batch_id uuid,
    reverted_at timestamptz,
    reverted_by uuid,
    CONSTRAINT ledger_edits_id_owner_key UNIQUE (id, owner_id)
);
CREATE INDEX ledger_edits_owner_made_idx ON ledger_edits (owner_id, made_at DESC);
ALTER TABLE ledger_edits ENABLE ROW LEVEL SECURITY;
CREATE POLICY ledger_edits_owner ON ledger_edits
    USING (owner_id = app_owner_id()) WITH CHECK (owner_id = app_owner_id());
GRANT SELECT, INSERT, UPDATE ON ledger_edits TO app_user;

-- An import undone keeps its batch (the edit that undid it names it) and says so; a statement
-- whose import was undone is no longer "imported".
ALTER TABLE import_batches ADD COLUMN undone_at timestamptz;
