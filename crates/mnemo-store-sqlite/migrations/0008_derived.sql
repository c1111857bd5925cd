-- mnemo SQLite schema, version 8: records derived from others (a session summary from its
-- turns). The JSON column is read back with the record; the link table finds what to forget
-- with a source.
ALTER TABLE memories ADD COLUMN derived_from TEXT;
CREATE TABLE memory_links (
    tenant     TEXT NOT NULL,
    user_id    TEXT NOT NULL,
    source_id  TEXT NOT NULL,
    derived_id TEXT NOT NULL,
    PRIMARY KEY (tenant, user_id, source_id, derived_id)
) WITHOUT ROWID;
CREATE INDEX memory_links_derived ON memory_links (tenant, user_id, derived_id);
