-- VAT numbers checked with the EU's VIES service (issue 28): a company in another member
-- state is reverse charged only on VIES's word. The check is JSON (vat number, status
-- valid | invalid | unavailable, when it was asked, VIES's request date, name, address,
-- error), NULL where none decides the VAT. The billing info holds the latest; a payment
-- and its invoice keep the one their VAT rested on, so an invoice shows it years later.
ALTER TABLE billing_info ADD COLUMN vat_check TEXT;
ALTER TABLE payments ADD COLUMN vat_check TEXT;
ALTER TABLE invoices ADD COLUMN vat_check TEXT;
