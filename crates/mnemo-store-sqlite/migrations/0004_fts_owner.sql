-- mnemo SQLite schema, version 4: full-text entries carry their owner, so a search matches
-- only the acting user's documents inside FTS5 itself (the owner token's posting list is
-- intersected with the query's), instead of scoring every user's matches and filtering after.

CREATE TABLE memory_owners (
    rowid   INTEGER PRIMARY KEY,
    tenant  TEXT NOT NULL,
    user_id TEXT NOT NULL,
    UNIQUE (tenant, user_id)
);
INSERT INTO memory_owners (tenant, user_id)
SELECT DISTINCT tenant, user_id FROM memories ORDER BY tenant, user_id;

DROP TABLE memory_fts;
CREATE VIRTUAL TABLE memory_fts USING fts5(
    content,
    before1,
    before2,
    after,
    owner,
    content = '',
    tokenize = 'porter unicode61 remove_diacritics 2'
);
INSERT INTO memory_fts (memory_fts, rank) VALUES ('secure-delete', 1);
INSERT INTO memory_fts (rowid, content, before1, before2, after, owner)
SELECT m.rowid, m.content,
       CASE WHEN m.session_id IS NULL THEN '' ELSE coalesce(lag(m.content, 1) OVER w, '') END,
       CASE WHEN m.session_id IS NULL THEN '' ELSE coalesce(lag(m.content, 2) OVER w, '') END,
       CASE WHEN m.session_id IS NULL THEN '' ELSE coalesce(lead(m.content, 1) OVER w, '') END,
       'o' || o.rowid
  FROM memories m JOIN memory_owners o ON o.tenant = m.tenant AND o.user_id = m.user_id
WINDOW w AS (PARTITION BY m.tenant, m.user_id, m.session_id ORDER BY m.rowid);

DROP TABLE session_fts;
CREATE VIRTUAL TABLE session_fts USING fts5(
    content,
    owner,
    content = '',
    tokenize = 'porter unicode61 remove_diacritics 2'
);
INSERT INTO session_fts (session_fts, rank) VALUES ('secure-delete', 1);
INSERT INTO session_fts (rowid, content, owner)
SELECT s.rowid, group_concat(m.content, char(10) ORDER BY m.rowid), 'o' || o.rowid
  FROM memory_sessions s
  JOIN memories m ON m.tenant = s.tenant AND m.user_id = s.user_id AND m.session_id = s.session_id
  JOIN memory_owners o ON o.tenant = s.tenant AND o.user_id = s.user_id
 GROUP BY s.rowid;
