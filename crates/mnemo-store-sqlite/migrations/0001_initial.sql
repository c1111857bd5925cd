-- mnemo SQLite schema, version 1.
-- Records, their versions, the full-text index and vectors live in this one file and are
-- changed inside one transaction. Times are integer milliseconds since the Unix epoch (UTC).

CREATE TABLE memories (
    rowid              INTEGER PRIMARY KEY,
    id                 TEXT    NOT NULL UNIQUE,
    tenant             TEXT    NOT NULL,
    user_id            TEXT    NOT NULL,
    scope              TEXT    NOT NULL,
    agent_id           TEXT,
    session_id         TEXT,
    kind               TEXT    NOT NULL,
    subject            TEXT,
    attribute          TEXT,
    content            TEXT    NOT NULL,
    -- Hash of the normalised content, for exact-duplicate lookups without a second copy of it.
    content_hash       INTEGER NOT NULL,
    importance         REAL    NOT NULL,
    confidence         REAL    NOT NULL,
    sensitivity        TEXT    NOT NULL,
    source_type        TEXT    NOT NULL,
    source_ref         TEXT,
    source_captured_at INTEGER NOT NULL,
    source_extractor   TEXT,
    status             TEXT    NOT NULL,
    created_at         INTEGER NOT NULL,
    updated_at         INTEGER NOT NULL,
    last_used_at       INTEGER,
    valid_from         INTEGER NOT NULL,
    expires_at         INTEGER,
    review_after       INTEGER,
    superseded_by      TEXT,
    version            INTEGER NOT NULL,
    -- JSON (serialized in the DB: mnemo_core::ConsentReceipt).
    consent            TEXT,
    -- JSON object of string values.
    metadata           TEXT    NOT NULL DEFAULT '{}'
);

CREATE INDEX memories_owner ON memories (tenant, user_id, status, kind);
CREATE INDEX memories_content_hash ON memories (tenant, user_id, content_hash);
CREATE INDEX memories_expiry ON memories (tenant, expires_at) WHERE expires_at IS NOT NULL;
CREATE INDEX memories_superseded_by ON memories (superseded_by) WHERE superseded_by IS NOT NULL;
-- Never two active records for one (user, scope, subject, attribute).
CREATE UNIQUE INDEX memories_active_key ON memories (tenant, user_id, scope, subject, attribute)
    WHERE status = 'active' AND subject IS NOT NULL AND attribute IS NOT NULL;

-- Earlier versions of a record; JSON snapshots (serialized in the DB: mnemo_core::MemoryVersion).
CREATE TABLE memory_versions (
    memory_rowid INTEGER NOT NULL,
    version      INTEGER NOT NULL,
    snapshot     TEXT    NOT NULL,
    PRIMARY KEY (memory_rowid, version)
) WITHOUT ROWID;

-- One vector per record, little-endian f32, with the embedder that made it.
CREATE TABLE memory_vectors (
    memory_rowid INTEGER PRIMARY KEY,
    model        TEXT    NOT NULL,
    dims         INTEGER NOT NULL,
    vector       BLOB    NOT NULL
);

-- Contentless full-text index keyed by memories.rowid: it holds no copy of the text. Rows are
-- removed with the 'delete' command and their original text, and secure-delete then removes
-- the row's terms from the index pages themselves instead of leaving delete markers.
CREATE VIRTUAL TABLE memory_fts USING fts5(
    content,
    content = '',
    tokenize = 'porter unicode61 remove_diacritics 2'
);
INSERT INTO memory_fts (memory_fts, rank) VALUES ('secure-delete', 1);

CREATE TABLE user_settings (
    tenant         TEXT    NOT NULL,
    user_id        TEXT    NOT NULL,
    memory_enabled INTEGER NOT NULL,
    updated_at     INTEGER NOT NULL,
    PRIMARY KEY (tenant, user_id)
) WITHOUT ROWID;

-- Every write decision; never memory content.
CREATE TABLE audit_log (
    seq       INTEGER PRIMARY KEY,
    tenant    TEXT    NOT NULL,
    user_id   TEXT    NOT NULL,
    at        INTEGER NOT NULL,
    action    TEXT    NOT NULL,
    memory_id TEXT,
    reason    TEXT,
    actor     TEXT    NOT NULL
);
CREATE INDEX audit_owner ON audit_log (tenant, user_id, seq);
