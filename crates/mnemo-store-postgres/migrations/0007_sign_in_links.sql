-- mnemo PostgreSQL schema, version 7: one-time sign-in links of the memory panel. Only a
-- SHA-256 hash of each link's secret is stored; a link is used at most once.
CREATE TABLE sign_in_links (
    hash       text   PRIMARY KEY,
    tenant     text   NOT NULL,
    user_id    text   NOT NULL,
    created_at bigint NOT NULL,
    expires_at bigint NOT NULL,
    used_at    bigint
);
