"""The code `shoectl deploy` sends to the board: helpers defined once in the raw REPL session (its
globals persist between commands) and called by name afterwards (`_shoe_rm(path)`,
`_shoe_hashes(dir)`, `_shoe_read(path)`, `_shoe_copy(src, dst)`, `_shoe_replace(new, dst)`). It
runs on the board's MicroPython, never on the host."""

HELPERS = """
import os, sys
def _shoe_isdir(p):
    try:
        return os.stat(p)[0] & 0x4000 != 0
    except OSError:
        return False
def _shoe_rm(p):
    if _shoe_isdir(p):
        for e in os.ilistdir(p):
            _shoe_rm(p + '/' + e[0])
        os.rmdir(p)
    else:
        try:
            os.remove(p)
        except OSError:
            pass
def _shoe_hashes(d):
    import hashlib, binascii
    b = bytearray(512)
    st = [d]
    while st:
        p = st.pop()
        for e in os.ilistdir(p):
            q = p + '/' + e[0]
            if e[1] & 0x4000:
                st.append(q)
                continue
            h = hashlib.sha256()
            with open(q, 'rb') as f:
                while True:
                    n = f.readinto(b)
                    if not n:
                        break
                    h.update(b if n == 512 else b[:n])
            print(q[len(d) + 1:], binascii.hexlify(h.digest()).decode())
def _shoe_read(p):
    try:
        with open(p) as f:
            return f.read().strip()
    except OSError:
        return None
def _shoe_copy(src, dst):
    b = bytearray(512)
    with open(src, 'rb') as f, open(dst, 'wb') as g:
        while True:
            n = f.readinto(b)
            if not n:
                break
            g.write(b if n == 512 else b[:n])
def _shoe_replace(new, dst):
    try:
        os.rename(new, dst)
    except OSError:
        os.remove(dst)
        os.rename(new, dst)
"""
