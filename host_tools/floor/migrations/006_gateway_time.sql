-- The gateway's receive time of each event (issue 20, item 5): carried on MQTT in a signed
-- envelope around the shoe's untouched payload (keyring.wrap_event), verified and stored by the
-- collector. NULL for an event from a gateway that publishes the bare payload (a rollout) or
-- whose time did not verify. received_at stays the collector's commit time (the partition key).
ALTER TABLE events ADD COLUMN gateway_at timestamptz;
