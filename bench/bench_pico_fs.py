"""What the `.mpy` deploy's filesystem costs the chip at boot: a path looked up, a module found
and the firmware's files hashed, in emulated RP2040 time.

    .venv/bin/python bench/bench_pico_fs.py [--n 20] [--uf2 FILE]

A Pico is made a shoe as tests/emu/conftest.pico_image makes it (`shoectl deploy --board pico`,
`shoectl provision`), then reset with the service jumper fitted (main.py builds the hardware, the
REPL is free) and at the REPL, timed with the chip's own `time.ticks_us()`: `os.stat` of paths
1 to 5 directories deep (the deployed modules are 5 deep:
`/shoe_fw/v-<hash>/shoe/<package>/<module>.mpy`), found and not found; the three lookups
MicroPython's import makes for a submodule (a directory? `.py`? `.mpy`) and the open; and
`attest.file_hashes` of the deployed version, which the app's boot runs for the `hello`'s
`firmware_sha256`. Prints each in microseconds, and how much of the boot (reset -> READY, as
bench/bench_pico.py measures it) the imports and the hashing come to. Needs SHOE_PICO_UF2 and
SHOE_RP2040_BOOTROM (README). A benchmark, not a test.
"""

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from host_tools.sim import emu as _emu  # noqa: E402

# runs on the chip: JSON of the figures (the version directory from main.firmware_dir())
ON_CHIP = r"""
import os, time, json, main
from shoe import attest
r = main.firmware_dir()
n = %d
def t(f):
    t0 = time.ticks_us()
    for _ in range(n):
        f()
    return time.ticks_diff(time.ticks_us(), t0) / n
def stat(p):
    def f():
        try:
            os.stat(p)
        except OSError:
            pass
    return f
out = {"version": r, "n": n}
paths = ["/main.py", "/shoe_fw/active", r + "/DEPLOYED", r + "/shoe/app.mpy",
         r + "/shoe/link/codec.mpy"]
for depth, p in enumerate(paths, 1):
    out["stat_found_%%d" %% depth] = t(stat(p))
    out["stat_missing_%%d" %% depth] = t(stat(p + "x"))
m = r + "/shoe/link/codec"
def lookups():   # what `import shoe.link.codec` asks the filesystem (py/builtinimport.c)
    stat(m)()
    stat(m + ".py")()
    stat(m + ".mpy")()
    with open(m + ".mpy", "rb") as f:
        f.read(16)
out["module_lookups_and_open"] = t(lookups)
t0 = time.ticks_us()
out["files"] = len(attest.file_hashes([r]))
out["hash_the_version"] = time.ticks_diff(time.ticks_us(), t0)
print(json.dumps(out))
"""


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20, help="repetitions of each lookup")
    ap.add_argument("--uf2", help="default: SHOE_PICO_UF2 (the stock MicroPython image)")
    a = ap.parse_args(argv)
    uf2 = a.uf2 or os.environ.get("SHOE_PICO_UF2")
    why = _emu.missing()
    if why or not uf2:
        print("bench_pico_fs: emulated Pico unavailable: %s" % (why or "no SHOE_PICO_UF2"))
        return
    d = Path(tempfile.mkdtemp(prefix="bench-pico-fs-"))
    keys = _emu.write_keys_file(d / "shoe.json")
    with _emu.Emulator(d / "state", uf2=uf2) as e:
        _emu.assemble(e, keys, reset=False)
        with _emu.service_repl(e) as dev:
            out = dev.run(ON_CHIP % a.n)
    r = json.loads(out.strip().splitlines()[-1])
    print(
        "emulated Pico, .mpy deploy (%s, %d files), chip time (ticks_us), mean of %d:"
        % (r["version"], r["files"], r["n"])
    )
    for depth in range(1, 6):
        print(
            "  os.stat %d deep: found %6.0f us, missing %6.0f us"
            % (depth, r["stat_found_%d" % depth], r["stat_missing_%d" % depth])
        )
    per = r["module_lookups_and_open"]
    print("  a submodule's three lookups and its open: %.0f us" % per)
    print(
        "  ... for the %d files of the version: %.0f ms; attest.file_hashes of it (the boot's "
        "firmware_sha256): %.0f ms"
        % (r["files"], per * r["files"] / 1e3, r["hash_the_version"] / 1e3)
    )


if __name__ == "__main__":
    main()
