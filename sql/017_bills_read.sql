-- The bill read API (GET /v1/bills and the payments lists).
--
-- GET /v1/bills pages newest first by (created_at, id) inside the key's
-- client and environment. bills_list (013) serves the unfiltered list; a
-- list filtered by link or by user walks its own index in page order, so
-- a deep page costs what the first does however many other bills the
-- client has. The user index replaces 013's bills_user (its prefix).
CREATE INDEX bills_link_list ON bills (client_id, link_id, created_at, id);
CREATE INDEX bills_user_list ON bills (client_id, environment, client_user_id, created_at, id);
DROP INDEX bills_user;

-- A bill's observed payments, newest paid_at first (the link's list uses
-- 016's observed_payments_link).
CREATE INDEX observed_payments_bill_list ON observed_payments (client_id, bill_id, paid_at, id)
    WHERE bill_id IS NOT NULL;
DROP INDEX observed_payments_bill;
