"""The secrecy attacker's tools: decode whatever can be read and search it for cards.

    found = search(obj, cards)     # {card name: [where, ...]} of `cards` (names) found in obj
    msgs = messages(chunks)        # the frames in raw captured bytes, reassembled and decoded
    ins = Insider(table_key, up_chunks, down_chunks)   # decrypts as the link key's holder
    msgs = messages(chunks, ins.open)

`search` walks anything a reader can get (a decoded CBOR message, a JSON document or its text,
a database row, bytes): every text string is searched for a card as a token ("8s", as rules.md
writes it) and for a card code ("3A7FR8s1d52a21b" or without its MAC); a byte string is decoded
as canonical CBOR when it is one (a payload) and searched for card codes in ASCII; an integer
card id counts only under a field named like a card (card, all_six_card) or as an item of a
list under such a field (cards, hands, dealer). It knows nothing of the protocol's meaning:
whatever names a card in any readable form is found (in undecodable bytes: a whole card code).
"""

import json
import re
import struct

from shoe.cards import name
from shoe.link import cobs, codec
from shoe.link.crc import crc32

_CARD = re.compile(r"(?<![0-9A-Za-z])([2-9TJQKA][cdhs])(?![0-9A-Za-z])")
_CODE = re.compile(r"[0-9A-F]{4}[RB]([2-9TJQKA][cdhs])")
# in raw bytes only a whole code (with its MAC) counts: CBOR heads next to upper-case hex text
# (a shoe id "SIM-1234AB8" followed by 0x68, the head of an 8-byte text, reads "B8h")
_CODE_BYTES = re.compile(rb"[0-9A-F]{4}[RB]([2-9TJQKA][cdhs])[0-9a-f]{8}")
_CARD_KEYS = re.compile(r"card|hand|dealer|six")
_ID_KEYS = ("card", "all_six_card", "card_id")


def search(obj, cards, where="", out=None, key=None):
    out = {} if out is None else out
    want = set(cards)

    def hit(card, at):
        if card in want:
            out.setdefault(card, []).append(at)

    if isinstance(obj, dict):
        for k, v in obj.items():
            search(k, cards, "%s/<key>" % where, out)
            search(v, cards, "%s/%s" % (where, k), out, key=str(k))
    elif isinstance(obj, (list, tuple)):
        ids = key is not None and _CARD_KEYS.search(key)
        for i, v in enumerate(obj):
            if ids and isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 52:
                hit(name(v), "%s[%d] (card id)" % (where, i))
            else:
                search(v, cards, "%s[%d]" % (where, i), out, key=key)
    elif isinstance(obj, str):
        for m in _CARD.finditer(obj):
            hit(m.group(1), "%s: %r" % (where, obj[:60]))
        for m in _CODE.finditer(obj):
            hit(m.group(1), "%s: code %r" % (where, obj[:60]))
        if obj[:1] in "{[":
            try:
                search(json.loads(obj), cards, where + " (JSON)", out)
            except ValueError:
                pass
    elif isinstance(obj, (bytes, bytearray, memoryview)):
        b = bytes(obj)
        for m in _CODE_BYTES.finditer(b):
            hit(m.group(1).decode(), "%s: code in bytes" % where)
        try:
            dec = codec.decode(b)
        except codec.CodecError:
            dec = None
        if dec is not None and not isinstance(dec, int):
            search(dec, cards, where + " (CBOR)", out)
    elif isinstance(obj, int) and not isinstance(obj, bool) and key in _ID_KEYS:
        if 0 <= obj < 52:
            hit(name(obj), "%s (card id)" % where)
    return out


def frames(data, opener=None):
    """[(ftype, seq, payload)] of the frames in raw link bytes (COBS, CRC checked): what anyone
    on the cable decodes without a key; with an `opener` (Insider.open) DATA and MORE payloads
    are decrypted as the holder of the link's key can."""
    out = []
    for part in bytes(data).split(b"\x00"):
        if not part:
            continue
        try:
            raw = cobs.decode(part)
        except ValueError:
            continue
        if len(raw) < 18 or struct.unpack(">I", raw[-4:])[0] != crc32(raw[:-4]):
            continue
        payload = raw[6:-12]
        if opener is not None and raw[1] in (1, 6):
            payload = opener(raw)
        out.append((raw[1], (raw[2] << 8) | raw[3], payload))
    return out


