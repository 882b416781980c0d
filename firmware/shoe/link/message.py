"""Message envelopes and their MACs (one message = the payload of one DATA frame): the shoe's
halves, open_command and seal_message, and the envelope itself, seal and unseal, which the host
end (host_tools/link/host.py: seal_command, open_message, chain_next; not firmware) shares.

Commands [kind, body, ctr, mac], messages [kind, body, eseq, prev, mac], the MACs and the hash
chain: docs/protocol.md section 4. Both MACs bind the shoe id: the tag they are computed under is
`bound(CMD_TAG or MSG_TAG, shoe_id)`, which an endpoint computes once. Failures raise LinkError
with `reason` (malformed, bad_mac).
"""
import hashlib

from micropython import const

from shoe.crypto import c_hmac, equal, pads
from shoe.errors import ShoeError
from shoe.link import codec

MAC_LEN = const(16)
GENESIS = bytes(16)
CMD_TAG = b"SHOE3cmd"
MSG_TAG = b"SHOE3msg"


class LinkError(ShoeError):
    def __init__(self, reason, detail=None):
        super().__init__(None, reason)
        self.detail = detail


def mac(key, tag, core):
    """HMAC-SHA256(key, tag + core)[:16] (= shoe.crypto.hmac_sha256 of tag + core, without
    joining them; the pads from shoe.crypto's one cache, or the frozen image's C HMAC)."""
    if c_hmac is not None:
        return c_hmac(key, tag, core)[:MAC_LEN]
    ipad, opad = pads(key)
    h = hashlib.sha256(ipad)
    h.update(tag)
    h.update(core)
    o = hashlib.sha256(opad)
    o.update(h.digest())
    return o.digest()[:MAC_LEN]


def bound(tag, shoe_id):
    """The MAC tag that binds a shoe id: tag + the id's canonical encoding (self-delimiting)."""
    return tag + codec.encode(shoe_id)


try:  # the frozen image's C envelope (cmodules/shoec): encode, MAC and hash in one call
    from shoec import seal as _cseal
except ImportError:  # CPython, the unix port, a stock MicroPython image
    _cseal = None


def seal(key, tag, items, head=False):
    """-> (payload, SHA-256(core)[:16] if head else None): core encoded once, MAC'd and
    hashed, then copied once into a payload of its final size."""
    if _cseal is not None:
        r = _cseal(key, tag, items, head)
        if r is not None:   # None: a type the C encoder leaves to Python, errors included
            return r
    return seal_py(key, tag, items, head)


def seal_py(key, tag, items, head=False):
    """seal() without the C envelope (tests/emu/test_shoec.py compares the two on the chip)."""
    core = codec.encode(items)
    m = mac(key, tag, core)
    h = hashlib.sha256(core).digest()[:16] if head else None
    n = len(core)
    out = bytearray(n + 1 + MAC_LEN)
    out[0:n] = core
    out[0] += 1  # array head: n items -> n + 1 (n < 23 here)
    out[n] = 0x50  # bstr of 16
    out[n + 1:] = m
    return bytes(out), h


def unseal(payload, nitems):
    """-> (items, core, mac) of an envelope of `nitems` items (the MAC unchecked)."""
    if len(payload) < 2 + MAC_LEN or payload[0] != 0x80 + nitems or payload[-MAC_LEN - 1] != 0x50:
        raise LinkError("malformed")
    try:
        items = codec.decode(payload)
    except codec.CodecError as e:
        raise LinkError("malformed", e.reason)
    core = bytearray(payload[:len(payload) - MAC_LEN - 1])
    core[0] -= 1
    return items, bytes(core), bytes(payload[len(payload) - MAC_LEN:])


def open_command(payload, keys, tag):
    """-> (kind, body, ctr, i): i = the index in `keys` of the first key whose MAC the command
    carries (None entries: no such key provisioned); none of them: bad_mac. `tag` is
    bound(CMD_TAG, this shoe's id): a command sealed for another shoe fails (bad_mac)."""
    items, core, got = unseal(payload, 4)
    kind, body, ctr = items[0], items[1], items[2]
    if (not isinstance(kind, str) or not isinstance(ctr, int) or ctr is True or ctr is False
            or ctr < 1):
        raise LinkError("malformed")
    for i in range(len(keys)):
        if keys[i] and equal(mac(keys[i], tag, core), got):
            return kind, body, ctr, i
    raise LinkError("bad_mac", ctr)


def seal_message(key, kind, body, eseq, prev, shoe_id=""):
    """-> (payload, head): head is the new chain head (eseq > 0) or None. The MAC binds
    `shoe_id` (the Endpoint seals with its tag computed once: link/sendqueue.py)."""
    return seal(key, bound(MSG_TAG, shoe_id), [kind, body, eseq, prev], eseq)
