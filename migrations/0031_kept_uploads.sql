-- Uploads a person can manage (issue 38): the shipped sample statement is kept like any upload
-- but never counts against the visitor's limits, and the same file uploaded again is found by
-- its hash instead of being kept twice.
ALTER TABLE uploads ADD COLUMN sample boolean NOT NULL DEFAULT false;
CREATE INDEX uploads_owner_sha256_idx ON uploads (owner_id, sha256);
