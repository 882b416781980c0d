"""Run firmware under the MicroPython unix port from pytest and bring results back.

    out = run_mpy("tests/firmware/check_cards.py")          # a script file
    out = run_code("from shoe import cards; print(cards.parse('As'))")
    objs = json_lines(out)                                    # lines that are JSON
    res = run_checks("tests/firmware/drivers/check_io.py")    # a script of checks (mpycheck.run)
    res.assert_ok("watchdog"); res.data["watchdog"]           # one check's result and its data

A non-zero exit (an uncaught exception, a failed assert in the script) fails the calling test
with MicroPython's stderr in the message. Scripts run with MICROPYPATH = host_tools/link (the host
end: `import host`), host_tools/sim (MemoryStore: `import memstore`), tests/fakes (the fake
`machine`),
firmware/, .frozen, at the device heap (SHOE_HEAP, default 64k).
"""

import json
import subprocess
import tempfile
from pathlib import Path

from host_tools import runtime

ROOT = runtime.ROOT
FAKES = ROOT / "tests" / "fakes"  # the fake `machine`, `rp2`, flash and MFRC522 (never shipped)
SIM = ROOT / "host_tools" / "sim"  # MemoryStore (`import memstore`)


def run_mpy(
    script, *, heap=None, extra_path=(), stdin=None, timeout=300, fakes=True, check=True, args=()
):
    cmd = runtime.command([script, *args], heap)
    env = runtime.environment(*extra_path, runtime.HOST_LINK, SIM, *([FAKES] if fakes else []))
    proc = subprocess.run(
        cmd, input=stdin, capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT
    )
    if check and proc.returncode != 0:
        raise AssertionError(
            "MicroPython exited %d running %s\n--- stdout\n%s\n--- stderr\n%s"
            % (proc.returncode, script, proc.stdout[-4000:], proc.stderr[-4000:])
        )
    return proc.stdout


def run_code(code, **kw):
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(code)
        path = f.name
    try:
        return run_mpy(path, **kw)
    finally:
        Path(path).unlink()


def json_lines(text):
    """The lines of `text` that are JSON values (objects or lists); log lines are skipped."""
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{") or line.startswith("["):
            try:
                out.append(json.loads(line))
            except ValueError:
                continue  # e.g. the app's "[shoe] ..." log lines
    return out


MPYLIB = ROOT / "tests" / "mpylib"


class Checks:
    """What a script of checks (tests/mpylib/mpycheck.py run()) reported, one entry per check:
    `names` in the order they ran, `data[name]` the check's own JSON line ({"check": name ...})."""

    def __init__(self, script, out):
        self.script, self.lines = script, json_lines(out)
        self.results = {d["ran"]: d for d in self.lines if isinstance(d, dict) and "ran" in d}
        self.names = [d["ran"] for d in self.lines if isinstance(d, dict) and "ran" in d]
        self.data = {d["check"]: d for d in self.lines if isinstance(d, dict) and "check" in d}
        done = [d["done"] for d in self.lines if isinstance(d, dict) and "done" in d]
        self.done = done[-1] if done else None

    def assert_ok(self, name):
        r = self.results.get(name)
        if r is None:
            raise AssertionError(
                "check %r did not run in %s (ran: %s)" % (name, self.script, ", ".join(self.names))
            )
        if not r["ok"]:
            raise AssertionError(
                "MicroPython check %r of %s failed:\n%s" % (name, self.script, r["error"])
            )


def run_checks(script, *, extra_path=(), **kw):
    """Run a script whose checks go through mpycheck.run(): one process for all of them, every
    check run whatever the others did. A crash of the script itself fails the caller."""
    return Checks(script, run_mpy(script, extra_path=(*extra_path, MPYLIB), **kw))
