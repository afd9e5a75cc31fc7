-- Households (issue 37): accounts as a person has them, a home currency, categories without a
-- currency of their own, and transfers between a person's own accounts kept as one transaction.

-- What kind of account an asset or liability is. Cards and loans are liabilities; the others are
-- assets. `transit` is the clearing account where one side of a transfer waits for the other.
CREATE TYPE account_kind AS ENUM ('checking', 'savings', 'card', 'cash', 'loan', 'transit');
ALTER TABLE accounts ADD COLUMN kind account_kind;
UPDATE accounts SET kind = CASE
        WHEN type = 'liability' THEN 'card'
        WHEN lower(name) LIKE 'savings%' THEN 'savings'
        ELSE 'checking'
    END::account_kind
    WHERE type IN ('asset', 'liability');
ALTER TABLE accounts ADD CONSTRAINT accounts_kind_fits_type CHECK (
    CASE type
        WHEN 'asset' THEN kind IN ('checking', 'savings', 'cash', 'transit')
        WHEN 'liability' THEN kind IN ('card', 'loan')
        ELSE kind IS NULL
    END
);

-- Categories (expense and income accounts) take postings in any currency: they hold none of
-- their own, and nothing shows ₹0.00 beside a ledger kept in dollars. No figure changes: a
-- category's postings carry their own currency.
ALTER TABLE accounts ALTER COLUMN currency DROP NOT NULL, ALTER COLUMN currency DROP DEFAULT;
UPDATE accounts SET currency = NULL WHERE type IN ('expense', 'income');
ALTER TABLE accounts ADD CONSTRAINT accounts_currency_fits_type
    CHECK ((currency IS NULL) = (type IN ('expense', 'income')));

-- An owner's home currency: the one their starting accounts take. Set by the first import (or
-- sign-up); an existing ledger takes its Checking account's currency, which it already had.
ALTER TABLE users ADD COLUMN home_currency char(3) CHECK (home_currency ~ '^[A-Z]{3}$');
UPDATE users u SET home_currency = a.currency
    FROM accounts a WHERE a.owner_id = u.id AND a.name = 'Checking' AND a.currency IS NOT NULL;
GRANT SELECT (home_currency), UPDATE (home_currency) ON users TO app_user;

-- A transfer is one transaction with two statement lines behind it: the second line's identity,
-- text, date and batch are kept beside the first's, so a re-import of either statement finds it.
ALTER TABLE transactions
    ADD COLUMN paired_source_hash text,
    ADD COLUMN paired_description text,
    ADD COLUMN paired_batch_id uuid,
    ADD COLUMN paired_date date,
    -- The statement's own category word when it named none of the owner's categories: a hint.
    ADD COLUMN bank_category text;
CREATE UNIQUE INDEX transactions_owner_paired_hash_key ON transactions (owner_id, paired_source_hash)
    WHERE paired_source_hash IS NOT NULL;
