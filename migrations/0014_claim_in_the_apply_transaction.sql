-- A confirm's claim is now the row lock of the transaction that applies its writes (`SELECT …
-- FOR UPDATE NOWAIT`, then the writes and their stored results, then one commit), no longer a
-- statement that committed `claimed` on its own before it: one transaction and commit fewer per
-- confirm, and a confirm that dies between its claim and its apply leaves nothing behind — the
-- row is claimable again the moment its transaction is rolled back, instead of after the lease.
-- The `claimed` status is no longer written; a row left in it by the earlier protocol is claimed
-- again after its lease, as before.
DROP FUNCTION app_claim_turn(uuid, uuid, double precision);
