-- Stored entities (bills, links, billers: the JSON a GET returns as it is)
-- compress with lz4 instead of pglz. A bill's entity (about 1.5 KB) makes its
-- row pass the 2 KB toast threshold, so PostgreSQL compresses it inline and
-- every read decompresses it: a bill GET, every entry of a sync page. lz4
-- decompresses several times faster and compresses (each bill write) about
-- twice as fast, at a few percent more size (bench/RESULTS.md). Rows written
-- before keep pglz until their next write; both read the same.

ALTER TABLE bills ALTER COLUMN entity SET COMPRESSION lz4;
ALTER TABLE links ALTER COLUMN entity SET COMPRESSION lz4;
ALTER TABLE billers ALTER COLUMN entity SET COMPRESSION lz4;
