"""The game engine on the emulated Raspberry Pi Pico (RP2040 at 125 MHz), in emulated time.

    .venv/bin/python bench/bench_pico_engine.py [--reps N] [--frozen]

Deploys the firmware to a fresh emulated Pico exactly as shipped (`.mpy` from mpy-cross -O1 via
host_tools.deploy, as `shoectl deploy --board pico` does; not provisioned, so the app does not
run) and times at its REPL with time.ticks_us (the chip's clock = emulated time: the emulator
skips idle time, never busy time), on fixed seeded inputs:

  - engine.evaluate_round of a six-seat FCF round with every side wager (prime, four card
    bonus, all six), and of a six-seat HCF round with every side wager: validate alone
    (engine.validate), settle alone (engine.settle), both (evaluate_round);
  - fcf.value5 per hand (500 seeded hands, the empty loop subtracted).

Each call is timed once after gc.collect() (collections are not in the figures); the median of
--reps calls is printed, beside the same code on the MicroPython unix port (the same .mpy
files, this machine, same run), the project's old estimate (unix x 160) and the chip/unix ratio.
Needs SHOE_PICO_UF2 and SHOE_RP2040_BOOTROM (see README); without them only the unix column.
"""

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench_engine import _DEAL  # noqa: E402  (the same seeded hands as bench_engine)

# Runs on both ports: prints one JSON line. FCF, HCF (round JSON) and REPS are prepended.
_CODE = (
    r"""
import gc, json, time
from shoe.games import engine, fcf
"""
    + _DEAL.lstrip("\n")
    + r"""def once(f, arg, reps):
    ts = []
    for _ in range(reps):
        gc.collect()
        t0 = time.ticks_us()
        f(arg)
        ts.append(time.ticks_diff(time.ticks_us(), t0))
    ts.sort()
    return ts[len(ts) // 2]
def v5_loop(h):
    v5 = fcf.value5
    for i in range(0, len(h), 5):
        v5(h[i], h[i + 1], h[i + 2], h[i + 3], h[i + 4])
def nop(a, b, c, d, e):
    return a
def empty_loop(h):
    for i in range(0, len(h), 5):
        nop(h[i], h[i + 1], h[i + 2], h[i + 3], h[i + 4])
def split(obj):
    if hasattr(engine, "validate"):
        return (engine.validate, engine.settle)
    # older firmware without the split: settle = the game's settle module with parsed input
    from shoe.games import fcfround, hcfround, paytable
    p = engine.parse_card
    g = obj["game"]
    n = 5 if g == engine.FCF else 7
    t = paytable.load(obj["paytable"], g)
    seats = [(k, [p(c, "x") for c in s["cards"]], s) for k, s in sorted(obj["seats"].items())]
    raises = [s["raise"] for k, i, s in seats]
    d = [p(c, "x") for c in obj["dealer"]]
    if g == engine.FCF:
        six = p(obj["all_six_card"], "x")
        rules = engine._rules(g, obj.get("rules"))
        def st(_):
            fcfround.settle({"type": "round_result", "game": g}, t, rules, d, six, seats,
                            raises, obj["dealer"], obj["all_six_card"])
    else:
        def st(_):
            hcfround.settle({"type": "round_result", "game": g}, t, None, d, seats, raises,
                            obj["dealer"])
    return (None, st)
out = {}
for name, obj in (("fcf", FCF), ("hcf", HCF)):
    engine.evaluate_round(obj)
    val, st = split(obj)
    full = once(engine.evaluate_round, obj, REPS)
    if val is not None:
        v = val(obj)
        s = once(st, v, REPS)
        out[name] = (once(val, obj, REPS), s, full)
    else:
        s = once(st, None, REPS)
        out[name] = (None, s, full)
H = deal(500, 12345)
out["value5"] = (once(v5_loop, H, 3) - once(empty_loop, H, 3)) / 500
print(json.dumps(out))
"""
)


def inputs():
    """The six-seat FCF and HCF rounds with every side wager (seeded, fixed)."""
    from tests.firmware.games.rounds import fcf_round, hcf_round

    rng = random.Random(11)
    while True:
        fcf = fcf_round(rng, 6, "fcf-public-1")
        if fcf["all_six_card"] is not None:
            break
    for s in fcf["seats"].values():
        a = s["wagers"]["ante"]
        s["wagers"].update(prime=a, four_card_bonus=a, all_six=a)
    hcf = hcf_round(random.Random(12), 6, "hcf-public-1")
    for s in hcf["seats"].values():
        a = s["wagers"]["ante"]
        s["wagers"].update(flush_bonus=a, straight_flush_bonus=a, progressive=a)
    return fcf, hcf


