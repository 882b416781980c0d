"""The virtual board's link recorder (simulator only, never on a board): when the environment
names a file (SHOE_LINK_RECORD), every call the app makes into its link Endpoint is appended to
it as one JSON line, with what it returned; tests/transcripts/ replays them into the shoe end
under CPython (host_tools/transcript.py, format there).

    {"op": "init", "sid", "nonce", "boot", "shoe_id", "options", ...}   at the first call
    {"op": "rx", "t", "hex", "got": [[kind, cbor hex, ctr, role], ...]}
    {"op": "tx", "t", "hex"}                                 a non-empty transmit()
    {"op": "send_many", "msgs": [[kind, cbor hex], ...], "ret": [eseq, ...] | "raised": reason}
    {"op": "send" | "reply" | "error", ...}, {"op": "up", "t", "ret"}, {"op": "nonce", "hex"}

Only the app's own calls are written (a reply the endpoint sends from inside receive() is
replayed by receive()). Bodies travel as their canonical CBOR (shoe.link.codec), exactly.
"""
import json
from binascii import hexlify

from shoe.link import codec
from shoe.link import endpoint as _endpoint

_st = {"f": None, "depth": 0, "t0": None, "ep": None}


def _hex(b):
    return hexlify(bytes(b)).decode()


def _t(now):
    if _st["t0"] is None:
        _st["t0"] = now
    return (now - _st["t0"]) & 0x3FFFFFFF


def _line(d):
    f = _st["f"]
    f.write(json.dumps(d))
    f.write("\n")
    f.flush()


def _first(ep):
    if _st["ep"] is ep:
        return
    _st["ep"] = ep
    _line({"op": "init", "sid": ep.sid, "nonce": _hex(ep.nonce), "shoe_id": ep.shoe_id,
           "boot": getattr(ep.store, "boot", None),
           "supervisor_key": ep.supervisor_key is not None, "room": ep.store.outbox_room(),
           "options": {k: getattr(ep, k) for k in ("window", "rto_ms", "hb_ms", "timeout_ms",
                                                   "stall_ms")}})
    draw = ep._new_nonce

    def logged():
        n = draw()
        _line({"op": "nonce", "hex": _hex(n)})
        return n

    ep._new_nonce = logged


def _wrap(cls, name, record):
    orig = getattr(cls, name)

    def call(self, *args, **kw):
        if _st["depth"]:
            return orig(self, *args, **kw)
        _first(self)
        if name == "send_many":
            args = (list(args[0]),) + args[1:]   # read twice: once here, once by the call
        _st["depth"] += 1
        try:
            ret = orig(self, *args, **kw)
        except Exception as e:
            _st["depth"] -= 1
            d = record(args, kw, None)
            d["raised"] = getattr(e, "reason", None) or repr(e)
            _line(d)
            raise
        _st["depth"] -= 1
        d = record(args, kw, ret)
        if d is not None:
            _line(d)
        return ret

    setattr(cls, name, call)


def _rx(args, kw, ret):
    return {"op": "rx", "t": _t(args[1]), "hex": _hex(args[0]),
            "got": [[k, _hex(codec.encode(b)), c, r] for k, b, c, r in (ret or ())]}


def _tx(args, kw, ret):
    return {"op": "tx", "t": _t(args[0]), "hex": _hex(ret)} if ret else None


def _send_many(args, kw, ret):
    return {"op": "send_many", "msgs": [[k, _hex(codec.encode(b))] for k, b in args[0]],
            "ret": ret}


def _arg(args, kw, i, name, default):
    return args[i] if len(args) > i else kw.get(name, default)


def _send(args, kw, ret):
    return {"op": "send", "kind": args[0], "body": _hex(codec.encode(args[1])),
            "durable": _arg(args, kw, 2, "durable", True), "ret": ret}


def _reply(args, kw, ret):
    body = _arg(args, kw, 1, "body", None)
    return {"op": "reply", "ctr": args[0], "body": _hex(codec.encode(body)),
            "durable": _arg(args, kw, 2, "durable", False), "ret": ret}


def _error(args, kw, ret):
    return {"op": "error", "ctr": args[0], "reason": args[1],
            "detail": _hex(codec.encode(_arg(args, kw, 2, "detail", None))),
            "durable": _arg(args, kw, 3, "durable", False), "ret": ret}


def _up(args, kw, ret):
    return {"op": "up", "t": _t(args[0]), "ret": ret}


def install(path):
    _st["f"] = open(path, "a")
    cls = _endpoint.ShoeEndpoint
    for name, record in (("receive", _rx), ("transmit", _tx), ("send_many", _send_many),
                         ("send", _send), ("reply", _reply), ("error", _error),
                         ("link_up", _up)):
        _wrap(cls, name, record)
