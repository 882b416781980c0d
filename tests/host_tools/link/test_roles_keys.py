"""The hosts pick a command's key from the firmware's roles table (shoe.roles): ShoeLink MACs a
command with the shoe (table) key where the table always suffices, with the supervisor key
otherwise if it holds one, and with the table key if it holds none (the shoe decides). The
shoe end reports whose key it verified (tests/host_tools/link/test_shoelink.py's fake shoe)."""

import json

import pytest

from host_tools import keys as keyfile
from host_tools.errors import ShoeError
from host_tools.link import ShoeLink
from shoe import roles
from tests.firmware import roles_cases as C
from tests.host_tools.link.test_shoelink import KEY, SUP, FakeShoe


class RoleShoe(FakeShoe):
    """The fake shoe, noting the role the link delivered with each command."""

    def boot(self):
        FakeShoe.boot(self)
        self.seen = getattr(self, "seen", {})
        receive = self.ep.receive

        def noting(data, now):
            out = receive(data, now)
            for kind, _body, ctr, role in out:
                self.seen[ctr] = (kind, role)
            return out

        self.ep.receive = noting


@pytest.fixture
def shoe(tmp_path):
    s = RoleShoe(tmp_path / "board")
    yield s
    s.close()


def sent(link, shoe, kind, **kw):
    try:
        link.command(kind, {"id": 1}, timeout=5, **kw)  # ack_error: the fake wants an id
    except ShoeError as e:
        assert e.reason == "unknown_command", str(e)  # the fake shoe knows only a few
    ctr = max(c for c, (k, _) in shoe.seen.items() if k == kind)  # not the link's _acks
    return shoe.seen.pop(ctr)


def test_the_link_uses_the_least_key_that_surely_does(shoe):
    with ShoeLink(shoe.url, KEY, supervisor_key=SUP) as link:
        link.open(timeout=10)
        for kind in C.known_kinds():
            if kind == "_ack":
                continue
            want = "table" if roles.table_suffices(kind) else "supervisor"
            assert sent(link, shoe, kind) == (kind, want), kind
        assert sent(link, shoe, "configure", supervisor=False) == ("configure", "table")
        assert sent(link, shoe, "status", supervisor=True) == ("status", "supervisor")


def test_without_the_supervisor_key_the_table_key_goes_and_the_shoe_decides(shoe):
    with ShoeLink(shoe.url, KEY) as link:
        link.open(timeout=10)
        for kind in ("configure", "void_round", "ack_error", "load_deck"):
            assert sent(link, shoe, kind) == (kind, "table")
        with pytest.raises(ShoeError) as e:  # insisting on it: refused here, not sent
            link.command("status", {}, supervisor=True)
        assert e.value.reason == "needs_supervisor"
        assert "status" not in [k for k, _ in shoe.seen.values()]


def test_a_key_file_without_the_supervisor_key_is_a_table_systems(tmp_path):
    """A table system's key file holds the shoe (and card) key only; the tools load it and
    their commands go with the table key (shoectl table, session, monitor)."""
    f = tmp_path / "table.json"
    f.write_text(json.dumps({"shoe": KEY.hex(), "card": (b"c" * 16).hex()}))

    class Args:
        keys = str(f)
        demo_keys = False

    k = keyfile.load(Args, environ={})
    assert k["shoe"] == KEY and k["supervisor"] is None
    with pytest.raises(ShoeError):  # provisioning still needs every key
        keyfile.for_provisioning(str(f), environ={})