def program(reps):
    fcf, hcf = inputs()
    return "FCF = json.loads(%r)\nHCF = json.loads(%r)\nREPS = %d\n" % (
        json.dumps(fcf),
        json.dumps(hcf),
        reps,
    )


def unix(files, reps):
    from host_tools import runtime

    with tempfile.TemporaryDirectory() as d:
        for p, b in files.items():
            f = Path(d) / p
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_bytes(b)
        script = Path(d) / "bench_engine_unix.py"
        script.write_text("import json\n" + program(reps) + _CODE)
        p = subprocess.run(
            runtime.command([script], "192k"),
            env=dict(runtime.environment(), MICROPYPATH=d),
            cwd=d,
            capture_output=True,
            text=True,
            timeout=600,
        )
    if p.returncode:
        raise RuntimeError("MicroPython unix failed:\n" + p.stdout[-2000:] + p.stderr[-2000:])
    return json.loads(p.stdout.strip().splitlines()[-1])


def chip(reps, frozen=False):
    from host_tools import deploy as _deploy
    from host_tools import frozen as _frozen
    from host_tools.sim import emu as _emu

    uf2 = str(_frozen.DEFAULT_UF2) if frozen else None
    with tempfile.TemporaryDirectory() as d, _emu.Emulator(Path(d) / "state", uf2=uf2) as e:
        t0 = time.monotonic()
        if frozen:  # the firmware is in the image (no main.py: nothing runs but the REPL)
            print("  the frozen image %s (nothing copied: the app does not run)" % uf2)
        else:
            _deploy.deploy("pico", e.urls["repl"], progress=None)
            print(
                "  deployed to the emulated Pico in %.0f s (not provisioned: the app does not "
                "run)" % (time.monotonic() - t0)
            )
        sys.stdout.flush()
        with _deploy.Device(e.urls["repl"], op_timeout=900.0) as dev:
            if frozen:
                dev.run("import sys, json")
            else:
                dev.run("import main, sys, json\nsys.path.insert(0, main.firmware_dir())")
            dev.run(program(reps))
            dev._guard.deadline = time.monotonic() + 1800
            out, err = dev.t.exec_raw(_CODE, timeout=1800)  # Device.run waits 10 s at most
            if err:
                raise RuntimeError("the benchmark failed on the chip:\n" + err.decode()[-2000:])
    return json.loads(out.decode().strip().splitlines()[-1])


def _row(what, c, u):
    if c is None:
        print("  %-44s %10s %10.1f" % (what, "-", u))
        return
    print("  %-44s %10.1f %10.1f %10.0f %7.0fx" % (what, c, u, u * 160, c / u))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=15, help="timed calls per figure (median)")
    ap.add_argument(
        "--frozen",
        action="store_true",
        help="on the image with the firmware frozen in (build/pico-firmware/firmware.uf2, what "
        "ships) instead of the .mpy deploy on stock MicroPython",
    )
    args = ap.parse_args(argv if argv is not None else [])
    # the same sources, as the virtual board runs them (bytecode: native code is the frozen
    # image's alone, host_tools/flashnative.py)
    from host_tools import build
    from host_tools.sim import emu as _emu

    out = build.compile_shipped()
    u = unix(
        {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*.mpy")}, args.reps
    )
    why = _emu.missing()
    c = None
    if why:
        print("bench_pico_engine: chip skipped: emulated Pico unavailable: %s" % why)
    else:
        c = chip(args.reps, args.frozen)
    print(
        "engine on the chip (emulated RP2040, 125 MHz, time.ticks_us; %s) vs the unix port, "
        "median of %d calls, us:" % ("frozen image" if args.frozen else ".mpy deploy", args.reps)
    )
    print("  %-44s %10s %10s %10s %8s" % ("", "chip", "unix", "unix x160", "chip/unix"))
    for g, label in (
        ("fcf", "six-seat FCF, every side wager"),
        ("hcf", "six-seat HCF, every side wager"),
    ):
        cv, cs, cf = c[g] if c else (None, None, None)
        uv, us, uf = u[g]
        if uv is None:
            _row("%s: validate (= both - settle)" % label, None if c is None else cf - cs, uf - us)
        else:
            _row("%s: validate" % label, cv, uv)
        _row("%s: settle" % label, cs, us)
        _row("%s: validate + settle" % label, cf, uf)
    _row("fcf.value5, per hand", c["value5"] if c else None, u["value5"])
    if c:
        for issue, limit, game in ((10, 10000, "fcf"), (19, 6000, "fcf"), (19, 6000, "hcf")):
            print(
                "  target (issue %d): six-seat %s validate + settle <= %s us on the chip: %s"
                % (
                    issue,
                    game.upper(),
                    format(limit, ","),
                    "met" if c[game][2] <= limit else "NOT met",
                )
            )


if __name__ == "__main__":
    main(sys.argv[1:])
