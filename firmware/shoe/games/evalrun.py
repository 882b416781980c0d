"""`shoectl eval` on the device side: JSON Lines in on stdin, one result line out per line.

    micropython -X heapsize=64k -m shoe.games.evalrun  < rounds.jsonl

One persistent process serves a whole stream. For every input line exactly one output line is
written, in order: the round_result (shoe.games.jsonout text), or
{"type": "error", "line": N, "message": ..., "reason": ...}; a blank input line gives a blank
output line (the host drops it). Lines count from 1. The host runs the same `handle()` under
CPython for `--runtime cpython`, so both give the same bytes.
"""
import gc
import json
import sys

from shoe.games import engine
from shoe.games.jsonout import dump


def _error(lineno, message, reason):
    return {"type": "error", "line": lineno, "message": message, "reason": reason}


def result(line, lineno):
    """One input line (str) -> the result object (None for a blank line)."""
    text = line.strip()
    if not text:
        return None
    try:
        obj = json.loads(text)
    except Exception:
        return _error(lineno, "not valid JSON", "json")
    text = line = None
    try:
        return engine.evaluate_round(obj)
    except engine.EngineError as e:
        return _error(lineno, str(e), e.reason)
    except MemoryError:
        obj = None
        gc.collect()
        return _error(lineno, "out of memory evaluating this round", "memory")
    except Exception as e:  # a bug: report it on this line and keep serving the stream
        return _error(lineno, "internal error (%s)" % type(e).__name__, "internal")


def handle(line, lineno):
    """One input line (str) -> one output line (str, no newline; "" for a blank line)."""
    r = result(line, lineno)
    if r is None:
        return ""
    out = []
    dump(r, out.append)
    return "".join(out)


def main():
    lineno = 0
    read = sys.stdin.readline
    write = sys.stdout.write
    while True:
        line = read()
        if not line:
            break
        lineno += 1
        r = result(line, lineno)
        line = None
        if r is not None:
            dump(r, write)
        r = None
        write("\n")
        gc.collect()


if __name__ == "__main__":
    main()
