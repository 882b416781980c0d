"""A dealt card's commitment: how a card of an open round leaves the shoe until its reveal.

    commit(secret, rnd, position, target, card)
        = SHA-256(b"SHOE1card" + secret + b"%d %d %s %s" % (rnd, position, target, card))[:16]

`secret` is the round's 16 random bytes (shoe/table/secret.py draws it at open_round and
reveals it when the decisions close); the four fields go in ASCII, one space between them:
round and position in decimal, `target` "1".."6" | "dealer" | "all_six" | "discard", `card`
"As". No field holds a space, so the text names one deal only. The shoe commits with it, and
every host check recomputes with this very function (host_tools/reveal.py). A module of its
own (no table behind it): a host, or the test vectors under MicroPython, load only this. Why a
keyed hash and not an HMAC, and who learns what when: docs/protocol.md section 10.
"""
import hashlib

from micropython import const

SECRET_LEN = const(16)
COMMIT_LEN = const(16)
TAG = b"SHOE1card"


def commit(secret, rnd, position, target, card):
    """The 16-byte commitment to `card` (a name, "As") dealt at `position` to `target` in round
    `rnd`, under the round's secret (bytes): one SHA-256 block for any deal."""
    h = hashlib.sha256(TAG)
    h.update(secret)
    h.update(("%d %d %s %s" % (rnd, position, target, card)).encode())
    return h.digest()[:COMMIT_LEN]
