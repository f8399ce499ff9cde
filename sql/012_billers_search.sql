-- The biller list's sort key and search, without per-row work at read time
-- (DOMAIN.md "Billers"): the folded name is stored (sorted by, compared
-- with the folded term); search_text's trigram index (010) serves both
-- the word-similarity match and the substring match.

ALTER TABLE billers ADD COLUMN name_folded text
    GENERATED ALWAYS AS (billers_fold(name)) STORED;
CREATE INDEX billers_name_folded ON billers (name_folded, id);
