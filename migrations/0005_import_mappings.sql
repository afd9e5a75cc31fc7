-- How the last statement into an account was read — its columns, delimiter, lines to skip,
-- header, order of day and month, flipped signs — saved by the commit and reused for the next
-- statement into that account (its date order only as a hint where the next file's dates do not
-- decide). Keyed by the account's name as the import names it: the account may not exist before
-- its first statement.
CREATE TABLE import_mappings (
    owner_id   uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    account    text NOT NULL CHECK (length(account) > 0),
    mapping    jsonb NOT NULL,
    source     text NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (owner_id, account)
);
-- One mapping per account whatever the case it is named in ("checking", "Checking").
CREATE UNIQUE INDEX import_mappings_owner_account_ci ON import_mappings (owner_id, lower(account));

GRANT SELECT, INSERT, UPDATE, DELETE ON import_mappings TO app_user;
ALTER TABLE import_mappings ENABLE ROW LEVEL SECURITY;
CREATE POLICY import_mappings_owner ON import_mappings
    USING (owner_id = app_owner_id()) WITH CHECK (owner_id = app_owner_id());
