"""COBS (Consistent Overhead Byte Stuffing): frames on the wire contain no 0x00 byte, and a single
0x00 ends each frame, so a receiver always resynchronises at the next zero after garbage.

`encode(data) -> bytes` (overhead: 1 byte + 1 per 254), `encode_into(bytearray, data, n)`;
`decode_into(buf, n) -> m` decodes the
first n bytes of a bytearray IN PLACE (the decoded length m <= n) with no allocation, returning -1
for an invalid encoding. `decode(data) -> bytes` is the allocating convenience for tests.
"""


def encode(data):
    if not isinstance(data, (bytes, bytearray)):
        data = bytes(data)
    out = bytearray()
    encode_into(out, data)
    return bytes(out)


def encode_into(out, data, n=None):
    """Append the COBS encoding of data[0:n] (bytes or bytearray) to the bytearray `out`.
    Runs of non-zero bytes are copied whole (bytes.find + slice): no Python loop per byte."""
    if n is None:
        n = len(data)
    mv = memoryview(data)
    i = 0
    while True:
        j = data.find(b"\x00", i, n)
        end = n if j < 0 else j
        while end - i >= 254:
            out.append(255)
            out.extend(mv[i:i + 254])
            i += 254
        out.append(end - i + 1)
        out.extend(mv[i:end])
        if j < 0:
            return
        i = j + 1


def decode_into(buf, n):
    """Decode buf[0:n] in place; returns the decoded length or -1 if the encoding is invalid."""
    if buf.find(b"\x00", 0, n) >= 0:
        return -1
    i = 0
    o = 0
    while i < n:
        code = buf[i]
        i += 1
        end = i + code - 1
        if end > n:
            return -1
        if end > i:
            buf[o:o + end - i] = buf[i:end]
            o += end - i
            i = end
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
