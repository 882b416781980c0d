"""Power from outside the runner: a board killed by another process comes back, its watchdog
resets it when it hangs, and the table system carries on (issue 9 finding 10); fresh boards
have their own shoe id, and read-only commands answer whatever the audit store holds
(finding 11)."""

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time

import pytest

from host_tools.sim.provision_sim import ensure_demo_keys, shoe_id_of
from host_tools.sim.simboard import SimBoard
from host_tools.sim.virtual_table import VirtualTable
from tests.e2e.conftest import Recorder
from tests.support import wait_for

SEATS = {str(s): {"wagers": {"ante": 10, "odds": 10, "prime": 5}} for s in range(1, 7)}


QUIET_BOOT_S = 0.5  # the virtual board's boot to its ready line, a quiet 2-core machine (less)


class Killer(threading.Thread):
    """Another party pulling the plug: SIGKILL to the board process at random instants."""

    def __init__(self, board, seed, lo=0.3, hi=2.5):
        super().__init__(daemon=True)
        self.board, self.rng, self.lo, self.hi = board, random.Random(seed), lo, hi
        self.kills = 0
        self.halt = threading.Event()

    def run(self):
        # Every third power-up is cut inside its boot (at a random instant of a boot as long as
        # the last one); the others live a random 0.3-2.5 s counted from their ready line, so
        # the cuts land in boot, recovery, handshakes, cards and settlements alike, and a board
        # on a loaded machine (a boot slower than the shortest life) still makes progress.
        killed, n = None, 0
        while not self.halt.is_set():
            p = self.board.proc
            if p is None or p.poll() is not None or p.pid == killed:
                self.halt.wait(0.02)  # wait for the next power-up
                continue
            n += 1
            if n % 3 == 0:
                life = self.rng.uniform(0.0, getattr(self.board, "boot_seconds", 0.5) or 0.5)
            else:
                while not (
                    self.board._ready.is_set() or p.poll() is not None or self.halt.is_set()
                ):
                    self.halt.wait(0.02)
                # ... scaled by how slow the machine is now: the last boot against a quiet
                # machine's (a loaded round's board, 4 suites at once, answered no status for
                # 30 s: each power-up died before its handshake and status were through)
                slow = max(1.0, (getattr(self.board, "boot_seconds", None) or 0.0) / QUIET_BOOT_S)
                life = self.rng.uniform(self.lo, self.hi) * slow
            if self.halt.wait(life):
                return
            try:
                os.kill(p.pid, signal.SIGKILL)
                self.kills += 1
                killed = p.pid
            except ProcessLookupError:
                pass


@pytest.mark.clause("irr:power-loss")
def test_session_completes_every_round_while_the_board_is_killed_from_outside(tmp_path):
    rec = Recorder()
    # 12 rounds: ~10 s on a quiet machine, long enough for at least 3 power-ups to be cut
    n = 40 if os.environ.get("SHOE_SOAK") == "full" else 12
    script = {"game": "four-card-frenzy", "seed": 9, "rounds": [{"seats": SEATS}] * n}
    with VirtualTable(str(tmp_path / "flash"), on_event=rec, event_timeout=10.0) as t:
        killer = Killer(t.board, seed=int(os.environ.get("SHOE_SEED", "7")))
        killer.start()
        try:
            outcomes = t.runner.play(script)
        except Exception:
            print("\n".join(list(t.board.log)[-60:]))  # the board's console, for the failure
            raise
        finally:
            killer.halt.set()
            killer.join(5)
        assert killer.kills >= min(3, n), "the killer hardly ran: the test proves nothing"
        assert t.board.power_returns >= 1
    # every round of the script ends in exactly one result or one void with a reason
    assert len(outcomes) == len(script["rounds"])
    nos = [o[0] for o in outcomes]
    assert len(set(nos)) == len(nos)
    for _, kind, body in outcomes:
        assert kind == "round_result" or (kind == "round_void" and body.get("reason"))
    assert_ends_match(rec.events, outcomes)


def assert_ends_match(events, outcomes):
    """The host saw exactly the rounds' ends the runner reports, no more, no fewer (both sides
    in one order: sorting one by round number and the other by kind failed every session with
    a void in it, at the void)."""
    ends = [(k, b["round"]) for k, b in events if k in ("round_result", "round_void")]
    assert sorted(ends) == sorted((k, n) for n, k, _ in outcomes)


