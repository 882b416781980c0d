"""The real firmware on the virtual board killed with SIGKILL at random instants, again and again,
while a host (ShoeLink + audit store) listens: every durable event the shoe journalled (its
`hello` at each boot carries the boot count) reaches the audit store exactly once, in order,
with a valid MAC and an unbroken hash chain; the journal always recovers."""

import os
import random
import time

from host_tools.audit import AuditStore
from host_tools.sim.provision_sim import DEMO_KEYS
from tests.support import host_link, wait_for

CUTS = int(os.environ.get("SHOE_POWER_CUTS", "25"))  # SHOE_POWER_CUTS=200 for the full soak


def test_sigkill_at_random_instants_loses_and_doubles_nothing(tmp_path, sim_board):
    rng = random.Random(11)
    board = sim_board
    audit = AuditStore(tmp_path / "audit.sqlite")
    url = board.host_url
    with host_link(url, supervisor_key=DEMO_KEYS["supervisor"], audit=audit) as link:
        shoe = link.shoe_id
        for i in range(CUTS):
            if i % 4 == 3:
                # now and then a life long enough for the host to catch up and acknowledge (a
                # shoe that never meets its host fills its outbox: 48 boots without one)
                before = audit.last_eseq(shoe)
                assert wait_for(
                    lambda before=before: link.up() and audit.last_eseq(shoe) > before, 30
                )
                time.sleep(0.3)
            time.sleep(rng.random() * 0.4)  # anywhere: booting, journalling, sending, idle
            board.power_cut()
            board.start()
            assert board.host_url == url
        # the last life: let everything arrive and be acknowledged
        assert wait_for(lambda: link.up() and audit.last_eseq(shoe) > 0, 30)
        assert wait_for(lambda: link.command("status", {}, timeout=5).get("boot", 0) >= 1, 30)
        boot_now = link.command("status", {}, timeout=5)["boot"]
        assert wait_for(
            lambda: any(
                e["body"].get("boot") == boot_now for e in audit.events(shoe, kinds=["hello"])
            ),
            30,
        )
    evs = audit.events(shoe)
    assert [e["eseq"] for e in evs] == list(range(1, len(evs) + 1))  # once each, no gap
    assert all(e["chain"] == "ok" for e in evs)
    boots = [e["body"]["boot"] for e in evs if e["kind"] == "hello"]
    assert boots == sorted(set(boots))  # a hello per boot that got that far, never twice
    assert len(boots) >= CUTS // 3
    rep = audit.verify(shoe, DEMO_KEYS["shoe"])
    assert not (rep["bad_mac"] or rep["broken"] or rep["gaps"])
    audit.close()
