-- mnemo SQLite schema, version 5: API keys. Only a SHA-256 hash of each key is stored.
CREATE TABLE api_keys (
    id         TEXT    PRIMARY KEY,
    tenant     TEXT    NOT NULL,
    user_id    TEXT,
    admin      INTEGER NOT NULL,
    key_hash   TEXT    NOT NULL UNIQUE,
    created_at INTEGER NOT NULL,
    revoked_at INTEGER
);
CREATE INDEX api_keys_tenant ON api_keys (tenant);
