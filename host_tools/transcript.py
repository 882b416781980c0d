"""Record/replay transcripts of the host link end (as Glasgow does for its applets).

A transcript is JSON Lines: a header (firmware and protocol version, key ids, the seeds and the
host nonces used), then one line per call into the host's sans-I/O Endpoint, in the order the
ShoeLink made them (its lock serialises them):

    {"n": 7, "dir": "s2h", "op": "rx", "t": 1234, "hex": "00..", "got": [[kind, body, eseq, meta]]}
    {"n": 8, "dir": "h2s", "op": "tx", "t": 1234, "hex": "00..."}      # a non-empty transmit()
    {"n": 9, "dir": "h2s", "op": "cmd", "kind": "status", "body": {}, "sup": false, "ctr": 3}
    {"n": 10, "op": "up", "t": 1250, "ret": true}                       # link_up()
    {"n": 11, "op": "reneg", "reason": "resync"}                         # renegotiate()
    {"n": 99, "op": "end", "errors": {...}, "delivered": 41, "ctr": 12}

`t` is milliseconds from the first call (the Endpoint only uses differences). `got` is what the
host made of the bytes (decoded events and replies; meta without the payload, which is `hex`).
Bytes in bodies are {"$b": hex}, maps with non-text keys {"$map": [[k, v], ...]} (as the test
vectors of docs/protocol.md). A transmit() that writes nothing changes no state that a later
call can observe (every timer it looks at fires only by sending), so it is not recorded; nor is
the split of the shoe's bytes into chunks that complete no frame (they are joined with the next).

    link.ep = RecordingEndpoint(link.ep)          # after ShoeLink(...): records every call
    write(path, header, link.ep.lines)
    first_difference(path, keys) -> None | "line N (h2s tx, t=...): ..."   # replays the host end
    first_difference_shoe(path, keys)     # a shoe transcript (board/sim/linkrec.py) -> shoe end

The recorder and the committed transcripts are in tests/transcripts/ (record.py says when to
re-record: after an intended protocol change).
"""

import hashlib
import json

from host_tools.link.host import make_endpoint

FORMAT = 1


# ---- values <-> JSON ----------------------------------------------------------------------
def to_json(v):
    if isinstance(v, (bytes, bytearray, memoryview)):
        return {"$b": bytes(v).hex()}
    if isinstance(v, dict):
        if all(isinstance(k, str) and not k.startswith("$") for k in v):
            return {k: to_json(x) for k, x in v.items()}
        return {"$map": [[to_json(k), to_json(x)] for k, x in v.items()]}
    if isinstance(v, (list, tuple)):
        return [to_json(x) for x in v]
    return v


def from_json(v):
    if isinstance(v, dict):
        if set(v) == {"$b"}:
            return bytes.fromhex(v["$b"])
        if set(v) == {"$map"}:
            return {from_json(k): from_json(x) for k, x in v["$map"]}
        return {k: from_json(x) for k, x in v.items()}
    if isinstance(v, list):
        return [from_json(x) for x in v]
    return v


def _got(msgs):
    out = []
    for kind, body, ref, meta in msgs:
        if meta is not None:
            meta = {k: x for k, x in meta.items() if k != "payload"}
        out.append(to_json([kind, body, ref, meta]))
    return out


def key_id(key):
    """A key's public name in a transcript: SHA-256(key)[:4], hex."""
    return hashlib.sha256(bytes(key)).hexdigest()[:8] if key else None


class SeededNonces:
    """A nonce source for the Endpoint (`nonce_source`): 8 bytes per call from SHA-256(seed, i),
    and the list of those it gave (`given`, for the header)."""

    def __init__(self, seed):
        self.seed = seed
        self.given = []

    def __call__(self):
        n = hashlib.sha256(b"transcript-nonce:%d:%d" % (self.seed, len(self.given))).digest()[:8]
        self.given.append(n)
        return n


