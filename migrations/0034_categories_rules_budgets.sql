-- The categories, rules and budgets screens (issue 38). Two more edits a person makes on the
-- site are recorded like the register's: a category merged into another, and a rule's category
-- given to the past rows like it. A merge moves more than transactions (the category itself, its
-- rules and its budgets), so an edit may keep what it needs to be reverted besides the snapshots.
ALTER TABLE ledger_edits DROP CONSTRAINT ledger_edits_kind_check;
ALTER TABLE ledger_edits ADD CONSTRAINT ledger_edits_kind_check CHECK (kind IN (
    'recategorize', 'describe', 'split', 'delete', 'undo_import', 'revert', 'merge', 'apply_rule'));
ALTER TABLE ledger_edits ADD COLUMN detail jsonb;
