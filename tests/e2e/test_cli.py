"""The command line as a technician uses it: `shoectl sim` in one terminal, `shoectl world` and
`shoectl monitor` in others; clean shutdown; one-line errors for bad input."""

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from host_tools.sim.provision_sim import shoe_id_of

SHOECTL = [sys.executable, "-m", "host_tools"]
ROOT = Path(__file__).resolve().parent.parent.parent


def shoectl(*args, timeout=60, **kw):
    return subprocess.run(
        SHOECTL + list(args), capture_output=True, text=True, timeout=timeout, cwd=ROOT, **kw
    )


def read_until(proc, pattern, timeout=20):
    deadline = time.monotonic() + timeout
    lines = []
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line)
        m = re.search(pattern, line)
        if m:
            return m, lines
    raise AssertionError("no %r in %r" % (pattern, lines))


def pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_sim_world_and_monitor_in_separate_processes(tmp_path):
    sim = subprocess.Popen(
        SHOECTL + ["sim", "--state", str(tmp_path / "flash")],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        m, _ = read_until(sim, r"pid (\d+)")
        board_pid = int(m.group(1))
        host, _ = read_until(sim, r"host UART:\s+(socket://\S+)")
        reader, _ = read_until(sim, r"reader UART:\s+(socket://\S+)")
        mon = subprocess.Popen(
            SHOECTL
            + [
                "monitor",
                "--port",
                host.group(1),
                "--demo-keys",
                "--json",
                "--no-store",
                "--count",
                "4",
                "--seconds",
                "30",
            ],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        time.sleep(0.5)  # let the monitor connect first (its events wait for it anyway)
        w = shoectl("world", "--reader", reader.group(1), "--cards", "2", "--pace", "0.4")
        assert w.returncode == 0, w.stderr
        out, err = mon.communicate(timeout=40)
        assert mon.returncode == 0, err
        events = [json.loads(line) for line in out.splitlines()]
        kinds = [e["event"] for e in events]
        assert kinds[0] == "hello" and events[0]["shoe_id"] == shoe_id_of(tmp_path / "flash")
        # cards outside any round are latched irregularities, reported with their reason
        assert any(
            e["event"] == "irregularity" and e["reason"] == "card_out_of_round" for e in events
        ), kinds
        sim.send_signal(signal.SIGTERM)
        rest, _ = sim.communicate(timeout=20)
        assert sim.returncode == 0
        assert "virtual board stopped" in rest
        assert not pid_alive(board_pid)
    finally:
        if sim.poll() is None:
            sim.kill()


def test_bad_input_gives_one_line_and_nonzero_exit(tmp_path):
    r = shoectl("sim", "--bogus")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    r = shoectl(
        "monitor", "--port", "socket://127.0.0.1:1", "--demo-keys", "--no-store", "--timeout", "2"
    )
    assert r.returncode == 1 and r.stderr.startswith("shoectl: ") and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    r = shoectl("monitor", "--port", "socket://127.0.0.1:1", "--no-store")
    assert r.returncode == 1 and "no key" in r.stderr
    busy = shoectl("session", "--script", str(tmp_path / "missing.json"))
    assert busy.returncode == 1 and "cannot read script" in busy.stderr
    r = shoectl("world", "--reader", "socket://127.0.0.1:1", "--cards", "1")
    assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1
