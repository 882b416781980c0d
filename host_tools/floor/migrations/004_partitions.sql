-- Operations (issue 20, item 5): events partitioned by day on the collector's commit time
-- (received_at, UTC days), retention by archiving and dropping whole partitions.
--
-- PostgreSQL wants the partition key in every unique constraint of a partitioned table, and
-- (shoe, eseq) cannot carry it. Uniqueness of (shoe, eseq) across partitions is kept by a BEFORE
-- INSERT trigger instead (floor_event_once): under a per-shoe transaction advisory lock it looks
-- up `event_seq` (the highest eseq stored per shoe, kept by the trigger alone); an eseq above it
-- is new at once (one index probe), one at or below it is searched in every partition, and one
-- at or below the shoe's archived horizon (`event_horizon`, written by the retention) is taken
-- as archived. A duplicate is skipped (the row is not inserted), as `ON CONFLICT DO NOTHING`
-- did. A separate dedup table keyed by (shoe, eseq) was the other choice: it grows by a row per
-- event forever, or needs deleting from, which an insert-only floor should not do.

ALTER TABLE events RENAME TO events_legacy;
-- the legacy table becomes the first partition; its own row triggers give way to the parent's
DROP TRIGGER events_insert_only ON events_legacy;

CREATE TABLE events (
    shoe        text NOT NULL,
    eseq        bigint NOT NULL,
    kind        text NOT NULL,
    body        jsonb NOT NULL,
    prev        bytea NOT NULL,
    hash        bytea NOT NULL,
    mac         bytea NOT NULL,
    payload     bytea NOT NULL,
    chain       text NOT NULL
                CONSTRAINT events_chain_check CHECK (chain IN ('ok', 'broken', 'gap')),
    collector   text NOT NULL,
    received_at timestamptz NOT NULL DEFAULT clock_timestamp()    -- the collector's commit
) PARTITION BY RANGE (received_at);

DO $$
DECLARE upto timestamptz := date_trunc('day', clock_timestamp() AT TIME ZONE 'UTC')
                             AT TIME ZONE 'UTC' + interval '1 day';
BEGIN
    IF EXISTS (SELECT 1 FROM events_legacy) THEN   -- kept whole: the first partition, to today
        EXECUTE format('ALTER TABLE events ATTACH PARTITION events_legacy FOR VALUES FROM '
                       '(MINVALUE) TO (%L)', upto);
        REVOKE ALL ON events_legacy FROM PUBLIC, floor_collector, floor_reader;
    ELSE
        DROP TABLE events_legacy;                  -- a new floor: nothing to keep
    END IF;
END
$$;
CREATE INDEX events_shoe_eseq ON events (shoe, eseq);

-- The highest eseq stored per shoe (the trigger's fast path) and the archived horizon (the
-- highest eseq of each shoe in a dropped partition). Nobody but the owner touches them.
CREATE TABLE event_seq (shoe text PRIMARY KEY, top bigint NOT NULL);
INSERT INTO event_seq SELECT shoe, max(eseq) FROM events GROUP BY shoe;
CREATE TABLE event_horizon (shoe text PRIMARY KEY, eseq bigint NOT NULL);

CREATE FUNCTION floor_event_once() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = public, pg_temp AS $$
DECLARE top bigint;
BEGIN
    PERFORM pg_advisory_xact_lock(24079, hashtext(NEW.shoe));   -- 0x5E0F: not the leases'
    SELECT s.top INTO top FROM event_seq s WHERE s.shoe = NEW.shoe;
    IF top IS NULL THEN
        INSERT INTO event_seq VALUES (NEW.shoe, NEW.eseq);
        IF NOT EXISTS (SELECT 1 FROM event_horizon h WHERE h.shoe = NEW.shoe) THEN
            RETURN NEW;
        END IF;
    ELSIF NEW.eseq > top THEN
        UPDATE event_seq SET top = NEW.eseq WHERE shoe = NEW.shoe;
        RETURN NEW;
    END IF;
    IF EXISTS (SELECT 1 FROM event_horizon h WHERE h.shoe = NEW.shoe AND NEW.eseq <= h.eseq)
       OR EXISTS (SELECT 1 FROM events e WHERE e.shoe = NEW.shoe AND e.eseq = NEW.eseq) THEN
        RETURN NULL;                 -- stored already, or archived: skipped
    END IF;
    RETURN NEW;
END
$$;
REVOKE ALL ON FUNCTION floor_event_once() FROM PUBLIC;
CREATE TRIGGER events_once BEFORE INSERT ON events
    FOR EACH ROW EXECUTE FUNCTION floor_event_once();
-- insert-only, as 003_trust.sql: row triggers are cloned to every partition; a statement
-- trigger (TRUNCATE) is not, so floor_event_partitions gives each new partition its own
CREATE TRIGGER events_insert_only BEFORE UPDATE OR DELETE ON events
    FOR EACH ROW EXECUTE FUNCTION floor_insert_only();
CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON events
    FOR EACH STATEMENT EXECUTE FUNCTION floor_insert_only();

GRANT SELECT, INSERT ON events TO floor_collector;
GRANT SELECT ON events TO floor_reader;
REVOKE UPDATE, DELETE, TRUNCATE ON events FROM PUBLIC, floor_collector, floor_reader;

-- Daily partitions [day, day + 1) in UTC, `days` of them from `since`'s day, created by the
-- owner whoever calls (the collector does, ahead of time): a partition the collector's role
-- owned could have its triggers disabled by that role. One that overlaps an existing one (the
-- legacy partition) is left out. -> the partitions created.
CREATE FUNCTION floor_event_partitions(since timestamptz, days integer) RETURNS SETOF text
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE d timestamptz; name text;
BEGIN
    IF days < 1 OR days > 62 THEN
        RAISE EXCEPTION 'days must be 1..62, not %', days;
    END IF;
    d := date_trunc('day', since AT TIME ZONE 'UTC') AT TIME ZONE 'UTC';
    FOR i IN 0 .. days - 1 LOOP
        name := 'events_p' || to_char(d AT TIME ZONE 'UTC', 'YYYYMMDD');
        IF to_regclass(name) IS NULL THEN
            BEGIN
                EXECUTE format('CREATE TABLE %I PARTITION OF events FOR VALUES FROM (%L) TO (%L)',
                               name, d, d + interval '1 day');
                EXECUTE format('CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON %I '
                               'FOR EACH STATEMENT EXECUTE FUNCTION floor_insert_only()', name);
                EXECUTE format('REVOKE ALL ON %I FROM PUBLIC', name);
                RETURN NEXT name;
            EXCEPTION WHEN invalid_object_definition THEN   -- overlaps the legacy partition
                NULL;
            END;
        END IF;
        d := d + interval '1 day';
    END LOOP;
END
$$;
REVOKE ALL ON FUNCTION floor_event_partitions(timestamptz, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION floor_event_partitions(timestamptz, integer) TO floor_collector;
SELECT floor_event_partitions(clock_timestamp(), 3);

-- What the retention archived and dropped (shoectl floor-retention), readable by auditors.
CREATE TABLE archives (
    partition   text PRIMARY KEY,
    range_from  text NOT NULL,
    range_to    text NOT NULL,
    rows        bigint NOT NULL,
    file        text NOT NULL,
    sha256      text NOT NULL,
    dropped_at  timestamptz NOT NULL DEFAULT clock_timestamp()
);
GRANT SELECT ON archives, event_horizon TO floor_reader;
GRANT SELECT ON event_horizon TO floor_collector;
