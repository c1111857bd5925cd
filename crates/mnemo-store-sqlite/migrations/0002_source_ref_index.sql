-- mnemo SQLite schema, version 2: look up a user's records by source reference (a write of an
-- episode compares itself only with records of the same message).
CREATE INDEX memories_source_ref ON memories (tenant, user_id, source_ref)
    WHERE source_ref IS NOT NULL;
