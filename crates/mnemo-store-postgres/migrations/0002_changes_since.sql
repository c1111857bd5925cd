-- mnemo PostgreSQL schema, version 2: changes since an epoch. Each record carries the epoch of
-- the transaction that last changed it, and a deleted record leaves its rowid (a number,
-- never content) with the epoch of its deletion for a while, so a node whose cached search
-- index of a user is behind applies the changes since instead of reloading the user.
ALTER TABLE memories ADD COLUMN changed_epoch bigint NOT NULL DEFAULT 0;
CREATE INDEX memories_changed ON memories (tenant, user_id, changed_epoch);

CREATE TABLE memory_tombstones (
    tenant  text   NOT NULL,
    user_id text   NOT NULL,
    epoch   bigint NOT NULL,
    rowid   bigint NOT NULL,
    PRIMARY KEY (tenant, user_id, epoch, rowid)
);

-- Every write transaction sets `mnemo.epoch` (transaction-local) to the user's new epoch.
CREATE FUNCTION mnemo_stamp_change() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    current_epoch text := current_setting('mnemo.epoch', true);
BEGIN
    -- Changes made outside a write transaction (last-used times) are not index changes.
    IF current_epoch IS NOT NULL AND current_epoch <> '' THEN
        NEW.changed_epoch := current_epoch::bigint;
    END IF;
    RETURN NEW;
END
$$;

CREATE TRIGGER memories_stamp_change BEFORE INSERT OR UPDATE ON memories
    FOR EACH ROW EXECUTE FUNCTION mnemo_stamp_change();

CREATE FUNCTION mnemo_leave_tombstone() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO memory_tombstones (tenant, user_id, epoch, rowid)
    VALUES (OLD.tenant, OLD.user_id,
            coalesce(nullif(current_setting('mnemo.epoch', true), '')::bigint, 0), OLD.rowid)
    ON CONFLICT DO NOTHING;
    RETURN OLD;
END
$$;

CREATE TRIGGER memories_leave_tombstone AFTER DELETE ON memories
    FOR EACH ROW EXECUTE FUNCTION mnemo_leave_tombstone();
