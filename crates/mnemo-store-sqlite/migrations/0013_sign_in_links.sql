-- mnemo SQLite schema, version 13: one-time sign-in links of the memory panel. Only a
-- SHA-256 hash of each link's secret is stored; a link is used at most once.
CREATE TABLE sign_in_links (
    hash       TEXT    PRIMARY KEY,
    tenant     TEXT    NOT NULL,
    user_id    TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    used_at    INTEGER
) WITHOUT ROWID;
