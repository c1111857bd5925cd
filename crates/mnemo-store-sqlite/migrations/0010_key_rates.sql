-- mnemo SQLite schema, version 10: a key may have its own rate limit (requests per second);
-- NULL means the server's default.
ALTER TABLE api_keys ADD COLUMN rate REAL;
