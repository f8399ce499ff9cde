-- An operator's rejection of a discovered biller is the catalog's (lib/rtl
-- discovery): `bdsctl discovery reject` adds the domain as an UNSUPPORTED
-- biller (no base_url: it is never connected) and the REJECTED records name
-- it, so biller.unsupported carries its biller_id and every later request
-- naming the domain is refused, whoever sends it. Records rejected before
-- this have no biller.

ALTER TABLE biller_discoveries DROP CONSTRAINT biller_discoveries_check,
    ADD CONSTRAINT biller_discoveries_biller CHECK (status = 'REJECTED'
        OR (status IN ('MATCHED', 'APPROVED')) = (biller_id IS NOT NULL));
