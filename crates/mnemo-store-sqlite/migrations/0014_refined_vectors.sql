-- mnemo SQLite schema, version 14: whether a record's vector came from the embedder's refining
-- encoder (run after the write, off its path) rather than from the write itself. Every vector
-- written by a write is unrefined (the default) until a refined one replaces it.
ALTER TABLE memory_vectors ADD COLUMN refined INTEGER NOT NULL DEFAULT 0;
CREATE INDEX memory_vectors_unrefined ON memory_vectors (memory_rowid) WHERE refined = 0;