class Insider:
    """Whoever holds the table key, which is the link's key (docs/protocol.md section 10): from
    the nonces of the HELLOs both ways (clear on the cable) it derives every session's keys and
    decrypts each DATA/MORE frame under the session whose frame MAC verifies. A stronger
    listener than a keyless one: the commitments, not the encryption, must keep the cards."""

    def __init__(self, key, chunks_up, chunks_down):
        from shoe.link import frame as fr
        from shoe.link.message import mac

        self.key, self._fr = key, fr
        nonces = {"shoe": set(), "host": set()}
        for chunks in (chunks_up, chunks_down):
            for ftype, _, payload in frames(b"".join(bytes(d) for _, d in chunks)):
                h = _decode(payload) if ftype == 3 else None
                if isinstance(h, dict) and h.get("role") in nonces and h.get("n"):
                    nonces[h["role"]].add(bytes(h["n"]))
        self.sessions = [
            (mac(key, b"SHOE3sess", s + h), mac(key, b"SHOE3enc", s + h))
            for s in nonces["shoe"]
            for h in nonces["host"]
        ]

    def open(self, raw):
        """A DATA/MORE frame's plaintext (its ciphertext if no session's MAC verifies)."""
        from shoe.link.cipher import Ctr

        signed, tag = raw[:-12], raw[-12:-4]
        for skey, ekey in self.sessions:
            for t, d in ((b"SHOE3s", 1), (b"SHOE3h", 2)):  # sent by the shoe / by the host
                if self._fr.frame_mac(skey, t, signed) == tag:
                    return Ctr(ekey).crypt(d, raw[1], (raw[2] << 8) | raw[3], raw[6:-12])
        return raw[6:-12]


def messages(chunks, opener=None):
    """The messages one direction of a link carried, decoded as far as a listener can:
    chunks = [(t, bytes)] in order -> [(t_first, kind, body, payload)] (MORE fragments joined
    to their DATA frame; a retransmitted copy is decoded again). Payloads that do not decode
    are kept with kind None."""
    buf = b"".join(bytes(d) for _, d in chunks)
    out = []
    pending, first, last_seq = [], None, None
    t_of = _times(chunks)
    for i, (ftype, seq, payload) in enumerate(frames(buf, opener)):
        t = t_of[i] if i < len(t_of) else None
        if ftype == 6:  # MORE
            if pending and last_seq is not None and seq != (last_seq + 1) & 0xFFFF:
                pending = []
            if not pending:
                first = t
            pending.append(payload)
            last_seq = seq
            continue
        if ftype != 1:  # ACK, HELLO, REFUSE, PING: no message
            if ftype in (3, 4):
                out.append((t, "frame%d" % ftype, _decode(payload), payload))
            continue
        if pending and last_seq is not None and seq == (last_seq + 1) & 0xFFFF:
            msg = b"".join(pending) + payload
            t0 = first
        else:
            msg, t0 = payload, t
        pending, last_seq = [], None
        items = _decode(msg)
        if isinstance(items, list) and len(items) >= 2 and isinstance(items[0], str):
            out.append((t0, items[0], items[1], msg))
        else:
            out.append((t0, None, items, msg))
    return out


def _decode(b):
    try:
        return codec.decode(bytes(b))
    except codec.CodecError:
        return None


def _times(chunks):
    """The capture time of each frame, in frame order (a frame ends in the chunk holding its
    delimiter)."""
    out = []
    carry = b""
    for t, data in chunks:
        parts = (carry + bytes(data)).split(b"\x00")
        carry = parts.pop()
        for p in parts:
            if p and _is_frame(p):
                out.append(t)
    return out


def _is_frame(part):
    try:
        raw = cobs.decode(part)
    except ValueError:
        return False
    return len(raw) >= 18 and struct.unpack(">I", raw[-4:])[0] == crc32(raw[:-4])
