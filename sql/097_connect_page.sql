-- What the hosted connect page needs of the catalog and the sessions
-- (docs/DECISIONS.md "The connect page's picker, logos and resend").

-- The curated order of the picker after popularity: the catalog CSV's
-- optional `rank` column (1 first; NULL after every ranked biller).
ALTER TABLE billers ADD COLUMN picker_rank integer CHECK (picker_rank > 0);

-- Popularity: links ever made per (environment, biller), kept by a trigger
-- so the picker reads one row per biller instead of counting links.
CREATE TABLE biller_link_counts (
    environment  text    NOT NULL,
    biller_id    text    NOT NULL,
    links        bigint  NOT NULL DEFAULT 0,
    PRIMARY KEY (environment, biller_id)
);
INSERT INTO biller_link_counts (environment, biller_id, links)
    SELECT environment, biller_id, count(*) FROM links GROUP BY environment, biller_id;

CREATE FUNCTION biller_link_counts_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO biller_link_counts AS c (environment, biller_id, links)
        VALUES (NEW.environment, NEW.biller_id, 1)
        ON CONFLICT (environment, biller_id) DO UPDATE SET links = c.links + 1;
    RETURN NULL;
END $$;
CREATE TRIGGER biller_link_counts_add AFTER INSERT ON links
    FOR EACH ROW EXECUTE FUNCTION biller_link_counts_add();

-- A biller's logo as stored under <data_dir>/logos/<biller_id>.<ext> and
-- served by the link host at /logos/<biller_id>.<ext>: fetched from the
-- catalog's logo_url by the billers.logo job (source_url that URL), or
-- loaded from the logos shipped beside the catalog CSV (source_url NULL).
CREATE TABLE biller_logos (
    biller_id    text        PRIMARY KEY REFERENCES billers (id) ON DELETE CASCADE,
    ext          text        NOT NULL CHECK (ext IN ('png', 'jpg', 'webp', 'svg')),
    source_url   text,
    sha256       text        NOT NULL,
    size         integer     NOT NULL,
    stored_at    timestamptz NOT NULL DEFAULT now()
);

-- MFA resends of a session (POST /v1/link-sessions/mfa/resend), at most
-- LINKS_MFA_RESENDS_MAX.
ALTER TABLE link_sessions ADD COLUMN mfa_resends integer NOT NULL DEFAULT 0;

-- The picker's item (and a session's pinned biller): the biller entity
-- (billers.entity, its field order kept) and logo_src, the stored logo's
-- path on the link host (?v= its hash, so a new logo is a new URL under the
-- long cache) or null.
CREATE FUNCTION billers_picker_item(b billers, l biller_logos) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT left(b.entity, length(b.entity) - 1) || ',"logo_src":' ||
        COALESCE(to_json('/logos/' || b.id || '.' || l.ext || '?v=' || left(l.sha256, 12))::text,
            'null') || '}'
$$;
