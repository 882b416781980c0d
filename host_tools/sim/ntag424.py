"""A simulated NXP NTAG 424 DNA (NT4H2421Gx) at the APDU level: what a card's tag answers once
ISO 14443-4 is up. The RF layer around it (RATS/ATS, blocks, CRC_A, DESELECT) is the reader
model's: tests/fakes/mfrc522_chip.py (IsoTag) under the fake MFRC522, and
host_tools/sim/emu/mfrc522.js on the emulated Pico, which reads a tag's spec() of this model.
The simulated writer of `shoectl tags provision --writer sim` talks to it directly.

    tag = Ntag424(uid)                  # a factory-fresh tag: keys all zero, files as delivered
    resp = tag.apply(apdu)              # C-APDU -> R-APDU (data + SW1 SW2)
    tag.reset()                         # field off, or a new activation: nothing selected
    tag.spec()                          # JSON-able: what the emulated Pico's tag model needs

Modelled (datasheet section 10 and 9.3): ISOSelectFile (the application by DF name, PICC
level, files E103/E104/E105), ISOReadBinary, ISOUpdateBinary, ReadData and WriteData
(CommMode.Plain, or MAC/Full when authenticated), AuthenticateEV2First (AES; NonFirst and LRP
are not), ChangeKey, ChangeFileSettings, GetFileSettings, GetFileCounters, and Secure Dynamic
Messaging on file 2 with plain PICCData mirroring (UID, SDMReadCtr) and SDMMAC (SDMMetaRead = Eh;
encrypted PICCData and SDMENCFileData are not modelled: ChangeFileSettings refuses them). The
SDM read counter follows 9.3.1: one more before the first read after any other command.

`cloned()` is what a copier gets: the UID and the memory as read, no keys (they cannot be read
out), and a tag that can only replay what it holds (Clone).
Runs under MicroPython too (the fake chip's tests): AES from shoe.cmac; the secure messaging
(host_tools/ev2.py) is loaded only by the commands that need it.
"""

import os

from shoe.cmac import cbc, cbc_decrypt, cmac, mact

DF_APP = b"\xd2\x76\x00\x00\x85\x01\x01"  # the NDEF application's ISO DF name
DF_PICC = b"\xd2\x76\x00\x00\x85\x01\x00"
OK = b"\x91\x00"
ISO_OK = b"\x90\x00"
# native status words (Table 23) and ISO ones (Table 24)
_PERMISSION = b"\x91\x9d"
_PARAM = b"\x91\x9e"
_LENGTH = b"\x91\x7e"
_AUTH = b"\x91\xae"
_INTEGRITY = b"\x91\x1e"
_NO_KEY = b"\x91\x40"
_BOUNDARY = b"\x91\xbe"
_NOT_FOUND = b"\x91\xf0"
_ILLEGAL = b"\x91\x1c"
_MORE = b"\x91\xaf"
_ISO_SECURITY = b"\x69\x82"
_ISO_NOT_FOUND = b"\x6a\x82"
_ISO_P1P2 = b"\x6a\x86"
_ISO_LENGTH = b"\x67\x00"
_ISO_INS = b"\x6d\x00"
_ISO_CLA = b"\x6e\x00"
_ISO_USE = b"\x69\x85"
_CC = bytes.fromhex("001720010000ff0406e104010000000506e10500808283") + bytes(9)
_ISO_IDS = {0xE103: 1, 0xE104: 2, 0xE105: 3}
_FREE = 0xE
_NEVER = 0xF


def _le3(b):
    return b[0] | b[1] << 8 | b[2] << 16


def _hex(b):
    return "".join("%02X" % x for x in b).encode()


