"""The cases the roles tests generate, from the roles table (shoe.roles) and the configuration
schema (shoe.dealing.setup.KEYS and the normalised configuration): every command kind the shoe
knows, every configuration field, and another valid value for each field (shared by
tests/firmware/test_roles.py, on the Table, and tests/security/test_roles.py, through the link).

A field added to the schema later is in these cases at once: its role is what shoe.roles says
(the supervisor, until a line grants it), and `other_values` finds another value for it from
its default's type; only a field whose type suggests nothing (a string, say) needs a line in
OTHER."""

import json

from shoe import roles
from shoe.dealing import setup
from tests.security.test_board_config import FCF_TABLE

FCF = "four-card-frenzy"
HCF = "high-card-flush"
BASE = {"game": FCF, "procedure": "manual-shoe"}

# an inline FCF pay table (interfaces.md section 3): the only other FCF pay table there is
INLINE_FCF = json.loads(json.dumps(FCF_TABLE))

# other values for the fields whose type suggests none (tried first, in order)
OTHER = {
    "game": [HCF, FCF],
    "procedure": ["hand", "automated-shoe", "manual-shoe"],
    "paytable": [INLINE_FCF, "hcf-public-2", "fcf-public-1"],
    "rules": [{"ties": "push"}, {"raise_when_dealer_not_open": "win"}, {}],
}


def schema_fields():
    """Every field of the configuration: what a configure body may hold (setup.KEYS) and what
    the normalised configuration holds (derived fields such as paytable_sha256 included)."""
    out = list(setup.KEYS)
    for k in sorted(setup.configure(dict(BASE))):
        if k not in out:
            out.append(k)
    return out


def settable_fields():
    return list(setup.KEYS)


def known_kinds():
    """Every command kind the shoe acts on: the app's handlers, the table's, the link's _ack,
    and every kind the roles table lists."""
    from shoe import commands
    from shoe.link.endpoint import ACK_KIND
    from shoe.table import _COMMANDS

    out = sorted(
        set(commands.HANDLERS)
        | set(_COMMANDS)
        | {ACK_KIND}
        | {k for k, _ in roles.pairs(roles.COMMANDS)}
    )
    return out


def other_values(field, current):
    """Candidate values for `field` other than `current`: OTHER's, then from current's type."""
    out = list(OTHER.get(field, ()))
    if isinstance(current, bool):
        out.append(not current)
    elif isinstance(current, int):
        out += [current + 1, current - 1, current * 2]
    elif isinstance(current, float):
        out += [current * 2, current / 2]
    elif isinstance(current, list):
        out += [current[:-1], current[1:], []]
    elif isinstance(current, dict):
        out.append({})
    return [v for v in out if v != current]


def body_of(cfg):
    """The configure body that sets `cfg` (a normalised configuration, the pay table as its
    document) again."""
    return dict((k, cfg[k]) for k in setup.KEYS if k in cfg)


def expected_table_fields():
    """The fields the table may change, by the roles table."""
    return [f for f in schema_fields() if roles.field_role(f) == roles.TABLE]
