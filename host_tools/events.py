"""The host's event vocabulary, and an event as it came over the wire turned into the form the
rest of the host uses.

The kinds are the shoe's own names (firmware/shoe/table, app.py, wire.py: never renamed here);
the host code names them through these constants, never as string literals. REVEAL_MISMATCH is
the host's own (host_tools/reveal.py), never sent by a shoe.

Read outcomes (host_tools/diagnose.py): every read attempt is OK, MISREAD, DOUBLE_READ or
NO_READ; `read_outcome(reason)` maps the reason of an `unreadable` event to one of them.

The shoe sends a round result in packed form (`{"round": n, "packed": bytes}`, shoe.games.packing,
to keep a six-seat round inside one frame); everything else arrives as it is. `jsonable` is a
body as JSON holds it (bytes as hex): what the audit store keeps and the reveal check compares.
"""

# ---- event kinds (the shoe's names) ----------------------------------------------------------
HELLO = "hello"
PHASE = "phase"
DECK_CHECK = "deck_check"
DECK_LOADED = "deck_loaded"
ROUND_OPEN = "round_open"
CARD = "card"
DEAL_COMPLETE = "deal_complete"
UNREADABLE = "unreadable"
DOUBLE_READ = "double_read"
REVEAL = "reveal"
STUB = "stub"
ROUND_RESULT = "round_result"
ROUND_VOID = "round_void"
IRREGULARITY = "irregularity"
IRREGULARITY_CLEARED = "irregularity_cleared"
WARNING = "warning"
DECISION_REFUSED = "decision_refused"
REVEAL_MISMATCH = "reveal_mismatch"  # the host's alert (host_tools/reveal.py)

OUTCOMES = (ROUND_RESULT, ROUND_VOID)  # how a round ends: exactly one of them per round

# ---- read outcomes (diagnostics) ---------------------------------------------------------------
OK = "ok"
MISREAD = "misread"
NO_READ = "no_read"
# DOUBLE_READ above is both the shoe's event and the outcome
READ_OUTCOMES = (OK, MISREAD, DOUBLE_READ, NO_READ)
_MISREAD_REASONS = ("code_format",)  # the code came, garbled; any other reason: no read


def read_outcome(reason):
    """The outcome of an `unreadable` event's reason (the shoe's reader reasons: no_read,
    code_format, ...): a code that came garbled is a misread, anything else a no-read."""
    return MISREAD if reason in _MISREAD_REASONS else NO_READ


def decode(kind, body):
    if kind == ROUND_RESULT and isinstance(body, dict) and "packed" in body:
        from host_tools.engine import unpacking

        result = unpacking.unpack(bytes(body["packed"]))
        if isinstance(result.get("deck"), int):
            result["deck"] = "%04X" % result["deck"]  # as the shoe's other events name it
        return kind, result
    return kind, body


def json_default(x):
    """json.dumps' `default` for what the host prints: bytes as hex, anything else as its str."""
    return bytes(x).hex() if isinstance(x, (bytes, bytearray)) else str(x)


def jsonable(x):
    if isinstance(x, (bytes, bytearray)):
        return bytes(x).hex()
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    return x
