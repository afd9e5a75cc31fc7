-- The whole schema of kakeibo: users, the double-entry ledger, conversations, suspended turns,
-- traces, uploads and the operator's switches.
--
-- Every owner-scoped table carries owner_id -> users(id) ON DELETE CASCADE: deleting a user
-- (the reaper, or "delete my account") removes everything of theirs. Child tables reference their
-- parent by (id, owner_id), so a row can never point at another owner's parent.
-- Money is bigint minor units; a transaction's postings sum to zero, which the ledger's single
-- insert path enforces (there is deliberately no trigger).

CREATE TYPE account_type AS ENUM ('asset', 'liability', 'income', 'expense', 'equity');
CREATE TYPE memory_source AS ENUM ('user_stated', 'agent_inferred');
CREATE TYPE run_status AS ENUM ('ok', 'error', 'blocked', 'aborted', 'stuck');
CREATE TYPE channel AS ENUM ('cli', 'web', 'mcp', 'eval');
CREATE TYPE trace_event_type AS ENUM ('model_call', 'tool_call', 'confirm', 'summary_eviction', 'error');
CREATE TYPE suspended_status AS ENUM ('pending', 'claimed', 'applied');
CREATE TYPE import_status AS ENUM ('planned', 'committed');

-- Every visitor is a row from their first request; anonymous until credentials are attached.
CREATE TABLE users (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    email         text,
    password_hash text,
    is_anonymous  boolean NOT NULL DEFAULT true,
    blocked_at    timestamptz,
    created_at    timestamptz NOT NULL DEFAULT now(),
    last_seen_at  timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT users_email_normalised CHECK (email IS NULL OR email = lower(btrim(email))),
    CONSTRAINT users_password_needs_email CHECK (password_hash IS NULL OR email IS NOT NULL)
);
CREATE UNIQUE INDEX users_email_key ON users (email) WHERE email IS NOT NULL;
CREATE INDEX users_anonymous_created_idx ON users (created_at) WHERE is_anonymous;

-- The development owner: the CLI's, the evals' and the MCP server's ledger.
INSERT INTO users (id, is_anonymous) VALUES ('00000000-0000-4000-8000-000000000001', false);

-- Categories are accounts of type expense or income; there is no categories table.
-- Asset, liability and equity accounts hold one currency; expense and income accounts may carry
-- postings in several currencies (reports group them per currency).
CREATE TABLE accounts (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    owner_id   uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name       text NOT NULL CHECK (btrim(name) <> ''),
    type       account_type NOT NULL,
    currency   char(3) NOT NULL DEFAULT 'INR' CHECK (currency ~ '^[A-Z]{3}$'),
    created_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT accounts_owner_name_key UNIQUE (owner_id, name),
    CONSTRAINT accounts_id_owner_key UNIQUE (id, owner_id)
);

-- One statement import: planned by a dry run (plan holds rows to add, duplicates skipped, parse
-- errors), then committed exactly as planned.
CREATE TABLE import_batches (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    owner_id      uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    account_id    uuid,
    filename      text NOT NULL,
    source_sha256 text,
    status        import_status NOT NULL DEFAULT 'committed',
    plan          jsonb,
    row_count     integer NOT NULL DEFAULT 0 CHECK (row_count >= 0),
    created_at    timestamptz NOT NULL DEFAULT now(),
    imported_at   timestamptz,
    CONSTRAINT import_batches_id_owner_key UNIQUE (id, owner_id),
    FOREIGN KEY (account_id, owner_id) REFERENCES accounts (id, owner_id) ON DELETE CASCADE
);
CREATE INDEX import_batches_owner_created_idx ON import_batches (owner_id, created_at);

