-- The library (the `kakeibo` crate) records its runs as its own channel, beside the CLI, the web,
-- the MCP server and the evaluations.
ALTER TYPE channel ADD VALUE IF NOT EXISTS 'library';
