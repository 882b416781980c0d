"""The shoe's commands: one table from a command's kind to its handler (as mpremote's).

    reply = run(app, kind, body, now, role)   # a dict: {"ok": True, ...} or ok False + reason
    reply = handler(app, kind, body, now, role)

`App.on_command` calls run(): a kind in HANDLERS is the app's own (status, recall, attest, ...),
any other is the table's (`Table.command`: configure, load_deck, open_round, ...). The commands
and their replies: docs/protocol.md. The link has already checked each command's MAC and says
which key it carries: `role` ("table": the shoe key, "supervisor": the supervisor key). What
each role may do is shoe.roles (one allowlist, docs/roles.md): run() checks the app's kinds,
the table checks its own (their rules may depend on its state).
"""
import gc

from micropython import const

from shoe import VERSION, roles

# a reply's envelope around its body (shoe.link.message.seal): kind, "re", eseq, prev, MAC
_ENVELOPE = const(64)


def run(app, kind, body, now, role):
    """The command `kind` of `role`: refused (needs_supervisor, nothing changed) unless the
    roles allow it."""
    handler = HANDLERS.get(kind)
    if handler is None:
        return table(app, kind, body, now, role)   # the table checks its kinds' roles
    roles.check(app.table, kind, body, role)
    return handler(app, kind, body, now, role)


def status(app, kind=None, body=None, now=None, role=None):
    """The table's status and the shoe's own figures (also the answer to `hello`)."""
    gc.collect()
    t = app.table.command("status", {}, app.clock())
    t.update({"ok": True, "firmware": VERSION, "board": app.hw.board_name,
              "shoe_id": app.cfg["shoe_id"], "provisioned": app.provisioned,
              "firmware_sha256": app.firmware_sha, "mem_free": gc.mem_free(),
              "reads": app.reads, "backlog": len(app.backlog), "faults": app.faults,
              "backlog_dropped": app.dropped, "idle_collections": app.gcpacer.idle_collections,
              "boot": app.journal.boot, "demo": app.cfg.get("demo", False)})
    j = app.journal   # the live chain: the host's audit store must end here (verify)
    t["chain"] = {"eseq": j.eseq, "head": j.chain, "acked": j.outbox_first() - 1}
    fit_latched(app.table, t)
    return t


def fit_latched(table, reply):
    """The reply must fit in one frame, or the host sees no status at all (reply_too_big) and
    cannot acknowledge what is latched. The rest of it (configuration, decks, round, the shoe's
    figures) can leave less than the table's share for the latched entries: they get the room
    the rest leaves (Table.latched_fitting). `latched_count` still says how many there are."""
    from shoe.link import codec
    from shoe.link.frame import MAX_PAYLOAD

    reply["latched"] = []
    reply["latched"] = table.latched_fitting(
        MAX_PAYLOAD - _ENVELOPE - len(codec.encode(reply)))


def ack_error(app, kind, body, now, role):
    """Acknowledge latched errors: the table's `ack` (the supervisor's: shoe.roles)."""
    return app.table.command("ack", body, now, role)


# clause: 684a.11(e)
def recall(app, kind, body, now, role):
    """A kept round result or void, as it was sent (packed); without a round: the kept numbers."""
    journal = app.journal
    want = body.get("round")
    if want is None:
        return {"ok": True, "rounds": journal.round_numbers()}
    rec = journal.round(want)
    if rec is None:
        return {"ok": False, "reason": "unknown_round", "message": "round %r is not kept" % (want,)}
    return {"ok": True, "round": want, "record": [rec[0], rec[1]]}   # (kind, body as sent)


def attest(app, kind, body, now, role):
    """The firmware's hashes under the host's nonce, MACed with the shoe key (shoe.attest)."""
    from shoe import attest as _attest

    nonce = body.get("nonce") if isinstance(body, dict) else None
    if not isinstance(nonce, (bytes, bytearray)) or not 8 <= len(nonce) <= 64:
        return {"ok": False, "reason": "bad_nonce", "message": "nonce must be 8..64 bytes"}
    image = None
    n = body.get("image_bytes")
    if n is not None:   # the frozen image: the host names how much of the flash it built
        src = getattr(app.hw, "image", None)
        if src is None:
            return {"ok": False, "reason": "no_image",
                    "message": "no firmware image in flash to hash on this board"}
        if not isinstance(n, int) or n <= 0 or n % 4096 or n > len(src):
            return {"ok": False, "reason": "bad_image_bytes",
                    "message": "image_bytes must be a multiple of 4096 up to %d" % len(src)}
        image = memoryview(src)[:n]
    ans = _attest.attest(app.cfg["keys"]["shoe"], bytes(nonce), roots(app.hw), image)
    ans["ok"] = True
    return ans


def table(app, kind, body, now, role):
    """Every other kind: the table's command; a configuration may change the reader's policy."""
    reply = app.table.command(kind, body, now, role)
    if kind[:9] == "configure":
        app.reader_policy()
    return reply


def roots(hw):
    """The deployed firmware's directories (what attestation hashes)."""
    return [hw.firmware_root] if hw.firmware_root else []


HANDLERS = {"hello": status, "status": status, "ack_error": ack_error, "recall": recall,
            "attest": attest}
