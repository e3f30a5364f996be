-- Invoices, and payments that outlive their user.
--
-- The privacy policy keeps payments and invoices for 8 years: deleting an account
-- detaches them (user_id becomes NULL) instead of deleting them.
ALTER TABLE payments ALTER COLUMN user_id DROP NOT NULL;
ALTER TABLE payments DROP CONSTRAINT payments_user_id_fkey;
ALTER TABLE payments ADD CONSTRAINT payments_user_id_fkey
    FOREIGN KEY (user_id) REFERENCES users(id) ON DELETE SET NULL;

-- Who the VAT was computed for, when the payment was created: the invoice shows this
-- buyer, whatever the billing info says by the time the payment succeeds. JSON of the
-- billing info (NULL for payments made before this migration).
ALTER TABLE payments ADD COLUMN buyer TEXT;
-- standard (the buyer's country's rate, or the seller's), reverse_charge, or outside_eu
ALTER TABLE payments ADD COLUMN vat_treatment TEXT NOT NULL DEFAULT 'standard';
-- The period a renewal pays for (a checkout's period starts when it is paid).
ALTER TABLE payments ADD COLUMN period_start BIGINT;
ALTER TABLE payments ADD COLUMN period_end BIGINT;
CREATE INDEX payments_succeeded ON payments (status, completed_at);

-- The next invoice number of each year. Incremented in the transaction that inserts
-- the invoice, so numbers have no gaps and no duplicates across instances.
CREATE TABLE invoice_counters (
    year                BIGINT PRIMARY KEY NOT NULL,
    next_sequence       BIGINT NOT NULL
);

-- One invoice per paid payment, with everything printed on it copied in: it must read
-- the same in 8 years, whatever happens to plans, prices, settings or the user.
CREATE TABLE invoices (
    id                  TEXT PRIMARY KEY NOT NULL,
    number              TEXT NOT NULL UNIQUE,
    year                BIGINT NOT NULL,
    sequence            BIGINT NOT NULL,
    payment_id          TEXT NOT NULL UNIQUE REFERENCES payments(id),
    user_id             TEXT REFERENCES users(id) ON DELETE SET NULL,
    issued_at           BIGINT NOT NULL,
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
    period_start        BIGINT NOT NULL,
    period_end          BIGINT NOT NULL,
    currency            TEXT NOT NULL,
    net_amount          BIGINT NOT NULL,
    vat_rate            DOUBLE PRECISION NOT NULL,
    vat_amount          BIGINT NOT NULL,
    total_amount        BIGINT NOT NULL,
    vat_treatment       TEXT NOT NULL,
    transaction_id      TEXT NOT NULL,
    UNIQUE (year, sequence)
);
CREATE INDEX invoices_user ON invoices (user_id, issued_at);
