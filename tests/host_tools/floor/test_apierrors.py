"""The gateway's API says what ended a client's request (issue 22): an error inside one request
is answered `malformed` to that client, logged (logger shoe.floor.tableapi), kept in the API's
error log with the client's name, and said on the operator's lines; the API goes on serving."""

import logging
import types
from pathlib import Path

import pytest

from host_tools.errors import ShoeError
from host_tools.floor.tableapi import TableAPI
from host_tools.link import apiwire
from host_tools.link.viagateway import GatewayLink


class _BrokenLink:
    """A gateway's link whose commands fail inside (a bug or a fault, not the shoe's refusal)."""

    shoe_id = "T001"
    audit = None

    def __init__(self):
        self.listeners = []
        self.ep = types.SimpleNamespace(stats={"sessions": 1})

    def up(self):
        return True

    def stats(self):
        return {"up": True}

    def command(self, kind, body, timeout=5.0, supervisor=False):
        if kind == "status":
            raise RuntimeError("the link's state is broken")
        return {"ok": True}


def test_a_request_that_fails_inside_is_logged_kept_and_the_client_goes_on(tmp_path, caplog):
    sock = tmp_path / "T001.api.sock"
    secret = b"k" * 32
    key = Path(apiwire.key_path("gateway+unix://" + str(sock), "table"))
    key.write_bytes(secret)
    key.chmod(0o600)
    said = []
    api = TableAPI(_BrokenLink(), secret, unix_path=sock, note=said.append).start()
    try:
        with caplog.at_level(logging.WARNING, logger="shoe.floor.tableapi"):
            with GatewayLink("gateway+unix://" + str(sock)).open(timeout=60) as link:
                with pytest.raises(ShoeError) as refused:
                    link.command("status", {}, timeout=60)
                assert refused.value.reason == "malformed", refused.value
                assert "could not do it" in str(refused.value) and "broken" in str(refused.value)
                # the client goes on: its next request is answered
                assert link.command("recall", {}, timeout=60) == {"ok": True}
        assert api.errors.total == 1 and "api_command" in api.errors.counts
        assert "RuntimeError: the link's state is broken" in api.errors.last
        assert any("the link's state is broken" in r.getMessage() for r in caplog.records)
        assert any("command failed" in line and "broken" in line for line in said)
    finally:
        api.stop()