class File:
    """A StandardData file: data and settings (comm mode, access rights, SDM)."""

    def __init__(self, size, comm, rights, data=b""):
        self.data = bytearray(size)
        self.data[: len(data)] = data
        self.comm = comm  # 0 plain, 1 MAC, 3 full
        self.rights = rights  # (read, write, readwrite, change) key numbers, E free, F never
        self.sdm = None  # dict of the SDM settings when enabled (file 2 only)

    def settings(self):
        r, w, rw, ch = self.rights
        out = bytes((0x00, self.comm | (0x40 if self.sdm else 0), rw << 4 | ch, r << 4 | w))
        out += len(self.data).to_bytes(3, "little")
        if self.sdm:
            s = self.sdm
            out += bytes((s["options"], 0xF0 | s["ctr_ret"], s["meta"] << 4 | s["file"]))
            for k in ("uid_at", "ctr_at", "mac_in", "mac_at"):
                if s.get(k) is not None:
                    out += s[k].to_bytes(3, "little")
        return out


class Ntag424:
    def __init__(self, uid, keys=None, rng=None):
        if len(uid) != 7:
            raise ValueError("an NTAG 424 DNA has a 7-byte UID")
        self.uid = bytes(uid)
        self.keys = [bytes(16)] * 5 if keys is None else [bytes(k) for k in keys]
        self.versions = [0] * 5
        self.files = {
            1: File(32, 0, (_FREE, 0, 0, 0), _CC),
            2: File(256, 0, (_FREE, _FREE, _FREE, 0)),
            3: File(128, 3, (2, 3, 3, 0)),
        }
        self.sdm_ctr = 0
        self.rng = rng or os.urandom
        self.reads = 0  # unauthenticated reads of file 2 with SDM (the counter's moves)
        self.answered = None  # file 2 as the last such read answered it (what the air carried)
        self.reset()

    def reset(self):
        """A new activation: the PICC level selected, no authentication, no command pending."""
        self.app = False
        self.ef = None  # the file selected for ISOReadBinary/UpdateBinary
        self.session = None  # ev2.Session when authenticated
        self.auth_key = None
        self._pending = None  # AuthenticateEV2First part 1 done: (key number, RndB)
        self._last = None  # the read command last answered (SDM counter rule)

    # -- the APDU interface ---------------------------------------------------------------
    def apply(self, apdu):
        apdu = bytes(apdu)
        if len(apdu) < 4:
            return _ISO_LENGTH
        cla, ins = apdu[0], apdu[1]
        read = None
        try:
            if cla == 0x00:
                if ins == 0xA4:
                    return self._select(apdu)
                if ins == 0xB0:
                    read = ("B0", apdu[2])
                    return self._read_binary(apdu)
                if ins == 0xD6:
                    return self._update_binary(apdu)
                return _ISO_INS
            if cla != 0x90:
                return _ISO_CLA
            body = self._body(apdu)
            if body is None:
                return _LENGTH
            if ins == 0xAF and self._pending is not None:
                return self._auth2(body)
            self._pending = None
            if not self.app:
                return _PERMISSION
            if ins == 0x71:
                return self._auth1(body)
            if ins == 0xAD:
                read = ("AD", body[:1])
                return self._read_data(body)
            handler = {
                0x8D: self._write_data,
                0x5F: self._change_file_settings,
                0xC4: self._change_key,
                0xF5: self._get_file_settings,
                0xF6: self._get_file_counters,
            }.get(ins)
            if handler is None:
                return _ILLEGAL
            return handler(body)
        finally:
            self._last = read  # any other command: the next read moves the SDM counter

    @staticmethod
    def _body(apdu):
        if len(apdu) == 5:
            return b""  # 90 INS 00 00 Le
        if len(apdu) < 6 or len(apdu) != 6 + apdu[4]:
            return None
        return apdu[5 : 5 + apdu[4]]

    def _fail(self, sw):
        """An error in authenticated state ends the authentication (9.1.9)."""
        self.session = None
        self.auth_key = None
        return sw

    # -- ISO commands -----------------------------------------------------------------------
    def _select(self, a):
        p1 = a[2]
        data = a[5 : 5 + a[4]] if len(a) > 5 else b""
        self.session = None
        if p1 == 0x04:
            if data == DF_APP:
                self.app, self.ef = True, None
                return ISO_OK
            if data == DF_PICC:
                self.app, self.ef = False, None
                return ISO_OK
            return _ISO_NOT_FOUND
        if p1 in (0x00, 0x02) and len(data) == 2:
            fid = data[0] << 8 | data[1]
            if fid == 0x3F00:
                self.app, self.ef = False, None
                return ISO_OK
            if fid == 0xE110:
                self.app, self.ef = True, None
                return ISO_OK
            if self.app and fid in _ISO_IDS:
                self.ef = _ISO_IDS[fid]
                return ISO_OK
            return _ISO_NOT_FOUND
        return _ISO_P1P2

    def _read_binary(self, a):
        if len(a) != 5:
            return _ISO_LENGTH
        p1, p2, le = a[2], a[3], a[4]
        if p1 & 0x80:
            sfi = p1 & 0x1F
            if sfi:
                if not self.app or sfi not in self.files:
                    return _ISO_NOT_FOUND
                self.ef = sfi
            off = p2
        else:
            off = (p1 << 8) | p2
        if self.ef is None:
            return _ISO_USE
        f = self.files[self.ef]
        if self.session is not None or (f.rights[0] != _FREE and f.rights[2] != _FREE):
            return _ISO_SECURITY
        if off >= len(f.data):
            return _ISO_P1P2
        n = le or 256
        out = self._dynamic(self.ef, ("B0", a[2]))
        if out is None:
            return _ISO_SECURITY
        return bytes(out[off : off + n]) + ISO_OK

    def _update_binary(self, a):
        if not self.app or self.ef is None:
            return _ISO_USE
        f = self.files[self.ef]
        if self.session is not None or (f.rights[1] != _FREE and f.rights[2] != _FREE):
            return _ISO_SECURITY
        off = (a[2] << 8) | a[3]
        data = a[5 : 5 + a[4]]
        if off + len(data) > len(f.data):
            return _ISO_P1P2
        f.data[off : off + len(data)] = data
        return ISO_OK

    # -- SDM --------------------------------------------------------------------------------
    def _dynamic(self, fno, read):
        """The file as read in not-authenticated state: SDM placeholders filled in. None if
        the counter is exhausted."""
        f = self.files[fno]
        if not f.sdm or self.session is not None:
            return f.data
        s = f.sdm
        if self._last != read and s["options"] & 0x40:
            if self.sdm_ctr >= 0xFFFFFF:
                return None
            self.sdm_ctr += 1
            self.reads += 1
        out = bytearray(f.data)
        if s.get("uid_at") is not None:
            out[s["uid_at"] : s["uid_at"] + 14] = _hex(self.uid)
        ctr = self.sdm_ctr.to_bytes(3, "big")
        if s.get("ctr_at") is not None and s["ctr_at"] != 0xFFFFFF:
            out[s["ctr_at"] : s["ctr_at"] + 6] = _hex(ctr)
        if s["file"] != _NEVER:
            sv2 = b"\x3c\xc3\x00\x01\x00\x80"
            if s["options"] & 0x80:
                sv2 += self.uid
            if s["options"] & 0x40:
                sv2 += self.sdm_ctr.to_bytes(3, "little")
            sv2 += bytes((16 - len(sv2) % 16) % 16)
            ks = cmac(self.keys[s["file"]], sv2)
            mac = mact(cmac(ks, bytes(out[s["mac_in"] : s["mac_at"]])))
            out[s["mac_at"] : s["mac_at"] + 16] = _hex(mac)
        self.answered = bytes(out)
        return out

    # -- native data commands -----------------------------------------------------------------
    def _granted(self, key):
        return key == _FREE or (self.session is not None and self.auth_key == key)

    def _read_data(self, body):
        if len(body) != 7:
            return _LENGTH
        fno, off, n = body[0], _le3(body[1:4]), _le3(body[4:7])
        f = self.files.get(fno)
        if f is None:
            return _NOT_FOUND
        r, w, rw, ch = f.rights
        if off >= len(f.data) or off + n > len(f.data):
            return _BOUNDARY
        n = n or len(f.data) - off
        if self.session is None:
            if r != _FREE and rw != _FREE:
                return _AUTH if (r, rw) != (_NEVER, _NEVER) else _PERMISSION
            out = self._dynamic(fno, ("AD", bytes((fno,))))
            if out is None:
                return _PERMISSION
            return bytes(out[off : off + n]) + OK
        if not (self._granted(r) or self._granted(rw)):
            return self._fail(_AUTH)
        if self._open(0xAD, 7, body, 1 if f.comm else 0) is None:
            return self._fail(_INTEGRITY)
        data = bytes(f.data[off : off + n])
        if f.comm == 0:
            return data + OK
        return self.session.seal_response(0, data, full=f.comm == 3) + OK

    def _write_data(self, body):
        if len(body) < 7:
            return _LENGTH
        fno = body[0]
        f = self.files.get(fno)
        if f is None:
            return _NOT_FOUND
        r, w, rw, ch = f.rights
        off, n = _le3(body[1:4]), _le3(body[4:7])
        if self.session is None:
            if w != _FREE and rw != _FREE:
                return _AUTH
            data = body[7:]
        else:
            if not (self._granted(w) or self._granted(rw)):
                return self._fail(_AUTH)
            data = self._open(0x8D, 7, body, f.comm)
            if data is None:
                return self._fail(_INTEGRITY)
        if len(data) != n or off + n > len(f.data):
            return _BOUNDARY
        f.data[off : off + n] = data
        return self._ok_response(comm=f.comm)

    def _open(self, ins, header_len, body, comm):
        """A command's data in the comm mode given, checked and counted (None: bad MAC)."""
        from host_tools.ev2 import SecureMessagingError

        s = self.session
        try:
            if comm == 0:
                s.ctr += 1
                return bytes(body[header_len:])
            return s.open_command(ins, header_len, body, full=comm == 3)[1]
        except SecureMessagingError:
            return None

    def _ok_response(self, data=b"", comm=3):
        """OPERATION_OK with data: in plain when not authenticated or in CommMode.Plain, else
        MACed (1) or encrypted and MACed (3)."""
        if self.session is None or comm == 0:
            return bytes(data) + OK
        return self.session.seal_response(0, data, full=comm == 3) + OK

    # -- authentication -----------------------------------------------------------------------
    def _auth1(self, body):
        if len(body) < 2:
            return _LENGTH
        keyno = body[0]
        if keyno > 4:
            return _NO_KEY
        if body[1] and len(body) > 2 and body[2] & 0x02:
            return _PERMISSION  # LRP requested: this tag is in AES mode (not modelled)
        self.session = None
        rnd_b = self.rng(16)
        self._pending = (keyno, rnd_b)
        return cbc(self.keys[keyno], rnd_b) + _MORE

    def _auth2(self, body):
        from host_tools.ev2 import Session, rotl, session_keys

        keyno, rnd_b = self._pending
        self._pending = None
        if len(body) != 32:
            return _LENGTH
        key = self.keys[keyno]
        plain = cbc_decrypt(key, bytes(body))
        rnd_a = plain[:16]
        if plain[16:] != rotl(rnd_b):
            return _AUTH
        ti = self.rng(4)
        enc, mac = session_keys(key, rnd_a, rnd_b)
        self.session = Session(enc, mac, ti)
        self.auth_key = keyno
        return cbc(key, ti + rotl(rnd_a) + bytes(12)) + OK

    # -- configuration --------------------------------------------------------------------------
    def _change_key(self, body):
        from host_tools.ev2 import crc32nk

        if self.session is None or self.auth_key != 0:
            return self._fail(_AUTH)
        if not body or body[0] > 4:
            return self._fail(_NO_KEY)
        keyno = body[0]
        data = self._open(0xC4, 1, body, 3)
        if data is None:
            return self._fail(_INTEGRITY)
        if keyno == 0:
            if len(data) != 17:
                return self._fail(_LENGTH)
            new = data[:16]
        else:
            if len(data) != 21:
                return self._fail(_LENGTH)
            new = bytes(x ^ y for x, y in zip(data[:16], self.keys[keyno]))
            if crc32nk(new) != data[17:21]:
                return self._fail(_INTEGRITY)
        self.keys[keyno] = bytes(new)
        self.versions[keyno] = data[16]
        if keyno == 0:  # the key of the session changed: the authentication ends, no MAC
            self.session = None
            self.auth_key = None
            return OK
        return self._ok_response()

    def _change_file_settings(self, body):
        if not body:
            return _LENGTH
        f = self.files.get(body[0])
        if f is None:
            return _NOT_FOUND
        ch = f.rights[3]
        if ch == _NEVER:
            return _PERMISSION
        comm = 0 if ch == _FREE else 3
        if comm == 0:
            if self.session is not None:
                self.session.ctr += 1
            data = bytes(body[1:])
        else:
            if not self._granted(ch):
                return self._fail(_AUTH)
            data = self._open(0x5F, 1, body, 3)
            if data is None:
                return self._fail(_INTEGRITY)
        return self._apply_settings(body[0], f, data, comm)

    def _apply_settings(self, fno, f, data, comm):
        if len(data) < 3:
            return self._fail(_LENGTH)
        option, ar = data[0], data[1:3]
        rights = (ar[1] >> 4, ar[1] & 15, ar[0] >> 4, ar[0] & 15)
        sdm = None
        if option & 0x40:
            if fno != 2:
                return self._fail(_PERMISSION)
            if len(data) < 6:
                return self._fail(_LENGTH)
            opts, sar = data[3], data[4:6]
            meta, fread, ctr_ret = sar[1] >> 4, sar[1] & 15, sar[0] & 15
            if meta != _FREE or opts & 0x30 or not opts & 0x01:
                return self._fail(_PARAM)  # encrypted PICCData / file data: not modelled
            sdm = {"options": opts, "meta": meta, "file": fread, "ctr_ret": ctr_ret}
            rest = data[6:]
            fields = []
            if opts & 0x80:
                fields.append("uid_at")
            if opts & 0x40:
                fields.append("ctr_at")
            if fread != _NEVER:
                fields += ["mac_in", "mac_at"]
            if len(rest) != 3 * len(fields):
                return self._fail(_LENGTH)
            for i, k in enumerate(fields):
                sdm[k] = _le3(rest[3 * i : 3 * i + 3])
            if not self._sdm_fits(sdm, len(f.data)):
                return self._fail(_PARAM)
        elif len(data) != 3:
            return self._fail(_LENGTH)
        f.comm = option & 3
        f.rights = rights
        if sdm and not f.sdm:
            self.sdm_ctr = 0  # reset when SDM is enabled (9.3.1)
        f.sdm = sdm
        return self._ok_response(comm=comm)

    @staticmethod
    def _sdm_fits(s, size):
        spans = []
        if s.get("uid_at") is not None:
            spans.append((s["uid_at"], 14))
        if s.get("ctr_at") is not None and s["ctr_at"] != 0xFFFFFF:
            spans.append((s["ctr_at"], 6))
        if "mac_at" in s:
            if not s["mac_in"] <= s["mac_at"] <= size - 16:
                return False
            spans.append((s["mac_at"], 16))
        for i, (a, n) in enumerate(spans):
            if a + n > size:
                return False
            for b, m in spans[i + 1 :]:
                if not (a >= b + m or b >= a + n):
                    return False
        return True

    def _get_file_settings(self, body):
        if len(body) != 1:
            return _LENGTH
        f = self.files.get(body[0])
        if f is None:
            return _NOT_FOUND
        if self.session is None:
            return f.settings() + OK
        if self._open(0xF5, 1, body, 1) is None:
            return self._fail(_INTEGRITY)
        return self._ok_response(f.settings(), comm=1)

    def _get_file_counters(self, body):
        f = self.files.get(body[0]) if body else None
        if f is None:
            return _NOT_FOUND
        if not f.sdm or f.sdm["ctr_ret"] == _NEVER:
            return _PERMISSION
        out = self.sdm_ctr.to_bytes(3, "little") + bytes(2)
        if f.sdm["ctr_ret"] == _FREE and self.session is None:
            return out + OK
        if not self._granted(f.sdm["ctr_ret"]):
            return self._fail(_AUTH)
        if self._open(0xF6, 1, body, 3) is None:
            return self._fail(_INTEGRITY)
        return self._ok_response(out)

    # -- outside views ----------------------------------------------------------------------------
    def spec(self):
        """The state the emulated Pico's tag model needs to answer reads as this tag does
        (host_tools/sim/emu/mfrc522.js), JSON-able."""
        f = self.files[2]
        s = f.sdm
        out = {
            "uid": "".join("%02x" % x for x in self.uid),
            "ndef": "".join("%02x" % x for x in f.data),
            "ctr": self.sdm_ctr,
            "read": f.rights[0],
        }
        if s:
            out["sdm"] = {k: s.get(k) for k in ("options", "uid_at", "ctr_at", "mac_in", "mac_at")}
            out["sdm"]["key"] = (
                "".join("%02x" % x for x in self.keys[s["file"]]) if s["file"] != _NEVER else None
            )
        return out

    @classmethod
    def from_spec(cls, spec):
        """A tag that reads as spec() says (the SDM key and settings, the file, the counter);
        its other keys are unknown here (zeros)."""
        t = cls(bytes.fromhex(spec["uid"]))
        f = t.files[2]
        ndef = bytes.fromhex(spec["ndef"])
        f.data[: len(ndef)] = ndef
        f.rights = (spec.get("read", _FREE),) + f.rights[1:]
        s = spec.get("sdm")
        if s:
            f.sdm = {
                "options": s["options"],
                "meta": _FREE,
                "ctr_ret": _NEVER,
                "file": _NEVER if s.get("key") is None else 1,
            }
            for k in ("uid_at", "ctr_at", "mac_in", "mac_at"):
                if s.get(k) is not None:
                    f.sdm[k] = s[k]
            if s.get("key") is not None:
                t.keys[1] = bytes.fromhex(s["key"])
        t.sdm_ctr = spec.get("ctr", 0)
        return t

    def cloned(self, fresh=False):
        """A copy as a copier can make it: the UID and file 2 as read, never the keys. Default:
        the answer of the tag's last read, recorded off the air (a SUN message the reader has
        seen); fresh: the copier reads the tag itself first (a new count, never shown to the
        shoe: the residual risk of SUN, docs/hardware.md section 4)."""
        data = self._dynamic(2, ("copy",)) if fresh or self.answered is None else self.answered
        return Clone(self.uid, data)


def copy_spec(spec, ctr):
    """The spec() of a copy of the tag `spec` that answers what the tag answered the read that
    took its counter to ctr (a recorded SUN message, replayed; no key, no SDM of its own)."""
    t = Ntag424.from_spec(dict(spec, ctr=ctr - 1))
    return {
        "uid": spec["uid"],
        "ndef": "".join("%02x" % x for x in t._dynamic(2, ("copy",))),
        "ctr": 0,
        "read": _FREE,
    }


class Clone(Ntag424):
    """A tag emulator that copied an NTAG 424 DNA's UID and what its NDEF file answered once:
    it answers every read with that same message (it has no key to make a new one)."""

    def __init__(self, uid, data):
        Ntag424.__init__(self, uid)
        self.files[2].data[: len(data)] = data
