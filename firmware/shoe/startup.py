"""The app's boot work, in a module of its own so that the app drops its bytecode once built
(App() forgets it): the provisioned configuration, the journal's raw-flash store, and a damaged
journal reported to the table (docs/architecture.md).
"""
from shoe import forget


def load_config(state_dir, log):
    """(configuration, provisioned). Unprovisioned: no keys (App makes a random link key, so
    no command is ever accepted)."""
    from shoe import config as shoe_config

    try:
        cfg, provisioned = shoe_config.load(state_dir), True
    except shoe_config.ConfigError as e:
        log("not provisioned:", e)
        cfg, provisioned = {"shoe_id": "UNPROVISIONED", "keys": None}, False
    forget("shoe.config")   # read once, at boot
    return cfg, provisioned


def journal_store(hw):
    """The Pico's raw flash rings for the journal (None elsewhere: the journal's files)."""
    if getattr(hw, "flash", None) is None:
        return None
    from shoe.journal.extents import open_store

    store = open_store(hw.flash, hw.state_dir)
    forget("shoe.journal.extents")   # boot work only: ~2.5 KB of bytecode on a Pico
    return store


# clause: irr:journal-corrupt
def journal_damaged(app, rec, log):
    """The journal found corruption (not a torn tail): the table latches journal_corrupt
    (a supervisor acknowledges it); a state that may be stale voids the open round."""
    stale = rec["state"] == "stale"
    detail = "journal: %d bad region(s), %d bytes, %d events lost, state %s" % (
        rec["holes"], rec["lost_bytes"], rec["events_lost"], rec["state"])
    log(detail)
    nos = app.journal.round_numbers() if stale else None
    app.table.journal_damaged(detail, stale, app.clock(), max(nos) if nos else 0)
