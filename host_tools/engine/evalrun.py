"""`shoectl eval` on the device side: JSON Lines in on stdin, one result line out per line.

    MICROPYPATH=host_tools/engine:firmware micropython -X heapsize=64k -m evalrun  < rounds.jsonl

Not firmware (no board runs it): the MicroPython unix port runs it for `shoectl eval --runtime
micropython`, CPython imports it as host_tools.engine.evalrun; it imports only the firmware.

One persistent process serves a whole stream. For every input line exactly one output line is
written, in order: the round_result (shoe.games.jsonout text), or
{"type": "error", "line": N, "message": ..., "reason": ...}; a blank input line gives a blank
output line (the host drops it). Lines count from 1. The host runs the same `handle()` under
CPython for `--runtime cpython`, so both give the same bytes.

Small-heap measures (the device heap is 64k): each line is parsed straight from stdin with
json.load through `_Line` (the line text is never held as one string), an inline pay table is
validated and its document dropped first, and the result is written seat by seat as the engine
settles it (`_Streamer`), so no whole round_result is held either. When the game changes, the
other game's modules are dropped and the new game's loaded before the round is looked at (an
import half-way through validation needs a contiguous block a fragmented heap may not have). If
the heap still runs out before any output, the round is tried again after a collection, then once
more with every game module and cached preset dropped.
"""

import gc
import io
import json
import sys

from shoe import forget
from shoe.games import engine, paytable
from shoe.games.jsonout import dump, sort_key, write_str
from shoe.games.vocab import FCF, HCF

_GAME_MODULES = {FCF: ("fcfround", "fcf", "allsix"), HCF: ("hcfround", "hcf")}


def _error(lineno, message, reason):
    return {"type": "error", "line": lineno, "message": message, "reason": reason}


def _unload(keep=None):
    """Free RAM: drop the modules of the game not being played (re-imported when needed
    again) and the cached preset tables."""
    paytable.clear_cache()
    engine.forget_modules()  # the engine keeps the last game's modules
    for game in _GAME_MODULES:
        if game == keep:
            continue
        for m in _GAME_MODULES[game]:
            forget("shoe.games." + m)
    gc.collect()


# The host may send an inline pay table once ahead of the rounds that use it:
#   {"$define": TOKEN, "game": GAME, "doc": {...}}      (no output line, not counted)
# and then those rounds carry "paytable": {"$ref": TOKEN}. TOKEN is the session token the host
# passed as argv[1] plus a counter, so no input line can pose as a directive. The device keeps
# the one last definition, validated as load(doc, game): the Table, or the error it gave.
_defined = [None, None]  # token, Table or PaytableError


def _define(obj):
    _defined[0] = _defined[1] = None
    gc.collect()
    try:
        t = paytable.load(obj["doc"], obj["game"])
    except paytable.PaytableError as e:
        t = e
    except MemoryError:
        t = MemoryError  # rounds that use this table report "out of memory"
    _defined[0] = obj["$define"]
    _defined[1] = t


def _settle(obj, lineno, emit):
    try:
        pt = obj.get("paytable") if isinstance(obj, dict) else None
        if (
            isinstance(pt, dict)
            and len(pt) == 1
            and pt.get("$ref") is not None
            and pt.get("$ref") == _defined[0]
        ):
            t = _defined[1]
            if t is MemoryError:
                raise MemoryError
            if isinstance(t, paytable.PaytableError):
                raise t
            obj["paytable"] = t
        elif isinstance(obj, dict) and isinstance(obj.get("paytable"), dict):
            # validate an inline pay table first so that its document can be freed
            obj["paytable"] = paytable.load(obj["paytable"], obj.get("game"))
            if _SMALL:
                gc.collect()
        return engine.evaluate_round(obj, emit)
    except (engine.EngineError, paytable.PaytableError) as e:
        return _error(lineno, str(e), e.reason)


_playing = [None]
_SMALL = sys.implementation.name == "micropython"