-- source_hash is the stable identity of an imported row (account, date, amount, normalised
-- description, occurrence within the file): re-importing a statement adds nothing.
CREATE TABLE transactions (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    owner_id        uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    date            date NOT NULL,
    description     text NOT NULL,
    raw_description text NOT NULL,
    import_batch_id uuid,
    source_hash     text,
    created_at      timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT transactions_id_owner_key UNIQUE (id, owner_id),
    FOREIGN KEY (import_batch_id, owner_id) REFERENCES import_batches (id, owner_id)
        ON DELETE SET NULL (import_batch_id)
);
CREATE INDEX transactions_owner_date_idx ON transactions (owner_id, date);
CREATE UNIQUE INDEX transactions_owner_source_hash_key ON transactions (owner_id, source_hash)
    WHERE source_hash IS NOT NULL;

-- The account reference is NO ACTION rather than RESTRICT: deleting a user cascades to accounts
-- and postings in one statement, and NO ACTION checks only at its end, when the postings are gone.
CREATE TABLE postings (
    id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    owner_id       uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    transaction_id uuid NOT NULL,
    account_id     uuid NOT NULL,
    amount_minor   bigint NOT NULL,
    currency       char(3) NOT NULL DEFAULT 'INR' CHECK (currency ~ '^[A-Z]{3}$'),
    FOREIGN KEY (transaction_id, owner_id) REFERENCES transactions (id, owner_id) ON DELETE CASCADE,
    FOREIGN KEY (account_id, owner_id) REFERENCES accounts (id, owner_id)
);
CREATE INDEX postings_owner_transaction_idx ON postings (owner_id, transaction_id);
CREATE INDEX postings_owner_account_idx ON postings (owner_id, account_id);

-- Categorisation rules for future imports: case-insensitive substring, lower priority wins.
CREATE TABLE rules (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    owner_id   uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    pattern    text NOT NULL CHECK (length(pattern) >= 2),
    account_id uuid NOT NULL,
    priority   integer NOT NULL DEFAULT 100 CHECK (priority BETWEEN 1 AND 1000),
    created_at timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (account_id, owner_id) REFERENCES accounts (id, owner_id) ON DELETE CASCADE
);
CREATE INDEX rules_owner_priority_idx ON rules (owner_id, priority);

CREATE TABLE budgets (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    owner_id     uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    account_id   uuid NOT NULL,
    month        char(7) NOT NULL CHECK (month ~ '^[0-9]{4}-(0[1-9]|1[0-2])$'),
    amount_minor bigint NOT NULL CHECK (amount_minor >= 0),
    currency     char(3) NOT NULL DEFAULT 'INR' CHECK (currency ~ '^[A-Z]{3}$'),
    CONSTRAINT budgets_account_month_key UNIQUE (account_id, month),
    FOREIGN KEY (account_id, owner_id) REFERENCES accounts (id, owner_id) ON DELETE CASCADE
);
CREATE INDEX budgets_owner_month_idx ON budgets (owner_id, month);

CREATE TABLE memories (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    owner_id   uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    content    text NOT NULL CHECK (char_length(content) BETWEEN 3 AND 500),
    category   text NOT NULL,
    source     memory_source NOT NULL DEFAULT 'user_stated',
    created_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT memories_owner_content_category_key UNIQUE (owner_id, content, category)
);
CREATE INDEX memories_owner_created_idx ON memories (owner_id, created_at);

CREATE TABLE conversations (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    owner_id   uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    title      text,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT conversations_id_owner_key UNIQUE (id, owner_id)
);
CREATE INDEX conversations_owner_updated_idx ON conversations (owner_id, updated_at);

-- One canonical message per row, stored verbatim (provider metadata and signatures included).
CREATE TABLE conversation_messages (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    owner_id        uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    conversation_id uuid NOT NULL,
    seq             integer NOT NULL CHECK (seq >= 0),
    message         jsonb NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT conversation_messages_conversation_seq_key UNIQUE (conversation_id, seq),
    FOREIGN KEY (conversation_id, owner_id) REFERENCES conversations (id, owner_id) ON DELETE CASCADE
);
CREATE INDEX conversation_messages_owner_conversation_idx ON conversation_messages (owner_id, conversation_id);

