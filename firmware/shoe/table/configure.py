"""The table's configuration: checked by shoe.dealing.setup, the pay table and rules proved on
a fixed round by the engine, the guarded settings only under the supervisor key (functions of
Table). Fields: docs/round-lifecycle.md."""
from shoe.table.errors import CommandError, reason_of

# a fixed round the engine settles at configure time to validate the pay table and rules
_PROBE = {"four-card-frenzy": ("2c 3d 4h 5s 7c", "9c Td Jh Qs Kc"),
          "high-card-flush": ("2c 3d 4h 5s 7c 8d 9h", "Tc Jd Qh Ks Ac 6d 6h")}


def _probe(cfg):
    """Every offered wager is in the probe, so a pay table that lacks one is refused at
    configure time, not at the first settlement."""
    dealer, seat = _PROBE[cfg["game"]]
    w = {"ante": 1}
    for k in cfg["offered"]:
        w[k] = 1
    obj = {"game": cfg["game"], "paytable": cfg["paytable"], "rules": cfg["rules"],
           "dealer": dealer.split(), "seats": {"1": {"cards": seat.split(), "wagers": w,
                                                     "raise": 0}}}
    if cfg["game"] == "four-card-frenzy":
        w["odds"] = 1
        obj["all_six_card"] = "Ac" if "all_six" in w else None
    return obj


def configure(self, body, now, supervised=False):
    self._need_idle("configure")
    if self.ledger.p_kind is not None:
        raise CommandError("configure: a deck check is running", "pass_open")
    from shoe.dealing import setup   # configure/open_round time only: not loaded at boot

    cfg = setup.configure(body)
    pt = cfg["paytable"]
    if not isinstance(pt, str):     # an inline table: named by its content in replies
        from shoe.games import paytable

        cfg["paytable_sha256"] = paytable.digest(pt)
        if "offered" not in body:    # the default: what the pay table offers
            cfg["offered"] = [w for w in cfg["offered"] if w in pt]
    try:
        self.engine.evaluate_round(_probe(cfg))
    except Exception as e:  # EngineError, PaytableError; anything else is refused too
        raise CommandError("configure: %s" % e, reason_of(e, "bad_field"))
    weaker = [] if supervised else setup.guarded(self.cfg, cfg)
    if weaker:
        raise CommandError("configure: %s needs the supervisor key (configure_supervised)"
                           % ", ".join(weaker), "needs_supervisor")
    if self.cfg is None or cfg["two_deck"] != self.ledger.two_deck:
        self.ledger.set_two_deck(cfg["two_deck"])
    self.cfg = cfg
    return {"ok": True, "config": self.config_summary()}


def configure_supervised(self, body, now):
    """configure with the supervisor's authority (the link checked the supervisor key)."""
    return configure(self, body, now, True)


def config_summary(self):
    """The configuration as replies carry it: an inline pay table by its name and digest
    (`paytable_sha256`; None for a preset, named by its name), never the whole document
    (one frame)."""
    cfg = self.cfg
    if cfg is None or isinstance(cfg["paytable"], str):
        return cfg
    out = dict(cfg)
    out["paytable"] = cfg["paytable"].get("name") or "inline"
    out["paytable_inline"] = True
    return out
