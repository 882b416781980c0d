"""The fault injector's guarantee the soaks rely on (host_tools/sim/faultproxy.py): with
`ensure=True` every kind of fault asked for happens at least once, however unlucky the draws, so
a soak asserts its outcome and that each fault was in play, never how many the seed made."""

from host_tools.sim.faultproxy import DATA, DOWN, UP, FaultProxy, Frame, FrameMitm, Hostile
from shoe.link.frame import VERSION

TINY = 1e-12  # a probability the draws never hit in a test's lifetime


def chunks_through(proxy, n):
    return [proxy._mangle(bytes(range(1, 41))) for _ in range(n)]


def test_unlucky_draws_still_drop_corrupt_and_duplicate_once_each_when_ensured():
    lucky = FaultProxy(("127.0.0.1", 9), seed=1, corrupt=TINY, drop=TINY, dup=TINY)
    sure = FaultProxy(("127.0.0.1", 9), seed=1, corrupt=TINY, drop=TINY, dup=TINY, ensure=True)
    try:
        chunks_through(lucky, 100)
        out = chunks_through(sure, 100)
        assert (lucky.stats["dropped"], lucky.stats["corrupted"], lucky.stats["duplicated"]) == (
            0,
            0,
            0,
        )  # the draws alone made none
        assert (sure.stats["dropped"], sure.stats["corrupted"], sure.stats["duplicated"]) == (
            1,
            1,
            1,
        ), sure.stats  # each kind once, no more
        assert out.count(b"") == 1 and sum(len(o) == 80 for o in out) == 1
        assert sum(o != bytes(range(1, 41)) and len(o) == 40 for o in out) == 1
        assert out[: FaultProxy.ENSURE_FROM] == [bytes(range(1, 41))] * FaultProxy.ENSURE_FROM
    finally:
        lucky.close()
        sure.close()


def test_a_kind_not_asked_for_is_never_forced():
    p = FaultProxy(("127.0.0.1", 9), seed=1, drop=TINY, ensure=True)
    try:
        chunks_through(p, 100)
        assert (p.stats["dropped"], p.stats["corrupted"], p.stats["duplicated"]) == (1, 0, 0)
    finally:
        p.close()


def test_an_ensured_attacker_does_every_kind_of_attack_whatever_its_rate():
    def frames(rule, n):
        mitm = FrameMitm(rule)
        for i in range(n):
            d = UP if i % 2 else DOWN
            mitm.feed(d, Frame(VERSION, DATA, i & 0xFFFF, 0, b"x" * 20).wire())
        return mitm

    lazy, sure = Hostile(seed=2, rate=0.001), Hostile(seed=2, rate=0.001, ensure=True)
    frames(lazy, 7000)
    frames(sure, 7000)
    assert not all(lazy.done.values())  # the draws alone left a kind out
    assert all(sure.done.values()), sure.done