def test_ends_match_with_a_void_among_the_results():
    """A session through power cuts may void a round (its reason said): that is no mismatch;
    a void the runner does not report, or a round it reports twice, is."""
    outcomes = [(n, "round_result", {}) for n in (1, 2, 3, 4, 6)]
    outcomes.insert(4, (5, "round_void", {"reason": "card_duplicate"}))
    events = [(k, {"round": n}) for n, k, _ in outcomes]
    events.insert(3, ("card", {"round": 4, "position": 0}))
    assert_ends_match(events, outcomes)
    with pytest.raises(AssertionError):
        assert_ends_match(events, outcomes[:4] + outcomes[5:])  # the void not reported
    with pytest.raises(AssertionError):
        assert_ends_match(events, outcomes + [outcomes[0]])  # a round reported twice


class _BootsDuringStatus:
    """A board and its link for TableRunner.recover(): the board boots again while the first
    status is asked, and the status is answered by the boot that was up when it was asked."""

    def __init__(self):
        self.boots = 1
        self.power_returns_on = True
        self.asked = 0

    def command(self, kind, body, timeout=5.0, supervisor=False):
        assert kind == "status"
        self.asked += 1
        answered_by = self.boots
        if self.asked == 1:
            self.boots += 1  # killed under the status: power returns
        return {"ok": True, "boot": answered_by, "phase": "stub"}

    def next_event(self, timeout):
        time.sleep(min(timeout, 0.02))
        return None


def test_recover_marks_only_a_boot_whose_status_it_has():
    """recover() once marked the boot before asking the status: a board booting again during
    that status was taken as seen, so the next wait saw its boot as a new one (a Rebooted much
    later, out of place: the stub was run through the reader twice, its cards out of round, the
    deck checks failed, the latched errors grew until the status reply no longer fitted)."""
    from host_tools.errors import ShoeError
    from host_tools.sim.session import TableRunner

    fake = _BootsDuringStatus()
    r = TableRunner(fake, fake, world=object(), event_timeout=1.0)
    st = r.recover()
    assert st["boot"] == fake.boots == 2  # the status of the boot now up
    assert r.boot_mark() == ("b", 2) and r._mark == r.boot_mark()
    with pytest.raises(ShoeError, match="did not report"):
        r.wait_for(("round_result",), timeout=0.3, mark=True)  # no boot since: no Rebooted


def test_power_returns_only_when_asked(tmp_path):
    """SimBoard(power_returns=True) powers a killed board up again on the same flash and ports;
    without it a killed board stays dead (what `shoectl sim` did before)."""
    ensure_demo_keys(tmp_path / "a")
    ensure_demo_keys(tmp_path / "b")
    with SimBoard(tmp_path / "a", power_returns=True) as on, SimBoard(tmp_path / "b") as off:
        port, pid = on.host_port, on.proc.pid
        os.kill(pid, signal.SIGKILL)
        os.kill(off.proc.pid, signal.SIGKILL)
        wait_for(lambda: on.boots == 2 and on.alive(), 20, "power to return")
        assert on.power_returns == 1 and on.proc.pid != pid and on.host_port == port
        assert not off.alive() and off.boots == 1 and off.power_returns == 0


def test_watchdog_resets_a_board_that_hangs(tmp_path):
    """The firmware starts its watchdog (through hwbuild, as on a Pico); a board that stops
    (SIGSTOP: every task hangs) is reset by it and comes back."""
    ensure_demo_keys(tmp_path)
    with SimBoard(tmp_path) as b:
        wait_for(lambda: b._wdt is not None, 20, "the firmware to start its watchdog")
        timeout_s = b._wdt[0]
        os.kill(b.proc.pid, signal.SIGSTOP)
        t0 = time.monotonic()
        wait_for(
            lambda: b.watchdog_resets == 1 and b.boots == 2,
            timeout=timeout_s + 10,
            what="the watchdog reset",
        )
        assert time.monotonic() - t0 >= timeout_s - 1.5  # not before it expired
        assert b.alive()


def shoectl(*args):
    return subprocess.run(
        [sys.executable, "-m", "host_tools", *args], capture_output=True, text=True, timeout=60
    )