-- A turn waiting for a human: the whole serialised turn, claimed exactly once
-- (pending -> claimed -> applied), deleted when the turn finishes. 256 KiB at most.
CREATE TABLE suspended_turns (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    owner_id        uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    conversation_id uuid NOT NULL,
    run_id          uuid NOT NULL,
    version         integer NOT NULL CHECK (version >= 1),
    state           jsonb NOT NULL CHECK (octet_length(state::text) <= 262144),
    args_hash       text NOT NULL,
    status          suspended_status NOT NULL DEFAULT 'pending',
    claimed_at      timestamptz,
    results         jsonb,
    created_at      timestamptz NOT NULL DEFAULT now(),
    expires_at      timestamptz NOT NULL,
    CONSTRAINT suspended_turns_claim_consistent CHECK ((status = 'pending') = (claimed_at IS NULL)),
    CONSTRAINT suspended_turns_results_when_applied CHECK ((status = 'applied') = (results IS NOT NULL)),
    FOREIGN KEY (conversation_id, owner_id) REFERENCES conversations (id, owner_id) ON DELETE CASCADE
);
CREATE INDEX suspended_turns_owner_conversation_idx ON suspended_turns (owner_id, conversation_id);
CREATE INDEX suspended_turns_expires_idx ON suspended_turns (expires_at);

CREATE TABLE trace_runs (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    owner_id        uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    conversation_id uuid,
    started_at      timestamptz NOT NULL DEFAULT now(),
    finished_at     timestamptz,
    provider        text NOT NULL,
    model           text NOT NULL,
    status          run_status NOT NULL DEFAULT 'ok',
    iterations      integer NOT NULL DEFAULT 0,
    input_tokens    bigint NOT NULL DEFAULT 0,
    output_tokens   bigint NOT NULL DEFAULT 0,
    cached_tokens   bigint NOT NULL DEFAULT 0,
    cost_usd_est    numeric(10, 6) NOT NULL DEFAULT 0,
    latency_ms      integer NOT NULL DEFAULT 0,
    channel         channel NOT NULL,
    geo_country     char(2),
    geo_region      text,
    geo_city        text,
    geo_lat         double precision,
    geo_lon         double precision,
    CONSTRAINT trace_runs_id_owner_key UNIQUE (id, owner_id)
);
CREATE INDEX trace_runs_owner_started_idx ON trace_runs (owner_id, started_at);
CREATE INDEX trace_runs_started_idx ON trace_runs (started_at);

CREATE TABLE trace_events (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    owner_id        uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    run_id          uuid NOT NULL,
    seq             integer NOT NULL CHECK (seq >= 0),
    type            trace_event_type NOT NULL,
    payload         jsonb NOT NULL,
    latency_ms      integer,
    input_tokens    bigint,
    output_tokens   bigint,
    cached_tokens   bigint,
    thought_summary text,
    created_at      timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT trace_events_run_seq_key UNIQUE (run_id, seq),
    FOREIGN KEY (run_id, owner_id) REFERENCES trace_runs (id, owner_id) ON DELETE CASCADE
);
CREATE INDEX trace_events_owner_run_seq_idx ON trace_events (owner_id, run_id, seq);

-- Statements uploaded by a visitor, kept for the importer; 10 MiB at most.
CREATE TABLE uploads (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    owner_id     uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    filename     text NOT NULL,
    content_type text,
    size_bytes   integer NOT NULL CHECK (size_bytes >= 0),
    sha256       text NOT NULL,
    content      bytea NOT NULL CHECK (octet_length(content) <= 10485760),
    created_at   timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT uploads_size_matches CHECK (size_bytes = octet_length(content))
);
CREATE INDEX uploads_owner_created_idx ON uploads (owner_id, created_at);

-- Not owner-scoped, no row-level security: per-address daily counters (the key is
-- sha256(ip|salt|utc-date); no raw address is stored) and the operator's switches.
CREATE TABLE rate_limits (
    key          text PRIMARY KEY,
    window_start date NOT NULL,
    count        integer NOT NULL DEFAULT 0 CHECK (count >= 0)
);

CREATE TABLE operator_flags (
    key        text PRIMARY KEY,
    value      boolean NOT NULL DEFAULT false,
    updated_at timestamptz NOT NULL DEFAULT now()
);
