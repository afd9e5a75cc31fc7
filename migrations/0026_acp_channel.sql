-- The ACP server (`kakeibo --acp`, an editor driving the agent) records its runs as its own
-- channel, beside the library it is built on.
ALTER TYPE channel ADD VALUE IF NOT EXISTS 'acp';
