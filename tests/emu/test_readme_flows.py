"""The README's paths on the emulated Pico (optical reader), as a newcomer types them, each step
a `shoectl` process: the session flow (`shoectl status`, `shoectl session --script`, `status`
again) and the by-hand flow through `shoectl gateway` (monitor, table, world). Apart from
test_e2e.py so that pytest-xdist can run them beside its two chip sessions."""

import json
import subprocess
import sys
import threading
import time

from host_tools.sim import emu as _emu
from tests.emu.test_e2e import ROOT, chip, script


def test_the_readmes_session_flow_leaves_the_chip_answering(tmp_path, pico_image, optical_image):
    """Issue 19: the README's path, as a newcomer types it, on the emulated Pico with the optical
    reader: `shoectl status`, `shoectl session --port UART0 --reader UART1 --keys ... --script`
    (one round), then `shoectl status` again. It used to wedge the chip's link for good (the
    chip's random source repeats its nonce: docs/protocol.md section 3); now every step answers.
    Timeouts are generous because the emulated chip runs at a tenth of real time or less on a
    loaded machine; the link's own timers are the defaults a newcomer gets."""
    s = script("high-card-flush")
    (tmp_path / "script.json").write_text(json.dumps(s))
    keys = str(pico_image["keys"])
    with chip(tmp_path, optical_image) as e:
        u = e.urls
        db = str(tmp_path / "audit.db")

        def shoectl(*argv, timeout=900):
            p = subprocess.run(
                [sys.executable, "-m", "host_tools"] + list(argv),
                capture_output=True,
                text=True,
                cwd=ROOT,
                timeout=timeout,
            )
            assert p.returncode == 0, "shoectl %s: %s" % (argv[0], (p.stderr or p.stdout)[-800:])
            return p.stdout

        base = ["--port", u["uart0"], "--keys", keys, "--db", db]
        shoectl("status", *base, "--timeout", "300")  # the chip has booted and answers
        out = shoectl(
            "session",
            *base,
            "--reader",
            u["uart1"],
            "--script",
            str(tmp_path / "script.json"),
            "--event-timeout",
            "300",
            "--json",
        )
        kinds = [
            json.loads(line).get("event") for line in out.splitlines() if line.startswith("{")
        ]
        assert "round_result" in kinds, out[-800:]
        shoectl("status", *base, "--timeout", "120")  # and still answers afterwards


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

            from tests.e2e.byhand import round_by_hand

            round_by_hand(
                shoectl,
                k,
                ["--reader", u["uart1"], "--keys", keys],
                timeout_s=600,
                poll_s=2.0,
                pace="0.25",
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
