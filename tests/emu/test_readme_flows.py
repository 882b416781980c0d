"""The README's session flow on the emulated Pico (optical reader), as a newcomer types it, each
step a `shoectl` process: `shoectl status`, `shoectl session --script`, `status` again. The
by-hand flow through `shoectl gateway` is test_readme_by_hand.py: apart from each other and from
test_e2e.py so that pytest-xdist can run them beside each other and its two chip sessions."""

import json
import subprocess
import sys

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
