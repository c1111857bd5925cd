-- mnemo SQLite schema, version 6: runs (working memory of one task) and the run an audit
-- entry refers to. A run's state is one JSON document, rewritten whole in each transaction.
CREATE TABLE runs (
    id         TEXT    PRIMARY KEY,
    tenant     TEXT    NOT NULL,
    user_id    TEXT    NOT NULL,
    state      TEXT    NOT NULL,
    started_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
CREATE INDEX runs_owner ON runs (tenant, user_id, started_at);
ALTER TABLE audit_log ADD COLUMN run_id TEXT;
