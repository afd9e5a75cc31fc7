-- Who holds a confirm's claim: the process (a Lambda execution environment, or host and pid) that
-- applied its writes or took it over, so an operator can tell a claim's holder, and a `409` that
-- names when it may be taken over is backed by a record of whom it waits on.
ALTER TABLE suspended_turns ADD COLUMN claimed_by text;
