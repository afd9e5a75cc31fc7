-- A preview's plan is kept with what it was made from (issue 36): the statement's SHA-256 was
-- there already; options_key is a digest of the options that shape a plan (the account, the
-- currency, a mapping, the account's saved mapping). A second preview of the same statement with
-- the same options, while the ledger has not changed, reuses the plan instead of parsing again.
ALTER TABLE import_batches ADD COLUMN options_key text;
CREATE INDEX import_batches_planned_idx ON import_batches (owner_id, source_sha256, options_key)
    WHERE status = 'planned';
