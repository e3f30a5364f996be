-- Invoices, and payments that outlive their user.
--
-- The privacy policy keeps payments and invoices for 8 years: deleting an account
-- detaches them (user_id becomes NULL) instead of deleting them. SQLite cannot change a
-- foreign key in place, so `payments` is rebuilt. `SELECT *` on purpose: if an earlier
-- migration added a column, this one fails loudly instead of dropping it.
CREATE TABLE payments_detachable (
    id                  TEXT PRIMARY KEY NOT NULL,
    user_id             TEXT REFERENCES users(id) ON DELETE SET NULL,
    plan_type           TEXT NOT NULL,
    billing_cycle       TEXT NOT NULL,
    kind                TEXT NOT NULL CHECK (kind IN ('checkout', 'renewal')),
    status              TEXT NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed', 'canceled')),
    currency            TEXT NOT NULL,
    net_amount          INTEGER NOT NULL,
    vat_rate            REAL NOT NULL,
    vat_amount          INTEGER NOT NULL,
    total_amount        INTEGER NOT NULL,
    provider            TEXT NOT NULL,
    provider_ref        TEXT,
    payment_method      TEXT NOT NULL,
    idempotency_key     TEXT,
    created_at          INTEGER NOT NULL,
    completed_at        INTEGER
);
INSERT INTO payments_detachable SELECT * FROM payments;
DROP TABLE payments;
ALTER TABLE payments_detachable RENAME TO payments;
CREATE INDEX payments_user ON payments (user_id, created_at);
CREATE UNIQUE INDEX payments_idempotency ON payments (user_id, idempotency_key);
-- The rebuild drops the indexes of 0007 too; the provider's id stays unique per provider.
CREATE UNIQUE INDEX payments_provider_ref ON payments (provider, provider_ref);

-- Who the VAT was computed for, when the payment was created: the invoice shows this
-- buyer, whatever the billing info says by the time the payment succeeds. JSON of the
-- billing info (NULL for payments made before this migration).
ALTER TABLE payments ADD COLUMN buyer TEXT;
-- standard (the buyer's country's rate, or the seller's), reverse_charge, or outside_eu
ALTER TABLE payments ADD COLUMN vat_treatment TEXT NOT NULL DEFAULT 'standard';
-- The period a renewal pays for (a checkout's period starts when it is paid).
ALTER TABLE payments ADD COLUMN period_start INTEGER;
ALTER TABLE payments ADD COLUMN period_end INTEGER;
CREATE INDEX payments_succeeded ON payments (status, completed_at);

-- The next invoice number of each year. Incremented in the transaction that inserts
-- the invoice, so numbers have no gaps and no duplicates across instances.
CREATE TABLE invoice_counters (
    year                INTEGER PRIMARY KEY NOT NULL,
    next_sequence       INTEGER NOT NULL
);

-- One invoice per paid payment, with everything printed on it copied in: it must read
-- the same in 8 years, whatever happens to plans, prices, settings or the user.
CREATE TABLE invoices (
    id                  TEXT PRIMARY KEY NOT NULL,
    number              TEXT NOT NULL UNIQUE,
    year                INTEGER NOT NULL,
    sequence            INTEGER NOT NULL,
    payment_id          TEXT NOT NULL UNIQUE REFERENCES payments(id),
    user_id             TEXT REFERENCES users(id) ON DELETE SET NULL,
    issued_at           INTEGER NOT NULL,
    seller_name         TEXT NOT NULL,
    seller_address      TEXT NOT NULL,
    seller_vat_number   TEXT NOT NULL,
    seller_country      TEXT NOT NULL,
    buyer_type          TEXT NOT NULL,
    buyer_name          TEXT NOT NULL,
    buyer_company       TEXT,
    buyer_address       TEXT NOT NULL,
    buyer_city          TEXT NOT NULL,
    buyer_postal_code   TEXT NOT NULL,
    buyer_country       TEXT NOT NULL,
    buyer_vat_number    TEXT,
    plan_type           TEXT NOT NULL,
    plan_name           TEXT NOT NULL,
    billing_cycle       TEXT NOT NULL,
    period_start        INTEGER NOT NULL,
    period_end          INTEGER NOT NULL,
    currency            TEXT NOT NULL,
    net_amount          INTEGER NOT NULL,
    vat_rate            REAL NOT NULL,
    vat_amount          INTEGER NOT NULL,
    total_amount        INTEGER NOT NULL,
    vat_treatment       TEXT NOT NULL,
    transaction_id      TEXT NOT NULL,
    UNIQUE (year, sequence)
);
CREATE INDEX invoices_user ON invoices (user_id, issued_at);
