"""COBS (Consistent Overhead Byte Stuffing): frames on the wire contain no 0x00 byte, and a single
0x00 ends each frame, so a receiver always resynchronises at the next zero after garbage.

`encode(data) -> bytes` (overhead: 1 byte + 1 per 254), `encode_into(bytearray, data, n)`; `decode_into(buf, n) -> m` decodes the
first n bytes of a bytearray IN PLACE (the decoded length m <= n) with no allocation, returning -1
for an invalid encoding. `decode(data) -> bytes` is the allocating convenience for tests.
"""


def encode(data):
    out = bytearray()
    encode_into(out, data)
    return bytes(out)


def encode_into(out, data, n=None):
    """Append the COBS encoding of data[0:n] to the bytearray `out` (no temporary copies)."""
    if n is None:
        n = len(data)
    code_at = len(out)
    out.append(1)
    code = 1
    for i in range(n):
        b = data[i]
        if b == 0:
            out[code_at] = code
            code_at = len(out)
            out.append(1)
            code = 1
        else:
            out.append(b)
            code += 1
            if code == 0xFF:
                out[code_at] = code
                code_at = len(out)
                out.append(1)
                code = 1
    out[code_at] = code


def decode_into(buf, n):
    """Decode buf[0:n] in place; returns the decoded length or -1 if the encoding is invalid."""
    i = 0
    o = 0
    while i < n:
        code = buf[i]
        if code == 0:
            return -1
        i += 1
        end = i + code - 1
        if end > n:
            return -1
        while i < end:
            b = buf[i]
            if b == 0:
                return -1
            buf[o] = b
            o += 1
            i += 1
        if code != 0xFF and i < n:
            buf[o] = 0
            o += 1
    return o


def decode(data):
    buf = bytearray(data)
    m = decode_into(buf, len(buf))
    if m < 0:
        raise ValueError("cobs")
    return bytes(buf[:m])
