"""The README's by-hand flow on the emulated Pico (optical reader), as a newcomer types it, each
step a `shoectl` process: `shoectl gateway` holds UART0, `monitor` and `table` go through its API,
`world` deals on UART1. A file of its own (the session flow is test_readme_flows.py) so that
tests/conftest.py can deal the two flows, each minutes of emulated chip, to different workers."""

import subprocess
import sys
import threading
import time

from host_tools.sim import emu as _emu
from tests.emu.test_e2e import ROOT, chip


def test_the_readmes_by_hand_flow_through_the_gateway_on_the_chip(
    tmp_path, pico_image, optical_image
):
    """Issue 19 item 3 with issue 20's link holder: the README's by-hand flow on the emulated
    Pico (optical reader) as a newcomer types it, in separate processes: `shoectl gateway` holds
    UART0, `shoectl monitor` watches through its API, `shoectl table` (each action a process)
    drives a round through the same API and `shoectl world --keys` deals on UART1. The round
    ends in a result with nothing latched, the monitor shows it, and the gateway's store holds
    every event once."""
    from host_tools.audit import AuditStore

    keys = str(pico_image["keys"])
    with chip(tmp_path, optical_image) as e:
        u = e.urls
        sock = tmp_path / "T1.api.sock"
        db = tmp_path / "T1.sqlite"
        gw = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "host_tools",
                "gateway",
                "--port",
                u["uart0"],
                "--keys",
                keys,
                "--db",
                str(db),
                "--api-socket",
                str(sock),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        mon = None
        try:
            line = gw.stdout.readline()
            while line and "no broker" not in line:
                line = gw.stdout.readline()
            assert "no broker" in line, line + gw.stderr.read()[-800:]
            k = ["--port", "gateway+unix://" + str(sock), "--keys", keys, "--timeout", "120"]
            # the monitor gets the same patience (its default is 10 s to open: in a loaded run
            # it showed nothing at all, as a monitor that gave up would)
            mon = subprocess.Popen(
                [sys.executable, "-m", "host_tools", "monitor", *k, "--json", "--no-store"],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                cwd=ROOT,
            )
            seen = []
            threading.Thread(target=lambda: seen.extend(mon.stdout), daemon=True).start()

            def shoectl(*argv):
                p = subprocess.run(
                    [sys.executable, "-m", "host_tools"] + list(argv),
                    capture_output=True,
                    text=True,
                    cwd=ROOT,
                    timeout=900,
                )
                assert p.returncode == 0, "shoectl %s: %s" % (
                    argv[:2],
                    (p.stderr or p.stdout)[-800:],
                )
                return p.stdout

            from tests.e2e.byhand import PhaseWatch, round_by_hand

            round_by_hand(
                shoectl,
                k,
                ["--reader", u["uart1"], "--keys", keys],
                timeout_s=600,
                poll_s=2.0,
                pace="0.25",
                events=PhaseWatch(seen),
            )
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and not any("round_result" in s for s in seen):
                time.sleep(0.2)
            assert any("round_result" in s for s in seen), "".join(seen)[-800:] + (
                ""
                if mon.poll() is None
                else "monitor exited %s: %s" % (mon.returncode, mon.stderr.read()[-800:])
            )
        finally:
            for p in (mon, gw):
                if p is not None:
                    p.terminate()
                    p.wait(30)
        store = AuditStore(str(db))
        try:
            evs = store.events(_emu.EMU_SHOE_ID)
        finally:
            store.close()
        eseqs = [ev["eseq"] for ev in evs]
        assert eseqs == list(range(eseqs[0], eseqs[0] + len(eseqs)))  # once each, none missing
        kinds = [ev["kind"] for ev in evs]
        assert "round_result" in kinds and "irregularity" not in kinds, kinds
