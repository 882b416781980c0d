-- Trust nothing on the broker (issue 20, item 3): events are insert-only for every role, unknown
-- shoe ids are quarantined (never a tile), replays and refused state messages are counted.

-- Events (and settled rounds) are insert-only. The trigger holds for every role, the owner's
-- included; the privileges say the same a second time for the floor's roles. Retention works by
-- detaching and archiving whole partitions as the owner (no row is updated or deleted).
CREATE FUNCTION floor_insert_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the floor''s % are insert-only: % refused', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'insufficient_privilege';
END
$$;
CREATE TRIGGER events_insert_only BEFORE UPDATE OR DELETE ON events
    FOR EACH ROW EXECUTE FUNCTION floor_insert_only();
CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON events
    FOR EACH STATEMENT EXECUTE FUNCTION floor_insert_only();
CREATE TRIGGER rounds_insert_only BEFORE UPDATE OR DELETE ON rounds
    FOR EACH ROW EXECUTE FUNCTION floor_insert_only();
CREATE TRIGGER rounds_no_truncate BEFORE TRUNCATE ON rounds
    FOR EACH STATEMENT EXECUTE FUNCTION floor_insert_only();
REVOKE UPDATE, DELETE, TRUNCATE ON events, rounds FROM PUBLIC, floor_collector, floor_reader;

-- A shoe id this floor has no key for: counted per collector that saw it, shown as an alert,
-- never given a row in `shoes` (a tile).
CREATE TABLE quarantine (
    shoe        text NOT NULL,
    collector   text NOT NULL,
    messages    bigint NOT NULL DEFAULT 0,
    last_topic  text,
    first_seen  timestamptz NOT NULL DEFAULT clock_timestamp(),
    last_seen   timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (shoe, collector)
);
GRANT SELECT, INSERT, UPDATE ON quarantine TO floor_collector;
GRANT SELECT ON quarantine TO floor_reader;

-- Per table: re-delivered or replayed events, refused state messages, and the last verified
-- state message's counter and MAC (an older or different one is a replay).
ALTER TABLE shoes ADD COLUMN replays bigint NOT NULL DEFAULT 0,
                  ADD COLUMN state_refused bigint NOT NULL DEFAULT 0,
                  ADD COLUMN state_ctr bigint NOT NULL DEFAULT 0,
                  ADD COLUMN state_mac bytea;
