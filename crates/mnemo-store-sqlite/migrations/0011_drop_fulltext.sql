-- mnemo SQLite schema, version 11: the full-text tables go. Lexical search runs in the
-- per-user in-memory index (BM25 over each user's records, rebuilt from these rows), and
-- nothing read `memory_fts` or `session_fts`; keeping them cost two thirds of every write.

DROP TABLE IF EXISTS memory_fts;
DROP TABLE IF EXISTS session_fts;
DROP TABLE IF EXISTS memory_owners;
