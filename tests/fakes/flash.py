"""A fake NOR flash with the rp2.Flash API shape, for the journal's raw ring (CPython and the
MicroPython unix port).

    f = FakeFlash(blocks=64)            # 4096-byte blocks, erased (0xFF)
    f.readblocks(b, buf, off=0); f.writeblocks(b, buf, off); f.ioctl(6, b)   # erase
    f.cut_at = 7                         # power goes during the 7th operation from now on:
                                         # half of that program/erase is applied, then PowerCut
    f.revive()                           # power back on (the memory is what reached the chip)

NOR semantics: erase sets a block to 0xFF, a program ANDs bits (only 1 -> 0), a program with an
offset must be whole 256-byte pages at a page-aligned offset (the RP2040 ROM's
flash_range_program); `writeblocks(b, buf)` without an offset erases first, like rp2.Flash.
Counters: ops, programs (pages), erases, changed (programmed bytes that were not 0xFF)."""

SECTOR = 4096
PAGE = 256


class PowerCut(Exception):
    pass


class FakeFlash:
    def __init__(self, blocks=64):
        self.nblocks = blocks
        self.mem = bytearray(b"\xff" * (blocks * SECTOR))
        self.ops = 0
        self.programs = 0
        self.erases = 0
        self.changed = 0
        self.cut_at = None
        self.dead = False

    def revive(self):
        self.dead = False
        self.cut_at = None

    def _op(self):
        if self.dead:
            raise PowerCut("no power")
        self.ops += 1
        if self.cut_at is not None:
            self.cut_at -= 1
            if self.cut_at <= 0:
                self.cut_at = None
                return True
        return False

    def readblocks(self, block, buf, offset=0):
        if self.dead:
            raise PowerCut("no power")
        a = block * SECTOR + offset
        n = len(buf)
        if a < 0 or a + n > len(self.mem):
            raise ValueError("read outside the flash")
        buf[:] = self.mem[a : a + n]

    def _erase(self, a, n):
        cut = self._op()
        if cut:
            n //= 2
        self.mem[a : a + n] = b"\xff" * n
        if cut:
            self.dead = True
            raise PowerCut("cut during an erase")
        self.erases += 1

    def writeblocks(self, block, buf, offset=None):
        a = block * SECTOR
        if offset is None:
            for b in range(len(buf) // SECTOR):
                self._erase(a + b * SECTOR, SECTOR)
            offset = 0
        a += offset
        n = len(buf)
        if a % PAGE or n % PAGE or n == 0:
            raise ValueError("program: whole 256-byte pages only")
        if a + n > len(self.mem):
            raise ValueError("program outside the flash")
        for p in range(0, n, PAGE):
            cut = self._op()
            k = PAGE // 2 if cut else PAGE
            src = bytes(buf[p : p + k])
            self.changed += k - src.count(b"\xff")
            q = a + p
            if self.mem[q : q + k] == b"\xff" * k:
                self.mem[q : q + k] = src  # erased: programming is a copy
            else:
                for i in range(k):
                    self.mem[q + i] &= src[i]
            if cut:
                self.dead = True
                raise PowerCut("cut during a page program")
            self.programs += 1

    def ioctl(self, op, arg):
        if op == 4:
            return self.nblocks
        if op == 5:
            return SECTOR
        if op == 6:
            self._erase(arg * SECTOR, SECTOR)
            return 0
        return None
