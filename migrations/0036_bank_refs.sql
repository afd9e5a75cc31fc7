-- The bank's own id of an imported row (OFX FITID, camt AcctSvcrRef, MT940 bank reference), as
-- the statement gave it. The source hash already keys a row by it; kept in the clear too, so a
-- later statement can name the row: a bank that changed the id between downloads (the same
-- date, amount and text under another id is the row already there), and an OFX correction
-- (CORRECTFITID) that replaces or deletes the row of an earlier id.

ALTER TABLE transactions ADD COLUMN bank_ref text;

CREATE INDEX transactions_owner_bank_ref ON transactions (owner_id, bank_ref) WHERE bank_ref IS NOT NULL;
