"""Settle dealt rounds with the firmware's own engine, on MicroPython or in CPython.

    with Evaluator("micropython") as ev:          # or "cpython"
        for out in ev.results(lines):             # lines: iterable of str (JSON Lines input)
            print(out)                            # one round_result / error line per round

`micropython` runs one persistent MicroPython unix process (SHOE_MICROPYTHON, -X heapsize =
SHOE_HEAP with the engine's code inside: host_tools/runtime.py) with `-m evalrun`
(host_tools/engine/evalrun.py, this folder on MICROPYPATH) for the whole stream; input is written
from a thread while results are read, so thousands of rounds stream without a restart. The firmware
package is compiled with mpy-cross (host_tools/build.py) into build/mpy-engine first (as for a
board: compiling .py on a 64k heap needs more RAM than the engine itself) and falls back to the .py
sources if that is not possible. `cpython` calls the same `host_tools.engine.evalrun.handle()` in
this process. Both produce the same bytes for the same input.

Blank input lines produce no output but still count for line numbers. Two decisions are taken
here, once, for both runtimes (so that they cannot differ): lines longer than MAX_LINE bytes,
and lines that CPython's strict JSON parser refuses, get their error line from the host (the
device still receives a blank line to keep its count). For the device's small heap an inline
pay table is sent once as a directive line and later rounds refer to it (see `_hoist` and
evalrun); a line the device could only half write for lack of RAM is reported as
an "out of memory" error line.
"""

import json
import secrets
import subprocess
import tempfile
import threading
from pathlib import Path

from host_tools import runtime
from host_tools.errors import ShoeError

RUNTIMES = ("micropython", "cpython")
MAX_LINE = 16384
CACHE = runtime.ROOT / "build" / "mpy-engine"
_SOURCES = ("shoe/__init__.py", "shoe/cards.py", "shoe/errors.py", "shoe/games")


def _too_long(lineno, n):
    from shoe.games.jsonout import dumps

    return dumps(
        {
            "type": "error",
            "line": lineno,
            "message": "line too long (%d bytes, limit %d)" % (n, MAX_LINE),
            "reason": "too_long",
        }
    )


def _no_constant(name):
    raise ValueError("JSON has no %s" % name)


def _failed(lineno, message, reason):
    from shoe.games.jsonout import dumps

    return dumps({"type": "error", "line": lineno, "message": message, "reason": reason})


def compiled_firmware(sources=None, out=CACHE):
    """The engine's modules compiled by host_tools/build.py (the board's flags, plus no source
    lines: the .mpy must fit the 64 KB heap beside a pay table) into build/mpy-engine, cached;
    None if that is not possible. `sources`: another copy of firmware/ to compile (the frozen
    image's, host_tools/flashnative.py), into `out`."""
    from host_tools import build

    root = Path(sources) if sources is not None else runtime.FIRMWARE
    pairs = []
    for rel in _SOURCES:
        p = root / rel
        for src in sorted(p.glob("*.py")) if p.is_dir() else [p]:
            pairs.append((src, src.relative_to(root).as_posix()))
    pairs.append((runtime.HOST_ENGINE / "evalrun.py", "evalrun.py"))  # found before the .py
    try:
        return build.compile_files(pairs, out, extra=("-X", "no-source-lines"))
    except (ShoeError, OSError):
        return None


