-- mnemo SQLite schema, version 7: whether a record is a raw conversation turn kept as
-- transcript (shown in context only as its own session, never as a long-term memory).
ALTER TABLE memories ADD COLUMN transcript INTEGER NOT NULL DEFAULT 0;
