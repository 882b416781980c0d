"""Roles by allowlist through the real link (issue 18): an insider holding only the table key,
against the unmodified firmware on the virtual board (MicroPython), tries every configuration
field (every value change, the implicit ones of a body that leaves a field out or switches the
game included) and every command kind the shoe knows, in every phase a round goes through. The
cases are generated from the roles table (shoe.roles) and the configuration schema
(tests/firmware/roles_cases.py): a field or a kind added later is tried at once, and is the
supervisor's until shoe.roles grants it.

What the table key may not do is refused with `needs_supervisor` and changes nothing (the
shoe's status, its decks, latched errors and event chain are the same after); the supervisor
key does it. The keys are chosen explicitly here (`supervisor=False|True`); the hosts choose
them from the same table (ShoeLink.command, tests/host_tools/link/test_roles_keys.py)."""

import pytest

from host_tools.errors import ShoeError
from host_tools.sim.provision_sim import DEMO_KEYS
from host_tools.sim.world import Deck, ReaderPort, World
from shoe import roles
from tests.firmware import roles_cases as C
from tests.firmware.table.helpers import seats_body
from tests.support import host_link, virtual_board, wait_for

TABLE_KEY, SUPERVISOR_KEY = False, True


class Shoe:
    """The virtual board, a link holding both keys (each command says which it MACs with) and a
    dealer at its reader."""

    def __init__(self, board, link):
        self.board = board
        self.link = link
        self.world = World(ReaderPort(*board.reader_addr), card_key=DEMO_KEYS["card"])
        self.serial = 0x2000
        self.deck = None

    def cmd(self, kind, body, sup):
        return self.link.command(kind, body, timeout=20, supervisor=sup)

    def status(self):
        return self.link.command("status", {}, timeout=20, supervisor=TABLE_KEY)

    def snap(self):
        """Everything a command could change (not the clock's deck ages, not what the host
        acknowledged)."""
        st = self.status()
        decks = [dict((k, v) for k, v in d.items() if k != "age_s") for d in st["decks"]]
        return {
            "phase": st["phase"],
            "config": st["config"],
            "decks": decks,
            "latched": st["latched"],
            "latched_count": st["latched_count"],
            "rounds": st["rounds"],
            "round": st.get("round"),
            "eseq": st["chain"]["eseq"],
            "head": st["chain"]["head"],
        }

    def refused(self, kind, body):
        """The table key's command is refused needs_supervisor and changes nothing."""
        before = self.snap()
        with pytest.raises(ShoeError) as e:
            self.cmd(kind, body, TABLE_KEY)
        assert e.value.reason == "needs_supervisor", (kind, str(e.value))
        assert self.snap() == before, kind
        return str(e.value)

    def phase_is(self, want):
        return wait_for(
            lambda: self.status()["phase"] == want,
            20,
            lambda: "phase %s (now %s)" % (want, self.status()["phase"]),
        )

    def load_and_check(self):
        self.serial += 1
        self.cmd("load_deck", {"serial": "%04X" % self.serial, "back": "R"}, TABLE_KEY)
        self.deck = Deck(self.serial, "R", seed=self.serial)
        self.world.deck_check(self.deck)
        self.phase_is("open_round")

    def ready(self):
        """Bring the shoe to phase open_round: acknowledge, re-check or load a deck."""
        for _ in range(6):
            st = self.status()
            if st["latched"]:
                self.cmd("ack_error", {"all": True}, SUPERVISOR_KEY)
            elif st["phase"] == "deck_check":
                self.deck.order = Deck(self.serial, "R", seed=st["rounds"]).order
                self.deck.pos = 0
                self.world.deck_check(self.deck)
                wait_for(lambda: self.status()["phase"] != "deck_check", 20, "the recheck")
            elif st["phase"] == "load_deck":
                self.load_and_check()
            elif st["phase"] == "open_round":
                return
        raise AssertionError("the shoe did not get ready: %s" % self.status()["phase"])

    def round_in(self, where):
        """Open a round (one seat) and take it to `where`: before_first_card, unreadable_first,
        mid_deal, decisions, stub."""
        self.ready()
        rep = self.cmd("open_round", seats_body(C.FCF, (1,)), TABLE_KEY)
        n = {"before_first_card": 0, "unreadable_first": 0, "mid_deal": 3}.get(where, rep["cards"])
        for _ in range(n):
            self.world.pass_card(self.deck, self.deck.take())
        if where == "unreadable_first":
            self.world.port.line(b"NOREAD")
        wait_for(lambda: (self.status().get("round") or {}).get("dealt") == n, 20, "the deal")
        if where == "unreadable_first":
            wait_for(self._unreadable_seen, 20, "the no-read")
        if where == "stub":
            self.cmd("decisions", {"1": 0}, TABLE_KEY)
        want = {"decisions": "decisions", "stub": "stub"}.get(where, "dealing")
        self.phase_is(want)

    def _unreadable_seen(self):
        # a no-read is counted in the round's tries (not in status): its event has arrived
        ev = self.link.next_event(timeout=0.05)
        while ev is not None:
            if ev[0] == "unreadable":
                return True
            ev = self.link.next_event(timeout=0.05)
        return False


