-- The ledger is read from memory or SSD-backed storage (Aurora's, a laptop's), where a random page
-- costs about what a sequential one does. With PostgreSQL's default random_page_cost of 4 the
-- planner reads every posting of an owner rather than look up a month's transactions by their date
-- index and their postings by transaction: `cargo xtask bench` measured a month's spending report
-- on 1,000,000 postings at 1.6 s where the index path takes a few dozen milliseconds. 1.1 is the
-- usual setting for such storage; it applies to this database's new connections. It needs the
-- database's owner: without that the migration says so and goes on (then set it in the server's
-- parameters instead).
DO $$
BEGIN
    EXECUTE format('ALTER DATABASE %I SET random_page_cost = 1.1', current_database());
EXCEPTION WHEN insufficient_privilege THEN
    RAISE NOTICE 'random_page_cost is not set for this database (the migration does not own it): set it to 1.1 in the server''s parameters';
END
$$;
