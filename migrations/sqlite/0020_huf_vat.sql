-- A Hungarian seller's EUR invoice states its VAT in HUF too (issue 34): the rate, its
-- day and source, and the forints, as JSON kept with the invoice (NULL on any other).
ALTER TABLE invoices ADD COLUMN huf_vat TEXT;
