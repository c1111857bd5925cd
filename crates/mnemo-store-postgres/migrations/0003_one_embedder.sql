-- mnemo PostgreSQL schema, version 3: every stored vector comes from one embedder, enforced by
-- the database itself, so nodes agree even when one of them remembers an embedder whose
-- vectors have all been deleted since.
CREATE FUNCTION mnemo_one_embedder() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    stored record;
BEGIN
    SELECT model, dims INTO stored FROM memory_vectors
     WHERE memory_rowid <> NEW.memory_rowid LIMIT 1;
    IF FOUND AND (stored.model <> NEW.model OR stored.dims <> NEW.dims) THEN
        RAISE EXCEPTION USING
            ERRCODE = 'MN001',
            MESSAGE = format('embedder mismatch: this database holds %s-d vectors from `%s`, '
                             'got %s-d vectors from `%s`',
                             stored.dims, stored.model, NEW.dims, NEW.model);
    END IF;
    RETURN NEW;
END
$$;

CREATE TRIGGER memory_vectors_one_embedder BEFORE INSERT OR UPDATE ON memory_vectors
    FOR EACH ROW EXECUTE FUNCTION mnemo_one_embedder();
