-- mnemo PostgreSQL schema, version 4: the deletion ledger. A tombstone per removed record (its
-- id and keyed hashes of its statement and source reference, never its text) stops retries,
-- replays and imports from recreating it; a receipt per deletion says what was removed and
-- what remains. The key the hashes are made with is made once and stays in the database.
CREATE TABLE ledger_key (
    id  INTEGER PRIMARY KEY CHECK (id = 1),
    key BYTEA NOT NULL CHECK (length(key) = 32)
);
INSERT INTO ledger_key (id, key)
VALUES (1, decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex'));
CREATE TABLE ledger_tombstones (
    tenant           TEXT NOT NULL,
    user_id          TEXT NOT NULL,
    memory_id        TEXT NOT NULL,
    statement_digest TEXT NOT NULL,
    source_digest    TEXT,
    deleted_at       BIGINT NOT NULL,
    receipt_id       TEXT NOT NULL
);
CREATE INDEX ledger_tombstones_statement ON ledger_tombstones (tenant, user_id, statement_digest);
CREATE INDEX ledger_tombstones_memory ON ledger_tombstones (tenant, user_id, memory_id);
CREATE TABLE deletion_receipts (
    tenant  TEXT NOT NULL,
    user_id TEXT NOT NULL,
    id      TEXT NOT NULL,
    at      BIGINT NOT NULL,
    receipt TEXT NOT NULL,
    PRIMARY KEY (tenant, user_id, id)
);
CREATE INDEX deletion_receipts_at ON deletion_receipts (tenant, user_id, at);
