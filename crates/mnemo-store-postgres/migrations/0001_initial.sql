-- mnemo PostgreSQL schema, version 1: the same records, versions, links, settings, audit log,
-- API keys and runs as the SQLite schema (version 8), in one schema of one database. Times
-- are bigint milliseconds since the Unix epoch (UTC). Every query filters on tenant and
-- user_id.

CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE memories (
    -- Row number: increasing in insertion order, which orders a session's turns.
    rowid              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id                 text   NOT NULL UNIQUE,
    tenant             text   NOT NULL,
    user_id            text   NOT NULL,
    scope              text   NOT NULL,
    agent_id           text,
    session_id         text,
    kind               text   NOT NULL,
    subject            text,
    attribute          text,
    content            text   NOT NULL,
    -- Hash of the normalised content, for exact-duplicate lookups.
    content_hash       bigint NOT NULL,
    importance         double precision NOT NULL,
    confidence         double precision NOT NULL,
    sensitivity        text   NOT NULL,
    source_type        text   NOT NULL,
    source_ref         text,
    source_captured_at bigint NOT NULL,
    source_extractor   text,
    status             text   NOT NULL,
    created_at         bigint NOT NULL,
    updated_at         bigint NOT NULL,
    last_used_at       bigint,
    valid_from         bigint NOT NULL,
    expires_at         bigint,
    review_after       bigint,
    superseded_by      text,
    version            integer NOT NULL,
    -- JSON (serialized in the DB: mnemo_core::ConsentReceipt).
    consent            text,
    -- JSON object of string values.
    metadata           text   NOT NULL DEFAULT '{}',
    -- A raw conversation turn kept as transcript.
    transcript         boolean NOT NULL DEFAULT false,
    -- JSON array of the ids this record was derived from.
    derived_from       text
);

CREATE INDEX memories_owner ON memories (tenant, user_id, status, kind);
CREATE INDEX memories_content_hash ON memories (tenant, user_id, content_hash);
CREATE INDEX memories_expiry ON memories (tenant, expires_at) WHERE expires_at IS NOT NULL;
CREATE INDEX memories_superseded_by ON memories (tenant, user_id, superseded_by)
    WHERE superseded_by IS NOT NULL;
CREATE INDEX memories_source_ref ON memories (tenant, user_id, source_ref)
    WHERE source_ref IS NOT NULL;
CREATE INDEX memories_session ON memories (tenant, user_id, session_id)
    WHERE session_id IS NOT NULL;
-- Never two active records for one (user, scope, subject, attribute).
CREATE UNIQUE INDEX memories_active_key ON memories (tenant, user_id, scope, subject, attribute)
    WHERE status = 'active' AND subject IS NOT NULL AND attribute IS NOT NULL;

-- Earlier versions of a record; JSON snapshots (mnemo_core::MemoryVersion).
CREATE TABLE memory_versions (
    memory_rowid bigint  NOT NULL REFERENCES memories (rowid) ON DELETE CASCADE,
    version      integer NOT NULL,
    snapshot     text    NOT NULL,
    PRIMARY KEY (memory_rowid, version)
);

-- One vector per record, with the embedder that made it.
CREATE TABLE memory_vectors (
    memory_rowid bigint  PRIMARY KEY REFERENCES memories (rowid) ON DELETE CASCADE,
    model        text    NOT NULL,
    dims         integer NOT NULL,
    vector       vector  NOT NULL
);

CREATE TABLE memory_links (
    tenant     text NOT NULL,
    user_id    text NOT NULL,
    source_id  text NOT NULL,
    derived_id text NOT NULL,
    PRIMARY KEY (tenant, user_id, source_id, derived_id)
);
CREATE INDEX memory_links_derived ON memory_links (tenant, user_id, derived_id);

CREATE TABLE user_settings (
    tenant         text    NOT NULL,
    user_id        text    NOT NULL,
    memory_enabled boolean NOT NULL,
    updated_at     bigint  NOT NULL,
    PRIMARY KEY (tenant, user_id)
);

-- Every write decision; never memory content.
CREATE TABLE audit_log (
    seq       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant    text   NOT NULL,
    user_id   text   NOT NULL,
    at        bigint NOT NULL,
    action    text   NOT NULL,
    memory_id text,
    reason    text,
    actor     text   NOT NULL,
    run_id    text
);
CREATE INDEX audit_owner ON audit_log (tenant, user_id, seq);

-- Only a SHA-256 hash of each key is stored.
CREATE TABLE api_keys (
    id         text    PRIMARY KEY,
    tenant     text    NOT NULL,
    user_id    text,
    admin      boolean NOT NULL,
    key_hash   text    NOT NULL UNIQUE,
    created_at bigint  NOT NULL,
    revoked_at bigint
);
CREATE INDEX api_keys_tenant ON api_keys (tenant);

-- Working memory of one task: one JSON document, rewritten whole in each transaction.
CREATE TABLE runs (
    id         text   PRIMARY KEY,
    tenant     text   NOT NULL,
    user_id    text   NOT NULL,
    state      text   NOT NULL,
    started_at bigint NOT NULL,
    updated_at bigint NOT NULL
);
CREATE INDEX runs_owner ON runs (tenant, user_id, started_at);

-- A counter per user, raised by every transaction that changes the user's records, so each
-- server node knows when its in-memory search index of the user is stale.
CREATE TABLE user_epochs (
    tenant  text   NOT NULL,
    user_id text   NOT NULL,
    epoch   bigint NOT NULL,
    PRIMARY KEY (tenant, user_id)
);
