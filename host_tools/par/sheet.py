"""Build a par sheet: every wager of a pay table, each outcome's combinations, probability,
pay and contribution to the return, the house edge, the method beside each figure, and the
simulation's agreement (docs/par.md: the API and every key). `sheet()` is
host_tools.par.sheet."""

import time

from host_tools.errors import ShoeError
from host_tools.par.entry import frac, wager  # noqa: F401  (the sheet's entry rows)
from shoe.games import paytable as _paytable
from shoe.games.vocab import FCF, HCF

RULES = {
    FCF: {"ties": ("player", "push"), "raise_when_dealer_not_open": ("compare", "win")},
    HCF: {},
}  # rule -> allowed values, the default first (the engine's own list)
SIM_ROUNDS = {FCF: 30000, HCF: 20000}  # rounds of six seats: ~20 s each here
SEED = 1
SIGMAS = 3


def agree(entry, mean, se, key="return"):
    """Attach the simulation's figure to an entry (or a dict) and say if it agrees."""
    exact = entry[key]
    z = (mean - exact) / se if se > 0 else (0.0 if mean == exact else float("inf"))
    entry["simulation"] = {"return": mean, "se": se, "z": round(z, 3), "agrees": abs(z) <= SIGMAS}
    return entry["simulation"]["agrees"]


def attach(out, res):
    """Put the simulation's figures (sim.run) beside the exact ones of a sheet."""
    for w in out["wagers"]:
        mean, se = res["wagers"][w["wager"]]
        agree(w, mean, se)
    mean, se = res["main"]
    agree(out["main_game"], mean, se, key="return_per_hand")
    out["dealer"]["simulated"] = res["dealer"]


def check_rules(game, rules):
    """The rule set with defaults filled in, or ShoeError naming the bad rule."""
    spec = RULES[game]
    out = {k: v[0] for k, v in spec.items()}
    for k, v in (rules or {}).items():
        if k not in spec:
            raise ShoeError(
                "unknown rule %r for %s (rules: %s)" % (k, game, ", ".join(spec) or "none")
            )
        if v not in spec[k]:
            raise ShoeError("rule %s must be one of %s, not %r" % (k, ", ".join(spec[k]), v))
        out[k] = v
    return out


def load_table(paytable):
    """A preset name, a pay table document (dict) or a Table -> (Table, document or None).
    A bad table raises ShoeError (reason "paytable") with the firmware's own message, which
    names the field (shoe.games.ptcheck)."""
    if isinstance(paytable, _paytable.PayTable):
        return paytable, None
    try:
        doc = _paytable.preset(paytable) if isinstance(paytable, str) else paytable
        return _paytable.validate(doc), doc
    except _paytable.PaytableError as e:  # the firmware's check: the message names the field
        err = ShoeError("bad pay table: %s" % e)
        err.reason = "paytable"
        raise err from None


def sheet(paytable, rules=None, *, sim_rounds=None, seed=SEED):
    """The par sheet of a pay table (preset name, document or Table) as a dict (docs/par.md).
    sim_rounds: rounds of six seats for the engine cross-check (None: the game's default,
    0: none)."""
    table, doc = load_table(paytable)
    rules = check_rules(table.game, rules)
    if sim_rounds is None:
        sim_rounds = SIM_ROUNDS[table.game]
    if not isinstance(sim_rounds, int) or sim_rounds < 0:
        raise ShoeError("sim_rounds must be a whole number >= 0")
    t0 = time.perf_counter()
    if table.game == FCF:
        from host_tools.par import fcfsheet as build
    else:
        from host_tools.par import hcfsheet as build
    out = {
        "type": "par_sheet",
        "version": 1,
        "game": table.game,
        "paytable": {
            "name": table.name,
            "example": table.example,
            "illustrative": list(table.illustrative),
            "payout_limit": table.payout_limit,
            "digest": _paytable.digest(doc) if doc is not None else None,
        },
        "rules": rules,
        "model": "one seat against the dealer from one 52-card deck, one unit on every "
        "wager the table offers, the raise as the strategy below says; "
        "return = expected net per unit, house edge = -return per unit wagered",
    }
    exact, decide = build.exact(table, rules)
    out.update(exact)
    t1 = time.perf_counter()
    if sim_rounds:
        from host_tools.par import sim

        res = sim.run(table.game, table, rules, decide, sim_rounds, seed)
        attach(out, res)
        ok = [w["simulation"]["agrees"] for w in out["wagers"] if "simulation" in w]
        ok.append(out["main_game"]["simulation"]["agrees"])
        out["simulation"] = {
            k: res[k] for k in ("rounds", "seats", "hands", "seed", "engine", "seconds")
        }
        out["simulation"]["sigmas"] = SIGMAS
        out["simulation"]["agrees"] = all(ok)
    out["seconds"] = {"exact": round(t1 - t0, 2), "simulation": round(time.perf_counter() - t1, 2)}
    notes = out.setdefault("notes", [])
    if table.payout_limit is not None:
        notes.append(
            "payout_limit %d is not applied: the figures are per unit wagered and "
            "the cap only binds on large wins of large bets" % table.payout_limit
        )
    if table.illustrative:
        notes.append("illustrative (not public) values in: " + ", ".join(table.illustrative))
    if table.example:
        notes.append("example pay table from public game descriptions, not a regulatory one")
    notes.append(
        "payouts of fractional odds are rounded down to the currency unit by the "
        "shoe; the figures use the exact odds (the house keeps the fractions)"
    )
    return out