def _first_phase(link):
    ev = link.next_event(timeout=0.1)
    return ev is not None and ev[0] == "phase"


@pytest.fixture
def shoe(tmp_path):
    with virtual_board(tmp_path / "board") as board:
        with host_link(board.host_url, supervisor_key=DEMO_KEYS["supervisor"]) as link:
            # the booted shoe's first command makes its first phase event: from then on only
            # commands that change something and cards make events (snapshots compare)
            link.command("status", {}, timeout=20)
            wait_for(lambda: _first_phase(link), 20, "the shoe's first phase event")
            yield Shoe(board, link)


def test_every_configuration_field_through_the_link(shoe):
    """Every field of the schema, with a value the supervisor may set: the table key's change
    is refused, explicit or implicit (left out: its default; the other game: every default),
    and changes nothing; the supervisor's is taken; the same settings again need only the
    table key."""
    from tests.firmware.test_roles import other_value

    # the first configure sets every field: the supervisor's
    msg = shoe.refused("configure", dict(C.BASE))
    assert "game" in msg and "procedure" in msg
    shoe.cmd("configure", dict(C.BASE), SUPERVISOR_KEY)
    tried = []
    for field in C.settable_fields():
        v = other_value(field, C.BASE)
        body = dict(C.BASE, **{field: v})
        if roles.field_role(field) == roles.TABLE:
            shoe.cmd("configure", body, TABLE_KEY)
            shoe.cmd("configure", dict(C.BASE), TABLE_KEY)
            continue
        assert field in shoe.refused("configure", body)
        shoe.cmd("configure", body, SUPERVISOR_KEY)
        if field not in ("game", "procedure"):
            assert field in shoe.refused("configure", dict(C.BASE))  # left out
        st = shoe.status()["config"]
        other = {"game": C.HCF if st["game"] == C.FCF else C.FCF, "procedure": st["procedure"]}
        shoe.refused("configure", other)  # the other game: all its defaults
        shoe.cmd("configure", body, TABLE_KEY)  # no change
        shoe.cmd("configure", dict(C.BASE), SUPERVISOR_KEY)
        tried.append(field)
    assert set(tried) | set(C.expected_table_fields()) >= set(C.settable_fields())


def test_the_issues_scenario_through_the_link(shoe):
    """Issue 18 as reported: with the table key alone, configure changed
    raise_when_dealer_not_open, represent_max, the deck age limit, the jam timeout and the
    dealing procedure; HCF and back turned two-deck alternation off."""
    base = dict(C.BASE, two_deck=True)
    shoe.cmd("configure", base, SUPERVISOR_KEY)
    for change in (
        {"rules": {"raise_when_dealer_not_open": "win"}},
        {"represent_max": 5},
        {"deck_age_shoe_s": 99999},
        {"jam_timeout_s": 600},
        {"procedure": "hand"},
    ):
        shoe.refused("configure", dict(base, **change))
    msg = shoe.refused("configure", {"game": C.HCF, "procedure": "manual-shoe"})
    assert "two_deck" in msg
    shoe.cmd(
        "configure", {"game": C.HCF, "procedure": "manual-shoe", "two_deck": True}, SUPERVISOR_KEY
    )
    shoe.refused("configure", base)  # and back
    cfg = shoe.status()["config"]
    assert cfg["game"] == C.HCF and cfg["two_deck"] is True


PHASES = ("before_first_card", "unreadable_first", "mid_deal", "decisions", "stub")


