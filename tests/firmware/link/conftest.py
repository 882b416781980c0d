"""Shared by the link tests: `numbers`, the encryption seam watched (docs/protocol.md s.2)."""

import pytest

from shoe.link.endpoint import ShoeEndpoint
from shoe.link.frame import DATA, MORE


@pytest.fixture
def numbers(monkeypatch):
    """Every plaintext an end hands to its cipher, by (session, direction, frame type, seq):
    the counter block's inputs (the session key is the cipher's). Two different plaintexts under
    one would be a keystream used twice. -> {"uses": {...}, "again": n sent again identical}"""
    rec = {"uses": {}, "again": 0}
    orig = ShoeEndpoint._frame

    def _frame(ep, ftype, seq, payload=b""):
        if ftype in (DATA, MORE):
            k = (ep._skey, ep._tx_dir, ftype, seq)
            if k in rec["uses"]:
                assert rec["uses"][k] == bytes(payload), "number %r given another plaintext" % (
                    k[1:],
                )
                rec["again"] += 1
            else:
                rec["uses"][k] = bytes(payload)
        return orig(ep, ftype, seq, payload)

    monkeypatch.setattr(ShoeEndpoint, "_frame", _frame)
    return rec
