-- The busy check of every turn's opening (0019) looked for a `running` run of the conversation
-- through trace_runs_owner_started_idx, so it read every run the owner started in the last
-- fifteen minutes: an owner who talks a lot paid for it on every turn. Runs by conversation and
-- start make it one index probe. Neither column ever changes, so a run's updates stay HOT.
CREATE INDEX trace_runs_owner_conversation_started_idx ON trace_runs (owner_id, conversation_id, started_at);