def test_voiding_in_each_phase_with_each_key(shoe):
    """void_round and close_round: the table key until a card of the round is out, then only
    the supervisor's (in the decisions, after every card was sent: issue 18)."""
    shoe.cmd("configure", dict(C.BASE), SUPERVISOR_KEY)
    shoe.load_and_check()
    for kind in ("void_round", "close_round"):
        for where in PHASES:
            shoe.round_in(where)
            n = shoe.status()["rounds"]
            if where == "before_first_card":
                shoe.cmd(
                    kind, {"detail": "wrong seats"} if kind == "void_round" else {}, TABLE_KEY
                )
            else:
                assert "first card" in shoe.refused(kind, {})
                if kind == "close_round" and where in ("decisions", "stub"):
                    with pytest.raises(ShoeError) as e:  # the deal is complete
                        shoe.cmd(kind, {}, SUPERVISOR_KEY)
                    assert e.value.reason == "out_of_sequence"
                    kind_done = "void_round"
                else:
                    kind_done = kind
                shoe.cmd(kind_done, {}, SUPERVISOR_KEY)
            st = shoe.status()
            assert st.get("round") is None and st["rounds"] == n, (kind, where)


def test_every_command_kind_through_the_link(shoe):
    """Every kind the shoe knows, sent with the table key where the shoe is idle and in a deal:
    refused needs_supervisor (nothing changed) exactly where shoe.roles says the supervisor is
    needed; the supervisor key is never refused for its role."""
    shoe.cmd("configure", dict(C.BASE), SUPERVISOR_KEY)
    shoe.load_and_check()
    bodies = {
        "configure": dict(C.BASE),
        "configure_supervised": dict(C.BASE),
        "load_deck": {"serial": "%04X" % shoe.serial, "back": "R"},  # the one it holds
        "open_round": seats_body(C.FCF, (2,)),
        "decisions": {"1": 0},
        "attest": {"nonce": b"n" * 16},
        "recall": {},
        "ack": {"all": True},
        "ack_error": {"all": True},
        "void_round": {},
        "close_round": {},
    }
    # something latched, so acknowledging has something to clear
    shoe.round_in("mid_deal")
    shoe.cmd("void_round", {}, SUPERVISOR_KEY)
    assert shoe.status()["latched"]
    seen = []
    for where in ("idle", "mid_deal"):
        if where == "mid_deal":
            shoe.round_in("mid_deal")
        for kind in C.known_kinds():
            if kind == "_ack":  # the link's own, never answered: the host's acks prune
                continue  # the outbox (asserted below)
            body = bodies.get(kind, {})
            rule = roles.rule(kind)
            # `deck`: the body names the deck the shoe holds; `fields`: nothing changes (or the
            # phase refuses it first); `dealt`: no round (idle) or a card is out (mid-deal)
            table_may = rule in (roles.TABLE, "fields") or (rule == "dealt" and where == "idle")
            if table_may:
                try:
                    shoe.cmd(kind, body, TABLE_KEY)
                except ShoeError as e:  # the phase may refuse it, never the role
                    assert e.reason != "needs_supervisor", (kind, where, str(e))
            else:
                shoe.refused(kind, body)
                seen.append((kind, where))
    assert ("ack_error", "idle") in seen and ("load_deck", "idle") in seen
    assert ("void_round", "mid_deal") in seen and ("configure_supervised", "idle") in seen
    # the supervisor may do it all (what the phase allows)
    for kind in ("ack_error", "ack", "configure_supervised", "void_round"):
        try:
            shoe.cmd(kind, bodies[kind], SUPERVISOR_KEY)
        except ShoeError as e:
            assert e.reason != "needs_supervisor", (kind, str(e))
    # the host's acknowledgements (the link's `_ack`, the table key's) reach the shoe
    wait_for(lambda: shoe.status()["chain"]["acked"] > 0, 20, "acknowledged events")


def test_loading_a_deck_the_shoe_holds_needs_the_supervisor(shoe):
    shoe.cmd("configure", dict(C.BASE), SUPERVISOR_KEY)
    shoe.load_and_check()
    held = {"serial": "%04X" % shoe.serial, "back": "R"}
    assert "holds" in shoe.refused("load_deck", held)  # it would restart the deck's age
    shoe.cmd("load_deck", held, SUPERVISOR_KEY)
    shoe.world.deck_check(Deck(shoe.serial, "R", seed=1))
    shoe.phase_is("open_round")
