"""NTAG 424 DNA's AES secure messaging (NT4H2421Gx section 9.1), the arithmetic both ends share:
the host writing tags (host_tools/tagwriter.py) and the simulated tag (host_tools/sim/ntag424.py).
Checked against the worked examples of NXP AN12196 (tests/host_tools/test_ev2.py).

    AuthenticateEV2First:  PICC -> E(Kx, RndB);  PCD -> E(Kx, RndA || rotl(RndB));
                           PICC -> E(Kx, TI || rotl(RndA) || PDcap2 || PCDcap2)   (zero IV)
    session keys           SesAuthENCKey = CMAC(Kx, SV1), SesAuthMACKey = CMAC(Kx, SV2)
    CommMode.Full command  Cmd || CmdHeader || E(ENC, pad(CmdData), IV(A55A)) || MACt(Cmd ||
                           CmdCtr || TI || CmdHeader || E(..)); the response MACed with CmdCtr + 1

Pure Python over shoe.cmac (AES from `cryptolib`: the firmware's, or host_tools' stand-in).
"""

from binascii import crc32

from shoe.cmac import cbc, cbc_decrypt, cmac, ecb, mact

LABEL_CMD = b"\xa5\x5a"  # IV of command data; SV1 (encryption session key)
LABEL_RESP = b"\x5a\xa5"  # IV of response data; SV2 (MAC session key)


class SecureMessagingError(ValueError):
    pass


def rotl(b):
    return bytes(b[1:]) + bytes(b[:1])


def rotr(b):
    return bytes(b[-1:]) + bytes(b[:-1])


def _xor(a, b):
    return bytes(x ^ y for x, y in zip(a, b))


def session_vector(label, rnd_a, rnd_b):
    """SV1 (label A55A) / SV2 (5AA5): 32 bytes from both randoms (9.1.7; bytes numbered from
    the right, RndA[15] is rnd_a[0])."""
    return (
        label
        + b"\x00\x01\x00\x80"
        + rnd_a[0:2]
        + _xor(rnd_a[2:8], rnd_b[0:6])
        + rnd_b[6:16]
        + rnd_a[8:16]
    )


def session_keys(key, rnd_a, rnd_b):
    """(SesAuthENCKey, SesAuthMACKey) after an authentication with key."""
    return (
        cmac(key, session_vector(LABEL_CMD, rnd_a, rnd_b)),
        cmac(key, session_vector(LABEL_RESP, rnd_a, rnd_b)),
    )


def iv(enc, label, ti, ctr):
    """The IV of command (LABEL_CMD) or response (LABEL_RESP) data at command counter ctr."""
    return ecb(enc, label + ti + ctr.to_bytes(2, "little") + bytes(8))


def pad(data):
    """ISO/IEC 9797-1 padding method 2: 80 and zeros to a multiple of 16 (always added)."""
    n = len(data) + 1
    return bytes(data) + b"\x80" + bytes((16 - n % 16) % 16)


def unpad(data):
    i = len(data) - 1
    while i >= 0 and data[i] == 0:
        i -= 1
    if i < 0 or data[i] != 0x80 or len(data) - i > 16:
        raise SecureMessagingError("bad padding")
    return bytes(data[:i])


def mac_t(key, *parts):
    """MACt over the concatenated parts (9.1.3)."""
    return mact(cmac(key, b"".join(bytes(p) for p in parts)))


def crc32nk(data):
    """ChangeKey's CRC32 of the new key: IEEE 802.3, not complemented, LSB first (AN12196
    Table 25: 789DFADC for F3847D627727ED3BC9C4CC050489B966)."""
    return ((~crc32(bytes(data))) & 0xFFFFFFFF).to_bytes(4, "little")


def change_key_data(keyno, auth_keyno, old, new, version):
    """ChangeKey's KeyData (Table 63): the authenticating key itself: NewKey || KeyVer; any
    other key: (NewKey XOR OldKey) || KeyVer || CRC32NK(NewKey)."""
    if keyno == auth_keyno:
        return bytes(new) + bytes((version,))
    return _xor(new, old) + bytes((version,)) + crc32nk(new)


class Session:
    """One end's state of an authenticated session: keys, TI, command counter."""

    def __init__(self, enc, mac, ti):
        self.enc, self.mac, self.ti, self.ctr = enc, mac, bytes(ti), 0

    # -- the PCD (host) side ----------------------------------------------------------------
    def command(self, ins, header=b"", data=b"", full=True):
        """The data field of a command in CommMode.Full (full) or CommMode.MAC."""
        body = b""
        if data:
            body = (
                cbc(self.enc, pad(data), iv(self.enc, LABEL_CMD, self.ti, self.ctr))
                if full
                else bytes(data)
            )
        return (
            bytes(header)
            + body
            + mac_t(self.mac, bytes((ins,)), self.ctr.to_bytes(2, "little"), self.ti, header, body)
        )

    def response(self, rc, field, full=True):
        """Check a response's data field (a MAC, after encrypted data if any) and count the
        command -> the plain response data. SecureMessagingError if the MAC is wrong."""
        self.ctr += 1
        if len(field) < 8:
            raise SecureMessagingError("response too short for its MAC")
        body, got = bytes(field[:-8]), bytes(field[-8:])
        want = mac_t(self.mac, bytes((rc,)), self.ctr.to_bytes(2, "little"), self.ti, body)
        if got != want:
            raise SecureMessagingError("response MAC does not match")
        if not body or not full:
            return body
        return unpad(cbc_decrypt(self.enc, body, iv(self.enc, LABEL_RESP, self.ti, self.ctr)))

    # -- the PICC (tag) side ----------------------------------------------------------------
    def open_command(self, ins, header_len, field, full=True):
        """The tag checks a command's data field -> its plain data; the counter moves on."""
        if len(field) < header_len + 8:
            raise SecureMessagingError("command too short for its MAC")
        header, body, got = field[:header_len], field[header_len:-8], field[-8:]
        want = mac_t(
            self.mac, bytes((ins,)), self.ctr.to_bytes(2, "little"), self.ti, header, body
        )
        if bytes(got) != want:
            raise SecureMessagingError("command MAC does not match")
        plain = bytes(body)
        if body and full:
            if len(body) % 16:
                raise SecureMessagingError("cryptogram not a multiple of 16 bytes")
            plain = unpad(
                cbc_decrypt(self.enc, bytes(body), iv(self.enc, LABEL_CMD, self.ti, self.ctr))
            )
        self.ctr += 1
        return bytes(header), plain

    def seal_response(self, rc, data=b"", full=True):
        """The tag's response data field: E(data) (if any, full) and its MAC."""
        body = b""
        if data:
            body = (
                cbc(self.enc, pad(data), iv(self.enc, LABEL_RESP, self.ti, self.ctr))
                if full
                else bytes(data)
            )
        return body + mac_t(self.mac, bytes((rc,)), self.ctr.to_bytes(2, "little"), self.ti, body)
