-- Refunds (issue 34), each with its credit note.
--
-- A refund gives back part or all of a succeeded payment: through the provider (Stripe's
-- Refunds API, or Stripe's dashboard, reported by its `charge.refunded` webhook), or, for
-- a demo payment, recorded only. Amounts in minor units, like the payment's.
CREATE TABLE refunds (
    id                  TEXT PRIMARY KEY NOT NULL,
    payment_id          TEXT NOT NULL REFERENCES payments(id),
    amount              BIGINT NOT NULL CHECK (amount > 0),
    reason              TEXT NOT NULL,
    -- demo or stripe, as the payment's; Stripe's re_… id (NULL for a demo refund).
    provider            TEXT NOT NULL,
    provider_ref        TEXT,
    -- A retried or double-clicked request finds the refund it made instead of a second one.
    idempotency_key     TEXT NOT NULL UNIQUE,
    -- The admin who refunded; NULL for Stripe's dashboard (actor_name says `stripe`), or
    -- once the admin's account is deleted.
    actor_id            TEXT REFERENCES users(id) ON DELETE SET NULL,
    actor_name          TEXT NOT NULL,
    created_at          BIGINT NOT NULL,
    -- The credit note, inserted after the refund in the same transaction (invoices.refund_id
    -- holds the foreign key, so the two rows do not depend on each other's insert order).
    credit_note_id      TEXT NOT NULL UNIQUE
);
CREATE INDEX refunds_payment ON refunds (payment_id, created_at);
CREATE UNIQUE INDEX refunds_provider_ref ON refunds (provider, provider_ref);

-- Credit notes are rows of `invoices`: they share the yearly number series and its
-- counter, and print the same seller and buyer. A payment has one invoice and any number of
-- credit notes, so `payment_id` is no longer unique, except among invoices.
ALTER TABLE invoices DROP CONSTRAINT invoices_payment_id_key;
ALTER TABLE invoices ADD COLUMN kind TEXT NOT NULL DEFAULT 'invoice' CHECK (kind IN ('invoice', 'credit_note'));
-- A credit note's invoice (its id) and its refund; NULL on an invoice.
ALTER TABLE invoices ADD COLUMN credit_note_of TEXT REFERENCES invoices(id);
ALTER TABLE invoices ADD COLUMN refund_id TEXT REFERENCES refunds(id);
-- Still one invoice per payment (issuing twice is a unique violation, see db/invoices.rs).
CREATE UNIQUE INDEX invoices_payment ON invoices (payment_id) WHERE kind = 'invoice';