def settle(obj, lineno, emit=None):
    """A parsed round -> the result object (round_result or error); never raises."""
    game = obj.get("game") if isinstance(obj, dict) else None
    if isinstance(game, str) and game != _playing[0] and game in _GAME_MODULES:
        if _playing[0] is not None and _SMALL:
            _unload(game)  # one game's modules at a time on a small heap
            try:  # load the new game's now, on a collected heap, not half-way through a round
                engine.module(game)
                engine.module(game, True)
            except MemoryError:
                _unload()
        _playing[0] = game
    for attempt in (0, 1, 2):
        try:
            return _settle(obj, lineno, emit)
        except MemoryError:
            if emit is not None and emit(None):
                break  # part of the line is out already: it cannot be taken back
            if attempt:
                _unload()  # drop every game module and cached table, then try again
            else:
                gc.collect()  # first the failed attempt's own garbage
        except Exception as e:  # a bug: report it on this line and keep serving the stream
            return _error(lineno, "internal error (%s)" % type(e).__name__, "internal")
    return _error(lineno, "out of memory evaluating this round", "memory")


def handle(line, lineno):
    """One input line (str) -> one output line (str, no newline; "" for a blank line)."""
    text = line.strip()
    if not text:
        return ""
    try:
        obj = json.loads(text)
    except Exception:  # ValueError, and RecursionError for absurd nesting on CPython
        r = _error(lineno, "not valid JSON", "json")
    else:
        r = settle(obj, lineno)
    out = []
    dump(r, out.append)
    return "".join(out)


class _Line(io.IOBase):
    """One line of a byte stream as a stream of its own (for json.load), a byte at a time so
    that nothing past the newline is consumed."""

    def __init__(self, src):
        self.src = src
        self.byte = bytearray(1)
        self.start()

    def start(self):
        self.done = False  # newline or end of input reached
        self.eof = False  # end of input reached
        self.seen = False  # a non-blank byte was read
        self.any = False  # any byte was read

    def readinto(self, buf):
        if self.done:
            return 0
        if not self.src.readinto(self.byte):
            self.done = self.eof = True
            return 0
        self.any = True
        c = self.byte[0]
        if c == 10:
            self.done = True
            return 0
        if c != 32 and c != 13 and c != 9:
            self.seen = True
        buf[0] = c
        return 1

    def ioctl(self, req, arg):
        return 0

    def drain(self):
        while not self.done:
            self.readinto(self.byte)


class _Streamer:
    """Writes a round_result seat by seat as the engine settles it (low peak RAM)."""

    def __init__(self, write):
        self.write = write
        self.started = False
        self.first = True

    def __call__(self, part):
        w = self.write
        if part is None:  # asked after a failure: has anything been written?
            return self.started
        if isinstance(part, dict):
            self.started = True
            w("{")
            for k in sorted(part, key=sort_key):
                if k != "seats":
                    write_str(k, w)
                    w(": ")
                    dump(part[k], w)
                    w(", ")
            w('"seats": {')
        else:
            if not self.first:
                w(", ")
            self.first = False
            write_str(part[0], w)
            w(": ")
            dump(part[1], w)


def main():
    # argv[1], if given, is the host's session token for pay table directives
    token = sys.argv[1] if len(sys.argv) > 1 and len(sys.argv[1]) >= 16 else None
    line = _Line(sys.stdin.buffer)
    write = sys.stdout.write
    lineno = 0
    while True:
        gc.collect()
        line.start()
        obj = r = None
        try:
            obj = json.load(line)
        except ValueError:
            r = "json"
        except MemoryError:
            r = "memory"
        line.drain()
        if line.eof and not line.any:
            break
        lineno += 1
        if not line.seen:
            r = None
        elif r == "json":
            r = _error(lineno, "not valid JSON", "json")
        elif r == "memory":
            obj = None
            _unload()
            r = _error(lineno, "out of memory reading this round", "memory")
        elif (
            token is not None
            and isinstance(obj, dict)
            and isinstance(obj.get("$define"), str)
            and obj["$define"].startswith(token)
        ):
            lineno -= 1  # a host directive, not an input line: no output
            _define(obj)
            obj = None
            continue
        else:
            emit = None
            try:
                emit = _Streamer(write)
                r = settle(obj, lineno, emit)
            except MemoryError:  # (settle itself never raises; this is the Streamer)
                r = _error(lineno, "out of memory evaluating this round", "memory")
            obj = None
            if emit is not None and emit.started:
                # out of memory half way: the line is marked broken (the host reports it)
                write('}, "incomplete": true}' if r.get("type") == "error" else "}}")
                r = None
        if r is not None:
            try:
                dump(r, write)
            except MemoryError:
                write(
                    '{"type": "error", "line": %d, "message": "out of memory", '
                    '"reason": "memory"}' % lineno
                )
        r = None
        write("\n")
        if line.eof:
            break


if __name__ == "__main__":
    main()
