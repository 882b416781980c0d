"""Roles: who may use each command and change each configuration field (one allowlist).

A command's role is the key whose MAC it carries (the link tells: shoe.link.endpoint): the shoe
key is the table's, the supervisor key the supervisor's, and the supervisor may do whatever the
table may. COMMANDS names the rule of every command kind, FIELDS the role of every configuration
field (shoe.dealing.setup); **a kind or a field not named here needs the supervisor**. Rules:

    table        the table key will do
    supervisor   the supervisor key only
    dealt        void_round, close_round: the table until a card of the open round has left the
                 shoe (dealt, or read unreadable), the supervisor after
    fields       configure: the role of each field whose value it changes against the current
                 configuration (the first configure changes every field); no change: the table
    deck         load_deck: the table for a deck the shoe does not hold; loading again a deck it
                 holds (in play, being checked, or taken out) needs the supervisor: it would
                 restart the deck's age and bring a removed or quarantined deck back

Why each entry: docs/roles.md (tests/firmware/test_roles.py checks it against these tables).
The tables are strings like shoe/reasons.py (one object each in RAM, none for a frozen module).
"""
from shoe.errors import CommandError

TABLE = "table"
SUPERVISOR = "supervisor"

# "kind:rule" of every command the host may send (the link's own `_ack` included)
COMMANDS = (
    " hello:table status:table recall:table attest:table _ack:table"
    " open_round:table decisions:table load_deck:deck configure:fields"
    " void_round:dealt close_round:dealt"
    " configure_supervised:supervisor ack_error:supervisor ack:supervisor "
)

# "field:role" of every field of the normalised configuration (shoe.dealing.setup.configure):
# nothing is granted to the table (docs/roles.md says why, field by field)
FIELDS = (
    " game:supervisor procedure:supervisor paytable:supervisor paytable_sha256:supervisor"
    " rules:supervisor offered:supervisor stub_every:supervisor two_deck:supervisor"
    " represent_max:supervisor jam_timeout_s:supervisor deck_age_hand_s:supervisor"
    " deck_age_shoe_s:supervisor shuffle_check:supervisor double_reads:supervisor "
)


def _find(table, name):
    i = table.find(" %s:" % name)
    if i < 0:
        return SUPERVISOR
    i += len(name) + 2
    return table[i:table.find(" ", i)]


def rule(kind):
    """The rule of a command kind (table, supervisor, dealt, fields, deck); unlisted:
    supervisor."""
    return _find(COMMANDS, kind)


def field_role(field):
    """The role that may change a configuration field; unlisted: supervisor."""
    return _find(FIELDS, field)


def allows(role, need):
    """True if a command of `role` may do what needs `need` (the supervisor may do anything)."""
    return role == SUPERVISOR or (role == TABLE and need == TABLE)


def table_suffices(kind):
    """True if the table key always does for `kind` (a host uses its least key: host_tools)."""
    return rule(kind) == TABLE


def pairs(table):
    """[(name, rule or role), ...] of COMMANDS or FIELDS (tests and docs)."""
    return [tuple(x.split(":")) for x in table.split()]


def refuse(what, role):
    raise CommandError("%s needs the supervisor key (sent with the %s key)"
                       % (what, role if role in (TABLE, SUPERVISOR) else "an unknown"),
                       "needs_supervisor")


def dealt(table):
    """A card of the open round has left the shoe: placed, or read unreadable."""
    rnd = table.rnd
    return rnd is not None and (table.tracker.n > 0 or rnd.tries > 0 or rnd.stage != "dealing")


def _holds(table, body):
    from shoe.table.passes import serial_of

    serial = serial_of(body.get("serial"))
    if serial is None:
        return False     # refused as bad_deck by load_deck itself
    lg = table.ledger
    for s in (0, 1):
        if lg.deck(s) is not None and lg.deck_id(s) == "%04X" % serial:
            return True
    return False


def need(table, kind, body):
    """The role `kind` needs now on `table` (a shoe.table.Table). `fields`: the table here; the
    configure command then checks each field it changes (check_fields)."""
    r = rule(kind)
    if r == "dealt":
        return SUPERVISOR if dealt(table) else TABLE
    if r == "deck":
        return SUPERVISOR if _holds(table, body) else TABLE
    if r == "fields":
        return TABLE
    return r if r == TABLE else SUPERVISOR


# clause: rules:3-supervisor-ack
def check(table, kind, body, role):
    """Refuse (CommandError needs_supervisor, nothing changed) a command its role may not send."""
    if not allows(role, need(table, kind, body)):
        if rule(kind) == "dealt":
            refuse("%s after the round's first card" % kind, role)
        if rule(kind) == "deck":
            refuse("%s of a deck the shoe holds" % kind, role)
        refuse(kind, role)


def _value(cfg, k):
    v = cfg.get(k)
    if k == "paytable" and isinstance(v, dict):
        return cfg.get("paytable_sha256")   # an inline table: its digest
    return v


def changed(old, new):
    """The fields of configuration `new` whose value differs from `old` (None: every field),
    and any field of `old` that `new` lacks."""
    if old is None:
        return [k for k in new]
    out = [k for k in new if k not in old or _value(old, k) != _value(new, k)]
    for k in old:
        if k not in new:
            out.append(k)
    return out


def check_fields(role, old, new):
    """Refuse a configuration `new` (normalised) that changes a field `role` may not change
    against the current one `old` (None before the first configure)."""
    bad = [k for k in changed(old, new) if not allows(role, field_role(k))]
    if bad:
        bad.sort()
        refuse("configure: changing %s" % ", ".join(bad), role)
