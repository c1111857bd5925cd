-- mnemo SQLite schema, version 3: conversational context in the full-text index.
-- A turn of a conversation (a record with a session) is indexed with the text of the turn
-- before it, the one before that, and the one after it in the same session (by insertion
-- order), so a question answered across an exchange finds the turn that holds the answer.
-- Each session is also indexed as one document. Both tables stay contentless: the store
-- deletes rows with the exact text it indexed, and secure-delete erases the terms.

DROP TABLE memory_fts;

CREATE VIRTUAL TABLE memory_fts USING fts5(
    content,
    before1,
    before2,
    after,
    content = '',
    tokenize = 'porter unicode61 remove_diacritics 2'
);
INSERT INTO memory_fts (memory_fts, rank) VALUES ('secure-delete', 1);

CREATE INDEX memories_session ON memories (tenant, user_id, session_id)
    WHERE session_id IS NOT NULL;

INSERT INTO memory_fts (rowid, content, before1, before2, after)
SELECT rowid, content,
       CASE WHEN session_id IS NULL THEN '' ELSE coalesce(lag(content, 1) OVER w, '') END,
       CASE WHEN session_id IS NULL THEN '' ELSE coalesce(lag(content, 2) OVER w, '') END,
       CASE WHEN session_id IS NULL THEN '' ELSE coalesce(lead(content, 1) OVER w, '') END
  FROM memories
WINDOW w AS (PARTITION BY tenant, user_id, session_id ORDER BY rowid);

-- One row per conversation session of a user; its rowid keys session_fts.
CREATE TABLE memory_sessions (
    rowid      INTEGER PRIMARY KEY,
    tenant     TEXT NOT NULL,
    user_id    TEXT NOT NULL,
    session_id TEXT NOT NULL,
    UNIQUE (tenant, user_id, session_id)
);

CREATE VIRTUAL TABLE session_fts USING fts5(
    content,
    content = '',
    tokenize = 'porter unicode61 remove_diacritics 2'
);
INSERT INTO session_fts (session_fts, rank) VALUES ('secure-delete', 1);

INSERT INTO memory_sessions (tenant, user_id, session_id)
SELECT DISTINCT tenant, user_id, session_id FROM memories WHERE session_id IS NOT NULL;

INSERT INTO session_fts (rowid, content)
SELECT s.rowid, group_concat(m.content, char(10) ORDER BY m.rowid)
  FROM memory_sessions s
  JOIN memories m ON m.tenant = s.tenant AND m.user_id = s.user_id AND m.session_id = s.session_id
 GROUP BY s.rowid;
