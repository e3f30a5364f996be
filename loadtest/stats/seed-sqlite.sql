-- `make bench-stats`: what the operator's stats are measured on (docs/performance.md,
-- "Operator stats"), for SQLite. `:now` is replaced by the script with the time of the
-- run (unix ms). 100,000 users signed up over 400 days, 1,000,000 answers over the last
-- 365 days (every 50th an image; sessions of 10 answers of one user in 5 minutes), and
-- the payments, refunds, cancellations and subscriptions of a small paying share. Deterministic: the same
-- figures every run.
BEGIN;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000)
INSERT INTO users (id, name, email, password_hash, created_at, updated_at)
SELECT printf('bench-user-%06d', i), 'Bench ' || i, printf('bench%06d@example.com', i), 'x',
       :now - i * 345600, :now - i * 345600
FROM n;

WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000000)
INSERT INTO model_calls (id, at, user_id, plan_type, kind, model, message_id, input_tokens,
                         output_tokens, images, estimated, outcome, cost_nanos)
SELECT printf('bench-call-%07d', i), :now - i * 31536,
       printf('bench-user-%06d', 1 + ((i / 10) * 7919) % 100000),
       CASE i % 10 WHEN 6 THEN 'base' WHEN 7 THEN 'base' WHEN 8 THEN 'plus' WHEN 9 THEN 'pro' ELSE 'free' END,
       CASE WHEN i % 50 = 0 THEN 'image' ELSE 'answer' END,
       CASE WHEN i % 50 = 0 THEN 'gpt-image-1'
            ELSE CASE i % 4 WHEN 0 THEN 'gpt-4o-mini' WHEN 1 THEN 'gpt-4.1-mini' WHEN 2 THEN 'gpt-4o' ELSE 'gpt-4.1' END END,
       printf('bench-msg-%07d', i), 200 + i % 1000, 100 + i % 500, CASE WHEN i % 50 = 0 THEN 1 ELSE 0 END,
       FALSE, 'complete', (200 + i % 1000) * 150 + (100 + i % 500) * 600
FROM n;

-- 20,000 payments: checkouts and renewals, in euros and forints, 1 in 20 a failed renewal.
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
INSERT INTO payments (id, user_id, plan_type, billing_cycle, kind, status, currency, net_amount, vat_rate,
                      vat_amount, total_amount, provider, payment_method, created_at, completed_at)
SELECT printf('bench-pay-%05d', i), printf('bench-user-%06d', 1 + (i * 31) % 100000),
       CASE i % 3 WHEN 0 THEN 'base' WHEN 1 THEN 'plus' ELSE 'pro' END, 'monthly',
       CASE WHEN i % 4 = 0 THEN 'checkout' ELSE 'renewal' END,
       CASE WHEN i % 20 = 1 THEN 'failed' ELSE 'succeeded' END,
       CASE WHEN i % 5 = 0 THEN 'HUF' ELSE 'EUR' END,
       CASE WHEN i % 5 = 0 THEN 300000 ELSE 1000 END, 0.27,
       CASE WHEN i % 5 = 0 THEN 81000 ELSE 270 END, CASE WHEN i % 5 = 0 THEN 381000 ELSE 1270 END,
       'demo', 'credit_card', :now - i * 1576800, :now - i * 1576800
FROM n;

-- 500 refunds, each with its credit note.
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500)
INSERT INTO refunds (id, payment_id, amount, reason, provider, idempotency_key, actor_name, created_at, credit_note_id)
SELECT printf('bench-refund-%04d', i), printf('bench-pay-%05d', i * 40), 635, 'bench', 'demo',
       printf('bench-refund-%04d', i), 'bench', :now - i * 40 * 1576800 + 3600000, printf('bench-credit-%04d', i)
FROM n;
INSERT INTO invoices (id, number, year, sequence, payment_id, user_id, issued_at, seller_name, seller_address,
                      seller_vat_number, seller_country, buyer_type, buyer_name, buyer_address, buyer_city,
                      buyer_postal_code, buyer_country, plan_type, plan_name, billing_cycle, period_start,
                      period_end, currency, net_amount, vat_rate, vat_amount, total_amount, vat_treatment,
                      transaction_id, kind, refund_id)
SELECT r.credit_note_id, 'BENCH-' || r.id, 1, r.rowid, r.payment_id, NULL, r.created_at, 's', 's', 's', 'HU', 'private',
       'b', 'b', 'b', 'b', 'HU', p.plan_type, p.plan_type, 'monthly', 0, 0, p.currency,
       -p.net_amount / 2, 0.27, -p.vat_amount / 2, -r.amount, 'standard', r.id, 'credit_note', r.id
FROM refunds r JOIN payments p ON p.id = r.payment_id;

-- 10,000 paid plans now (every 4th one-time) ending in 29 days, 1 in 10 set to cancel;
-- 2,000 cancellations.
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10000)
INSERT INTO subscriptions (id, user_id, plan_type, status, billing_cycle, payment_method, currency,
                           start_date, end_date, pending_plan_type, pending_since, created_at, updated_at)
SELECT printf('bench-sub-%05d', i), printf('bench-user-%06d', i * 10),
       CASE i % 3 WHEN 0 THEN 'base' WHEN 1 THEN 'plus' ELSE 'pro' END, 'active',
       CASE WHEN i % 4 = 0 THEN 'one_time' ELSE 'monthly' END, 'credit_card',
       CASE WHEN i % 5 = 0 THEN 'HUF' ELSE 'EUR' END, :now - 86400000, :now + 2505600000,
       CASE WHEN i % 10 = 3 THEN 'free' END, CASE WHEN i % 10 = 3 THEN :now END, :now, :now
FROM n;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)
INSERT INTO subscription_cancellations (id, at, user_id, plan_type)
SELECT printf('bench-cancel-%04d', i), :now - i * 15768000, printf('bench-user-%06d', i * 50), 'plus'
FROM n;
COMMIT;
ANALYZE;