def test_fresh_boards_have_own_ids_and_status_ignores_another_shoes_log(tmp_path):
    ids = set()
    for i in range(3):
        ensure_demo_keys(tmp_path / ("s%d" % i))
        ids.add(shoe_id_of(tmp_path / ("s%d" % i)))
    assert len(ids) == 3 and all(i.startswith("SIM-") for i in ids)
    db = str(tmp_path / "audit.sqlite")
    # an audit store holding a longer log under the id a new board will use (a wiped flash)
    ensure_demo_keys(tmp_path / "old", shoe_id="SIM-REUSED")
    with SimBoard(tmp_path / "old") as old:
        for _ in range(2):
            old.restart()  # three boots: three hello events
        r = shoectl("status", "--port", old.host_url, "--demo-keys", "--db", db, "--json")
        assert r.returncode == 0, r.stderr
    ensure_demo_keys(tmp_path / "new", shoe_id="SIM-REUSED")
    with SimBoard(tmp_path / "new") as new:
        r = shoectl("status", "--port", new.host_url, "--demo-keys", "--db", db, "--json")
        assert r.returncode == 0, r.stderr
        assert "event sequence is behind" in r.stderr  # said, not fatal
        assert json.loads(r.stdout)["status"]["shoe_id"] == "SIM-REUSED"
        for cmd in (["rounds", "--json"], ["errors", "--json"]):
            r = shoectl(cmd[0], "--port", new.host_url, "--demo-keys", "--db", db, *cmd[1:])
            assert r.returncode == 0, (cmd, r.stderr)


def test_shoectl_sim_powers_a_killed_board_up_again(tmp_path):
    from tests.e2e.test_cli import ROOT, SHOECTL, read_until

    sim = subprocess.Popen(
        SHOECTL + ["sim", "--state", str(tmp_path / "flash")],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        pid = int(read_until(sim, r"pid (\d+)")[0].group(1))
        host = read_until(sim, r"host UART:\s+(socket://\S+)")[0].group(1)
        sid = read_until(sim, r"shoe id:\s+(SIM-\S+)")[0].group(1)
        os.kill(pid, signal.SIGKILL)  # a power failure, from outside
        new_pid = int(read_until(sim, r"powered up again \(pid (\d+)\)")[0].group(1))
        assert new_pid != pid and sim.poll() is None
        r = shoectl(
            "status", "--port", host, "--demo-keys", "--db", str(tmp_path / "a.sqlite"), "--json"
        )
        assert r.returncode == 0, r.stderr
        st = json.loads(r.stdout)["status"]
        assert st["shoe_id"] == sid == shoe_id_of(tmp_path / "flash")
        sim.send_signal(signal.SIGTERM)
        assert sim.wait(20) == 0
    finally:
        if sim.poll() is None:
            sim.kill()


@pytest.mark.parametrize("case", ["crash_loop", "service_jumper"])
def test_virtual_board_boots_through_the_crash_guard_and_service_jumper(tmp_path, case):
    """The same board/main.py as a Pico: after 3 crashed boots, or with the jumper fitted, the
    app and its watchdog do not start (the board stays powered, its UARTs silent)."""
    ensure_demo_keys(tmp_path)
    if case == "crash_loop":
        (tmp_path / "crashes").write_text("3\nValueError: bug\n")
    with SimBoard(tmp_path, service=(case == "service_jumper")) as b:
        ready = [line for line in b.log if line.startswith("SHOE-SIM READY")]
        assert ready and ready[0].endswith(" safe" if case == "crash_loop" else " service")
        word = "safe mode" if case == "crash_loop" else "service jumper fitted"
        assert any(word in line for line in b.log), list(b.log)
        assert b._wdt is None and b.alive()
    ensure_demo_keys(tmp_path / "ok")
    with SimBoard(tmp_path / "ok") as b:  # and a healthy board runs the app
        assert [line for line in b.log if line.startswith("SHOE-SIM READY")][0][-1].isdigit()


def test_virtual_board_app_gets_the_whole_device_data_heap(sim_board):
    """The code allowance must cover the bytecode and the holes loading it leaves: the app gets
    the device's data heap in one piece (too little once made every board run out at boot)."""
    assert sim_board.data_heap_free is not None
    assert sim_board.data_heap_free >= sim_board.data_heap - 1024, sim_board.data_heap_free