# ---- recording ----------------------------------------------------------------------------
class RecordingEndpoint:
    """Wraps a host Endpoint and records every call that can change it, with its result."""

    def __init__(self, ep):
        self.__dict__["_ep"] = ep
        self.__dict__["lines"] = []
        self.__dict__["_t0"] = None

    def __getattr__(self, name):
        return getattr(self._ep, name)

    def __setattr__(self, name, value):
        setattr(self._ep, name, value)

    def _t(self, now_ms):
        if self._t0 is None:
            self.__dict__["_t0"] = now_ms
        return now_ms - self._t0

    def _add(self, d):
        d = dict({"n": len(self.lines) + 1}, **d)
        self.lines.append(d)

    def receive(self, data, now_ms):
        msgs = self._ep.receive(data, now_ms)
        data = bytes(data)
        last = self.lines[-1] if self.lines else None
        if last is not None and last["op"] == "rx" and 0 not in bytes.fromhex(last["hex"]):
            # the previous chunk completed no frame (no delimiter): the deframer only buffered
            # it, so receiving both at once now leaves the Endpoint exactly as it is
            last["hex"] += data.hex()
            last["t"] = self._t(now_ms)
            last["got"] = _got(msgs)
            return msgs
        self._add(
            {"dir": "s2h", "op": "rx", "t": self._t(now_ms), "hex": data.hex(), "got": _got(msgs)}
        )
        return msgs

    def transmit(self, now_ms):
        out = self._ep.transmit(now_ms)
        t = self._t(now_ms)
        if out:
            self._add({"dir": "h2s", "op": "tx", "t": t, "hex": bytes(out).hex()})
        return out

    def command(self, kind, body, key=None):
        ctr = self._ep.command(kind, body, key)
        self._add(
            {
                "dir": "h2s",
                "op": "cmd",
                "kind": kind,
                "body": to_json(body),
                "sup": key is not None and key != self._ep.key,
                "ctr": ctr,
            }
        )
        return ctr

    def link_up(self, now_ms):
        ret = self._ep.link_up(now_ms)
        self._add({"op": "up", "t": self._t(now_ms), "ret": ret})
        return ret

    def renegotiate(self, reason="renegotiate"):
        self._ep.renegotiate(reason)
        self._add({"op": "reneg", "reason": reason})

    def end_line(self):
        ep = self._ep
        return {
            "n": len(self.lines) + 1,
            "op": "end",
            "errors": dict(sorted(ep.errors().items())),
            "delivered": ep.delivered,
            "ctr": ep.ctr,
        }


def write(path, header, lines):
    with open(path, "w") as f:
        for d in [header] + list(lines):
            f.write(json.dumps(d, separators=(",", ":")) + "\n")


def read(path):
    with open(path) as f:
        rows = [json.loads(s) for s in f if s.strip()]
    if not rows or rows[0].get("op") != "header":
        raise ValueError("%s: no header line" % path)
    return rows[0], rows[1:]


# ---- replaying ----------------------------------------------------------------------------
class _GivenNonces:
    def __init__(self, given):
        self.given = [bytes.fromhex(h) for h in given]
        self.i = 0

    def __call__(self):
        if self.i >= len(self.given):
            raise AssertionError(
                "the host asked for nonce %d; the transcript recorded %d"
                % (self.i + 1, len(self.given))
            )
        self.i += 1
        return self.given[self.i - 1]


def host_endpoint(header, keys):
    """The host Endpoint as the recorded ShoeLink built it (options, sid, nonces)."""
    h = header["host"]
    return make_endpoint(
        "host",
        keys["shoe"],
        on_peer=lambda hello: h.get("on_peer"),
        ctr_seen={},
        sid=h["sid"],
        nonce_source=_GivenNonces(h["nonces"]),
        **h["options"],
    )


def _first_byte(a, b):
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return min(len(a), len(b))


def _where(row):
    w = "line %d (%s %s" % (row["n"] + 1, row.get("dir", "-"), row["op"])  # +1: the header
    if "t" in row:
        w += ", t=%d ms" % row["t"]
    return w + ")"


def first_difference(path, keys):
    """Replay a transcript through a fresh host Endpoint; None if the host did exactly what was
    recorded, else a message naming the first differing line."""
    header, rows = read(path)
    ep = host_endpoint(header, keys)
    sup = keys.get("supervisor")
    for row in rows:
        op = row["op"]
        try:
            if op == "rx":
                got = _got(ep.receive(bytes.fromhex(row["hex"]), row["t"]))
                if got != row["got"]:
                    return "%s: the host made %s of the shoe's bytes; the transcript has %s" % (
                        _where(row),
                        json.dumps(got)[:600],
                        json.dumps(row["got"])[:600],
                    )
            elif op == "tx":
                out = bytes(ep.transmit(row["t"])).hex()
                if out != row["hex"]:
                    i = _first_byte(out, row["hex"]) // 2
                    return (
                        "%s: the host wrote %s; the transcript has %s (first difference at "
                        "byte %d)" % (_where(row), out or "nothing", row["hex"], i)
                    )
            elif op == "cmd":
                ctr = ep.command(row["kind"], from_json(row["body"]), sup if row["sup"] else None)
                if ctr != row["ctr"]:
                    return "%s: command %s got counter %s; the transcript has %s" % (
                        _where(row),
                        row["kind"],
                        ctr,
                        row["ctr"],
                    )
            elif op == "up":
                ret = ep.link_up(row["t"])
                if ret != row["ret"]:
                    return "%s: link_up() is %s; the transcript has %s" % (
                        _where(row),
                        ret,
                        row["ret"],
                    )
            elif op == "reneg":
                ep.renegotiate(row["reason"])
            elif op == "end":
                end = {
                    "errors": dict(sorted(ep.errors().items())),
                    "delivered": ep.delivered,
                    "ctr": ep.ctr,
                }
                want = {k: row[k] for k in end}
                if end != want:
                    return "%s: the host's counters are %s; the transcript has %s" % (
                        _where(row),
                        json.dumps(end),
                        json.dumps(want),
                    )
            else:
                return "%s: unknown op %r" % (_where(row), op)
        except AssertionError as e:
            return "%s: %s" % (_where(row), e)
    return None


