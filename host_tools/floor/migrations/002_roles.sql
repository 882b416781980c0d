-- Roles: the collector writes, the floor view (and auditors) only read.
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'floor_collector') THEN
        CREATE ROLE floor_collector NOLOGIN;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'floor_reader') THEN
        CREATE ROLE floor_reader NOLOGIN;
    END IF;
END
$$;
GRANT USAGE ON SCHEMA public TO floor_collector, floor_reader;
GRANT SELECT, INSERT, UPDATE ON shoes, events, rounds, alerts, collectors TO floor_collector;
GRANT DELETE ON collectors TO floor_collector;
GRANT USAGE ON SEQUENCE alerts_id_seq TO floor_collector;
GRANT SELECT ON shoes, events, rounds, alerts, collectors, schema_migrations TO floor_reader;
