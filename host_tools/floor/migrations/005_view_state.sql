-- The floor view's own state in PostgreSQL (issue 20): login sessions and alert
-- acknowledgements survive a restart of the view and are shared by every view process.
--
-- floor_view: the only role that writes them (the view's session store SETs ROLE to it; its
-- pages still read as floor_reader, SELECT only). It has no right on any other table.
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'floor_view') THEN
        CREATE ROLE floor_view NOLOGIN;
    END IF;
END
$$;
GRANT USAGE ON SCHEMA public TO floor_view;

-- A session: the SHA-256 of its random token (the token itself is only in the browser's
-- cookie), who, how (password or the identity provider's header), when it began and when it
-- was last used (the view checks its idle and absolute limits against these). Logout and
-- expiry delete the row.
CREATE TABLE view_sessions (
    token_hash  bytea PRIMARY KEY CHECK (length(token_hash) = 32),
    user_name   text NOT NULL,
    role        text NOT NULL,
    via         text NOT NULL,
    created_at  timestamptz NOT NULL,
    last_at     timestamptz NOT NULL
);
CREATE INDEX view_sessions_last ON view_sessions (last_at);
GRANT SELECT, INSERT, DELETE ON view_sessions TO floor_view;
GRANT UPDATE (last_at) ON view_sessions TO floor_view;

-- Acknowledgements: insert-only (the trigger of 003 for every role); the first one of an
-- alert is the one shown, every one is kept.
CREATE TABLE alert_acks (
    id          bigserial PRIMARY KEY,
    alert       bigint NOT NULL,
    user_name   text NOT NULL,
    role        text NOT NULL,
    addr        text,
    at          timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX alert_acks_alert ON alert_acks (alert, id);
CREATE TRIGGER alert_acks_insert_only BEFORE UPDATE OR DELETE ON alert_acks
    FOR EACH ROW EXECUTE FUNCTION floor_insert_only();
CREATE TRIGGER alert_acks_no_truncate BEFORE TRUNCATE ON alert_acks
    FOR EACH STATEMENT EXECUTE FUNCTION floor_insert_only();
REVOKE UPDATE, DELETE, TRUNCATE ON alert_acks FROM PUBLIC;
GRANT SELECT, INSERT ON alert_acks TO floor_view;
GRANT USAGE ON SEQUENCE alert_acks_id_seq TO floor_view;
GRANT SELECT ON alerts TO floor_view;
GRANT SELECT ON alert_acks TO floor_reader;
