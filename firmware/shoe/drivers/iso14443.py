"""ISO 14443-A arithmetic the MFRC522 driver needs, chip-independent: the CRC_A of a frame and
the air time of a frame and its answer at 106 kbit/s (docs/hardware.md section 4).
"""
from array import array


def air_us(tx_bits, rx_bytes):
    """Air time of a frame of tx_bits and its answer of rx_bytes at 106 kbit/s (9.44 us a bit,
    9 bits a byte with parity), with the tag's frame delay time (~86 us) between them."""
    return (tx_bits + 9 * rx_bytes) * 944 // 100 + 86


def _crc_table():
    t = array("H", range(256))
    for i in range(256):
        b = (i ^ (i << 4)) & 0xFF
        t[i] = (b << 8) ^ (b << 3) ^ (b >> 4)
    return t


CRC_TABLE = _crc_table()  # CRC_A byte by byte: half the interpreter work of the bit formula


def crc_a(buf, start, end, crc=0x6363):
    """ISO 14443-3 CRC_A of buf[start:end] (sent low byte first), from the state crc (its
    preset 0x6363, or the state after a known prefix). Over data + its CRC_A the result is 0,
    which is how answers are checked."""
    return crc_run(memoryview(buf)[start:end], crc)


def crc_run(mv, crc):
    # iterating a memoryview costs about half of indexing by range on the RP2040
    t = CRC_TABLE
    for b in mv:
        crc = (crc >> 8) ^ t[(crc ^ b) & 0xFF]
    return crc


def sel_crc(sel):
    return crc_a(bytes((sel, 0x70)), 0, 2)  # CRC_A state after a SELECT's first two bytes
