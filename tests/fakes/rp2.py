"""Stand-in for the rp2 port's `rp2` module on the unix port: `rp2.Flash()` is a fake NOR flash
(tests/fakes/flash.py, 64 blocks) with the real block-device API shape, its memory allocated at
the first read or write (a board test that only builds the hardware needs none)."""


class Flash:
    def __init__(self):
        self._f = None

    def _flash(self):
        if self._f is None:
            from flash import FakeFlash

            self._f = FakeFlash(64)
        return self._f

    def readblocks(self, block, buf, offset=0):
        self._flash().readblocks(block, buf, offset)

    def writeblocks(self, block, buf, offset=None):
        self._flash().writeblocks(block, buf, offset)

    def ioctl(self, op, arg):
        if op == 4:
            return 64
        if op == 5:
            return 4096
        return self._flash().ioctl(op, arg)
