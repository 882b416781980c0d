"""Program verification: SHA-256 of every deployed firmware file and a MAC'd answer to a host
challenge (a fresh nonce), so a lab or a table system can prove which program runs.

    files = file_hashes(["/lib/shoe", "/main.py"])   # [(name, sha256 bytes)], sorted by name
    m = manifest(files)                               # SHA-256 over every name, 0, hash
    answer = attest(key, nonce, roots)                # {"nonce", "files", "manifest", "mac"}
    page = listing(roots, start, count)               # [[name, hash], ...]: find a differing file
    attest(key, nonce, [], image=xip[:n])             # a frozen image: its flash, entry "image"

The roots, the manifest and the MAC (the host checks them with
host_tools.link.verify_attestation): docs/protocol.md, "Attestation".
"""
import hashlib
import os

from micropython import const

from shoe.crypto import hmac_sha256

_TAG = b"SHOE1attest"
_CHUNK = const(2048)   # bytes a file is read through when hashed


def _isdir(path):
    try:
        return os.stat(path)[0] & 0x4000 != 0
    except OSError:
        return False


def _base(path):
    p = path.rstrip("/")
    i = p.rfind("/")
    return p[i + 1:] if i >= 0 else p


def _entries(path):
    """[(name, is a directory)] of a directory. os.ilistdir gives each entry's type with its
    name: a stat per entry would read the directory's metadata again on littlefs (at boot, with
    the file reads below, the attestation hash was 40 % of a Pico's boot)."""
    try:
        return [(e[0], e[1] == 0x4000) for e in os.ilistdir(path)]
    except AttributeError:   # CPython (the host's side)
        return [(e, _isdir(path + "/" + e)) for e in os.listdir(path)]


def _walk(path, name, out, isdir=None):
    if _isdir(path) if isdir is None else isdir:
        for entry, sub in sorted(_entries(path)):
            if entry.startswith(".") or entry == "__pycache__":
                continue
            _walk(path + "/" + entry, name + "/" + entry, out, sub)
    else:
        out.append((name, path))


def names(roots):
    """[(name, path)] of every file under the roots, sorted by name."""
    out = []
    for r in roots:
        r = r.rstrip("/") if len(r) > 1 else r
        try:
            os.stat(r)
        except OSError:
            continue
        _walk(r, _base(r), out)
    out.sort()
    return out


def sha256_file(path, buf=None):
    """buf: a bytearray to read through (one for every file of file_hashes). Reads of a few KB:
    each read is a call down littlefs to the flash, so 512 bytes at a time cost twice as much."""
    h = hashlib.sha256()
    if buf is None:
        buf = bytearray(_CHUNK)
    mv = memoryview(buf)
    with open(path, "rb") as f:
        while True:
            n = f.readinto(buf)
            if not n:
                break
            h.update(buf if n == len(buf) else mv[:n])
    return h.digest()


def file_hashes(roots):
    buf = bytearray(_CHUNK)
    return [(n, sha256_file(p, buf)) for n, p in names(roots)]


def manifest(files):
    h = hashlib.sha256()
    for name, digest in files:
        h.update(name.encode())
        h.update(b"\x00")
        h.update(digest)
    return h.digest()


def image_hash(image, chunk=4096):
    """SHA-256 of a firmware image in memory (the frozen image: the XIP flash the chip runs
    from, a memoryview over it), in slices: no copy of the image in RAM."""
    h = hashlib.sha256()
    mv = memoryview(image)
    for off in range(0, len(mv), chunk):
        h.update(mv[off:off + chunk])
    return h.digest()


def with_image(files, digest):
    """The manifest's entries with the firmware image's as "image", in name order (the host
    computes its side with this too)."""
    files.append(("image", digest))
    files.sort()
    return files


def attest(key, nonce, roots, image=None):
    """image: the frozen firmware's flash (memoryview) when the host asked for it; it is
    hashed as the entry "image" of the manifest beside the files."""
    if not isinstance(nonce, bytes) or not 8 <= len(nonce) <= 64:
        raise ValueError("bad_nonce")
    files = file_hashes(roots)
    if image is not None:
        files = with_image(files, image_hash(image))
    m = manifest(files)
    return {"nonce": nonce, "files": len(files), "manifest": m, "mac": attest_mac(key, nonce, m)}


def attest_mac(key, nonce, manifest_digest):
    return hmac_sha256(key, _TAG + nonce + manifest_digest)[:16]


def listing(roots, start=0, count=16):
    files = names(roots)[start:start + count]
    return [[n, sha256_file(p)] for n, p in files]
