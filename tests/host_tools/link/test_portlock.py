"""One host process per shoe port (host_tools/link/portlock.py): the port's key, the holder named
to the refused opener, a lock directory that is not this user's own refused."""

import os

import pytest

from host_tools.errors import ShoeError
from host_tools.link import DEMO_KEY, ShoeLink
from host_tools.link.portlock import PortLock, port_key


def test_one_port_one_key():
    assert port_key("socket://localhost:7001") == port_key("socket://127.0.0.1:7001?logging=1")
    assert port_key("SOCKET://127.0.0.1:7001") == port_key("socket://127.0.0.1:7001")
    assert port_key("socket://127.0.0.1:7001") != port_key("socket://127.0.0.1:7002")
    assert port_key("spy://socket://127.0.0.1:7001") == port_key("socket://127.0.0.1:7001")
    assert port_key("loop://") is None and port_key("gateway+unix:///x.sock") is None


def test_the_second_opener_is_told_who_holds_it(tmp_path, monkeypatch):
    monkeypatch.setenv("SHOE_LOCK_DIR", str(tmp_path / "locks"))
    a = PortLock("socket://127.0.0.1:7001").acquire(via="gateway+unix:///t/T01.api.sock")
    try:
        with pytest.raises(ShoeError) as e:
            PortLock("socket://localhost:7001").acquire()
        assert e.value.reason == "port_in_use"
        assert "held by PID %d" % os.getpid() in str(e.value)
        assert "--port gateway+unix:///t/T01.api.sock" in str(e.value)
        PortLock("socket://127.0.0.1:7002").acquire().release()  # another port: free
    finally:
        a.release()
    PortLock("socket://127.0.0.1:7001").acquire().release()  # released: free again


def test_a_link_holds_the_port_until_it_closes(tmp_path, monkeypatch):
    monkeypatch.setenv("SHOE_LOCK_DIR", str(tmp_path / "locks"))
    url = "socket://127.0.0.1:9"  # nothing answers: the reader thread keeps trying
    first = ShoeLink(url, DEMO_KEY, reconnect_s=0.05)
    first.start()
    try:
        with pytest.raises(ShoeError, match="is in use by another host process"):
            ShoeLink(url, DEMO_KEY).start()
    finally:
        first.close()
    second = ShoeLink(url, DEMO_KEY)
    second.start()
    second.close()
    with pytest.raises(ShoeError, match="is a gateway's API, not a port"):
        ShoeLink("gateway+unix:///t/T01.api.sock", DEMO_KEY)


def test_a_lock_directory_others_may_write_is_refused(tmp_path, monkeypatch):
    d = tmp_path / "locks"
    d.mkdir()
    d.chmod(0o777)
    monkeypatch.setenv("SHOE_LOCK_DIR", str(d))
    with pytest.raises(ShoeError, match="is not this user's own"):
        PortLock("socket://127.0.0.1:7001")
