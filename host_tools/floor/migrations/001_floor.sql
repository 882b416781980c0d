-- The floor store: every shoe event once, keyed by (shoe, eseq), with what the collector found.
CREATE TABLE shoes (
    shoe           text PRIMARY KEY,
    head_eseq      bigint NOT NULL DEFAULT 0,      -- highest eseq stored in chain order
    head_hash      bytea,                          -- chain head after head_eseq
    phase          text,
    round          integer,
    last_kind      text,
    last_event_at  timestamptz,                    -- when the collector committed the last event
    last_result    jsonb,                          -- summary of the last settled/voided round
    gateway        jsonb,                          -- the gateway's retained state message
    gateway_at     timestamptz,
    owner          text,                           -- collector holding its lease
    updated_at     timestamptz NOT NULL DEFAULT clock_timestamp()
);

CREATE TABLE events (
    shoe        text NOT NULL,
    eseq        bigint NOT NULL,
    kind        text NOT NULL,
    body        jsonb NOT NULL,
    prev        bytea NOT NULL,
    hash        bytea NOT NULL,
    mac         bytea NOT NULL,
    payload     bytea NOT NULL,                    -- the signed wire payload, unchanged
    chain       text NOT NULL CHECK (chain IN ('ok', 'broken', 'gap')),
    collector   text NOT NULL,
    received_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (shoe, eseq)
);

CREATE TABLE rounds (
    shoe        text NOT NULL,
    eseq        bigint NOT NULL,
    round       integer,
    outcome     text NOT NULL CHECK (outcome IN ('result', 'void')),
    summary     jsonb NOT NULL,
    reeval      text NOT NULL CHECK (reeval IN ('agree', 'disagree', 'void')),
    settled_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (shoe, eseq)
);
CREATE INDEX rounds_recent ON rounds (shoe, eseq DESC);

CREATE TABLE alerts (
    id          bigserial PRIMARY KEY,
    shoe        text NOT NULL,
    eseq        bigint,
    kind        text NOT NULL,     -- bad_mac, malformed, unknown_shoe, conflict, chain_break, gap,
                                   -- disagreement, irregularity
    detail      text NOT NULL,
    ref         text,              -- e.g. the shoe's irregularity id, to close it when cleared
    collector   text NOT NULL,
    raised_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
    closed_at   timestamptz
);
CREATE INDEX alerts_open ON alerts (shoe) WHERE closed_at IS NULL;

CREATE TABLE collectors (
    name     text PRIMARY KEY,
    seen_at  timestamptz NOT NULL DEFAULT clock_timestamp()
);
