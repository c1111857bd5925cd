-- mnemo PostgreSQL schema, version 6: shared spaces. A space's records live in the memories
-- table under an owner id no user can have (see mnemo_core::UserRef::space); these tables
-- say who may reach them. `shared` is JSON (serialized in the DB: mnemo_core::Shared): the
-- author of a space's record and its approval.
ALTER TABLE memories ADD COLUMN shared text;

CREATE TABLE spaces (
    tenant                     text    NOT NULL,
    id                         text    NOT NULL,
    name                       text    NOT NULL,
    description                text,
    maintainers_write_directly boolean NOT NULL,
    on_author_deleted          text    NOT NULL,
    created_at                 bigint  NOT NULL,
    created_by                 text    NOT NULL,
    PRIMARY KEY (tenant, id)
);

CREATE TABLE space_members (
    tenant   text   NOT NULL,
    space_id text   NOT NULL,
    user_id  text   NOT NULL,
    role     text   NOT NULL,
    added_at bigint NOT NULL,
    added_by text   NOT NULL,
    PRIMARY KEY (tenant, space_id, user_id),
    FOREIGN KEY (tenant, space_id) REFERENCES spaces (tenant, id) ON DELETE CASCADE
);
CREATE INDEX space_members_user ON space_members (tenant, user_id);
