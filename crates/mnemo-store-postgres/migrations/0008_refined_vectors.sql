-- mnemo PostgreSQL schema, version 8: whether a record's vector came from the embedder's
-- refining encoder (run after the write, off its path) rather than from the write itself.
-- Every vector a write stores is unrefined (the default) until a refined one replaces it.
ALTER TABLE memory_vectors ADD COLUMN refined boolean NOT NULL DEFAULT false;
CREATE INDEX memory_vectors_unrefined ON memory_vectors (memory_rowid) WHERE NOT refined;