class Evaluator:
    """One evaluation runtime for a stream of rounds; use as a context manager."""

    def __init__(self, runtime_name="micropython", heap=None, firmware=None):
        """firmware: a directory of compiled modules to run instead of compiled_firmware()'s."""
        if runtime_name not in RUNTIMES:
            raise ShoeError("unknown runtime %r (micropython or cpython)" % runtime_name)
        self.runtime = runtime_name
        self.heap = heap
        self.firmware = firmware
        self.proc = None
        self._stderr = None

    def __enter__(self):
        if self.runtime == "micropython":
            self._start()
        return self

    def __exit__(self, *exc):
        self.close()

    def _start(self):
        if self.firmware is not None:  # that build or nothing (no fallback to the sources)
            if not self._probe(self.firmware):
                raise ShoeError("the engine does not import from %s" % self.firmware)
            extra = [self.firmware]
        else:
            cache = compiled_firmware()
            extra = [cache] if cache is not None and self._probe(cache) else []
        self._stderr = tempfile.TemporaryFile()
        self._token = "pt" + secrets.token_hex(8)
        self._count = 0
        self._last_doc = None
        self.proc = subprocess.Popen(
            runtime.command(["-m", "evalrun", self._token], self.heap),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=runtime.environment(*extra, runtime.HOST_ENGINE),
            cwd=runtime.ROOT,
        )

    def _probe(self, cache):
        try:
            proc = subprocess.run(
                runtime.command(["-c", "import evalrun"], self.heap),
                env=runtime.environment(cache, runtime.HOST_ENGINE),
                cwd=runtime.ROOT,
                capture_output=True,
                timeout=30,
            )
        except (OSError, subprocess.TimeoutExpired):
            return False
        return proc.returncode == 0

    def close(self):
        if self.proc is not None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc.stdout.close()
            self.proc = None
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    def _died(self):
        code = self.proc.poll()
        self._stderr.seek(0)
        tail = self._stderr.read().decode("utf-8", "replace").strip().splitlines()[-3:]
        return ShoeError(
            "the MicroPython engine stopped (exit %s): %s"
            % (code, " | ".join(tail) or "no message")
        )

    def results(self, lines):
        """Input lines (str, newline optional) -> output lines (str, no newline), in order."""
        if self.runtime == "cpython":
            yield from self._cpython(lines)
        else:
            yield from self._micropython(lines)

    @staticmethod
    def _prepare(lines):
        """(lineno, line, refused) per input line. What is valid JSON is decided here, once,
        by CPython's strict parser (no NaN/Infinity, no trailing commas) for both runtimes:
        MicroPython's own parser is more lenient, which would make the outputs differ."""
        for lineno, line in enumerate(lines, 1):
            line = line.rstrip("\r\n")
            n = len(line.encode("utf-8", "replace"))
            refused = None
            if n > MAX_LINE:
                refused = _too_long(lineno, n)
            elif line.strip():
                try:
                    json.loads(line, parse_constant=_no_constant)
                except (ValueError, RecursionError):
                    refused = _failed(lineno, "not valid JSON", "json")
            yield lineno, line, refused

    def _cpython(self, lines):
        from host_tools.engine import evalrun

        for lineno, line, refused in self._prepare(lines):
            out = refused if refused is not None else evalrun.handle(line, lineno)
            if out:
                yield out

    def _hoist(self, line):
        """Send an inline pay table once (a directive line) and refer to it afterwards: the
        device then neither parses nor validates the same document on every line (RAM)."""
        if '"paytable"' not in line:
            return line
        try:
            obj = json.loads(line)
            if not (
                isinstance(obj, dict)
                and isinstance(obj.get("paytable"), dict)
                and isinstance(obj.get("game"), str)
            ):
                return line
            doc = json.dumps([obj["game"], obj["paytable"]], allow_nan=False)
            pre = ""
            if doc != self._last_doc:
                self._count += 1
                self._last_doc = doc
                pre = (
                    json.dumps(
                        {
                            "$define": "%s-%d" % (self._token, self._count),
                            "game": obj["game"],
                            "doc": obj["paytable"],
                        },
                        allow_nan=False,
                    )
                    + "\n"
                )
            obj["paytable"] = {"$ref": "%s-%d" % (self._token, self._count)}
            return pre + json.dumps(obj, allow_nan=False)
        except ValueError:
            return line

    def _micropython(self, lines):
        if self.proc is None:
            self._start()
        proc = self.proc
        # what the reader must do for each input line, in order: None = read one device line
        plan = []
        cond = threading.Condition()
        done = []
        failure = []

        def writer():
            try:
                for _lineno, line, refused in self._prepare(lines):
                    with cond:
                        plan.append(refused)
                        cond.notify()
                    # the device still counts the line: send a blank line in its place
                    data = (self._hoist(line) if refused is None else "").encode(
                        "utf-8", "replace"
                    )
                    proc.stdin.write(data + b"\n")
                proc.stdin.flush()
            except (BrokenPipeError, OSError):
                pass
            except BaseException as e:  # input decoding and the like: report in the reader
                failure.append(e)
            finally:
                with cond:
                    done.append(True)
                    cond.notify()

        t = threading.Thread(target=writer, daemon=True)
        t.start()
        i = 0
        while True:
            with cond:
                while i >= len(plan) and not done:
                    cond.wait()
                if i >= len(plan):
                    break
                refused = plan[i]
            i += 1
            raw = proc.stdout.readline()
            if not raw.endswith(b"\n"):
                raise self._died()
            out = raw[:-1].decode("utf-8", "replace")
            if refused is not None:
                out = refused
            elif out.endswith(', "incomplete": true}'):  # ran out of RAM half way
                out = _failed(i, "out of memory evaluating this round", "memory")
            if out:
                yield out
        t.join()
        if failure:
            raise failure[0]