# ---- the shoe end -------------------------------------------------------------------------
# A shoe transcript is the virtual board's own log of the app's calls into its Endpoint
# (board/sim/linkrec.py: bodies as canonical CBOR hex), under a header like the host's with the
# Endpoint's options, its first nonce and the ones it drew after. Replayed under CPython into a
# fresh ShoeEndpoint over a MemoryStore (the journal's part the Endpoint sees), it must write
# exactly the recorded bytes and deliver exactly the recorded commands.


def join_chunks(rows):
    """Join each rx line that completes no frame (no delimiter, nothing delivered) with the
    next rx line, when nothing else came between (as RecordingEndpoint does as it goes)."""
    out = []
    for r in rows:
        last = out[-1] if out else None
        if (
            r["op"] == "rx"
            and last is not None
            and last["op"] == "rx"
            and 0 not in bytes.fromhex(last["hex"])
            and not last["got"]
        ):
            last["hex"] += r["hex"]
            last["t"] = r["t"]
            last["got"] = r["got"]
        else:
            out.append(dict(r))
    for i, r in enumerate(out):
        r["n"] = i + 1
    return out


def shoe_endpoint(header, keys):
    from host_tools.sim.memstore import MemoryStore

    store = MemoryStore(limit=header["outbox_limit"])
    store.boot = header["boot"]
    sup = keys.get("supervisor") if header.get("supervisor_key_id") else None
    return make_endpoint(
        "shoe",
        keys["shoe"],
        store=store,
        shoe_id=header["shoe_id"],
        supervisor_key=sup,
        sid=header["sid"],
        nonce=bytes.fromhex(header["nonce"]),
        nonce_source=_GivenNonces(header["nonces"]),
        **header["options"],
    )


def _cbor(h):
    from shoe.link import codec

    return codec.decode(bytes.fromhex(h))


def _shoe_call(ep, row):
    """-> (what the shoe end returned or raised, as recorded) for one app call."""
    from shoe.link import codec

    op = row["op"]
    if op == "rx":
        got = ep.receive(bytes.fromhex(row["hex"]), row["t"])
        return "got", [[k, codec.encode(b).hex(), c, r] for k, b, c, r in got]
    if op == "tx":
        return "hex", bytes(ep.transmit(row["t"])).hex()
    if op == "up":
        return "ret", ep.link_up(row["t"])
    if op == "send_many":
        return "ret", ep.send_many([(k, _cbor(b)) for k, b in row["msgs"]])
    if op == "send":
        return "ret", ep.send(row["kind"], _cbor(row["body"]), row["durable"])
    if op == "reply":
        return "ret", ep.reply(row["ctr"], _cbor(row["body"]), row["durable"])
    if op == "error":
        return "ret", ep.error(row["ctr"], row["reason"], _cbor(row["detail"]), row["durable"])
    raise AssertionError("unknown op %r" % op)


def first_difference_shoe(path, keys):
    """Replay a shoe transcript through a fresh shoe Endpoint; None, or the first difference."""
    header, rows = read(path)
    ep = shoe_endpoint(header, keys)
    for row in rows:
        if row["op"] == "end":
            errors = dict(sorted(ep.errors().items()))
            if errors != row["errors"]:
                return "%s: the shoe's counters are %s; the transcript has %s" % (
                    _where(row),
                    json.dumps(errors),
                    json.dumps(row["errors"]),
                )
            continue
        try:
            field, value = _shoe_call(ep, row)
        except AssertionError as e:
            return "%s: %s" % (_where(row), e)
        except Exception as e:  # noqa: BLE001 - compared with what the recording raised
            raised = getattr(e, "reason", None) or repr(e)
            if row.get("raised") != raised:
                return "%s: the shoe end raised %s; the transcript has %s" % (
                    _where(row),
                    raised,
                    row.get("raised", "no exception"),
                )
            continue
        if "raised" in row:
            return "%s: the shoe end returned %s; the transcript has it raise %s" % (
                _where(row),
                json.dumps(value)[:200],
                row["raised"],
            )
        want = row[field]
        if field == "ret" and isinstance(value, tuple):
            value = list(value)
        if value != want:
            extra = ""
            if field == "hex":
                extra = " (first difference at byte %d)" % (_first_byte(value, want) // 2)
            return "%s: the shoe end gave %s; the transcript has %s%s" % (
                _where(row),
                json.dumps(value)[:600],
                json.dumps(want)[:600],
                extra,
            )
    return None
