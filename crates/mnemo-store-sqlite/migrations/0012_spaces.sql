-- mnemo SQLite schema, version 12: shared spaces. A space's records live in the memories
-- table under an owner id no user can have (see mnemo_core::UserRef::space); these tables
-- say who may reach them. `shared` is JSON (serialized in the DB: mnemo_core::Shared): the
-- author of a space's record and its approval.
ALTER TABLE memories ADD COLUMN shared TEXT;

CREATE TABLE spaces (
    tenant                     TEXT    NOT NULL,
    id                         TEXT    NOT NULL,
    name                       TEXT    NOT NULL,
    description                TEXT,
    maintainers_write_directly INTEGER NOT NULL,
    on_author_deleted          TEXT    NOT NULL,
    created_at                 INTEGER NOT NULL,
    created_by                 TEXT    NOT NULL,
    PRIMARY KEY (tenant, id)
) WITHOUT ROWID;

CREATE TABLE space_members (
    tenant   TEXT    NOT NULL,
    space_id TEXT    NOT NULL,
    user_id  TEXT    NOT NULL,
    role     TEXT    NOT NULL,
    added_at INTEGER NOT NULL,
    added_by TEXT    NOT NULL,
    PRIMARY KEY (tenant, space_id, user_id),
    FOREIGN KEY (tenant, space_id) REFERENCES spaces (tenant, id) ON DELETE CASCADE
) WITHOUT ROWID;
CREATE INDEX space_members_user ON space_members (tenant, user_id);
