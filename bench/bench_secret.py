"""What keeping face-down cards secret costs (docs/protocol.md section 10): wire bytes per card
event and per round, before (the card in clear, `deal_complete` with every hand) and after (a
16-byte commitment, a count, and the round's `reveal`), and the commitment's cost on CPython and
on the MicroPython unix port beside the HMAC-SHA256 it could have been.

    .venv/bin/python bench/bench_secret.py [--chip]

The events are the real table's (shoe.table.Table, a six-seat round of each game dealt from a
shuffled deck); "before" rewrites them as the firmware sent them until this change. Each is
sealed as the shoe seals a durable event (shoe.link.message.seal_message) and cut into frames as
the link sends it (120-byte fragments, every frame with its MAC, CRC, COBS and delimiter, under a
session key): the bytes on the cable. `--chip` times the commitment and the HMAC on the
emulated Pico too (the stock MicroPython image, the modules they need copied to its file system:
no shoe is assembled; needs SHOE_PICO_UF2 and SHOE_RP2040_BOOTROM). The commitment's share of a
whole card on the chip is bench/bench_pico_card.py's `commitment.commit` stage.
"""

import json
import random
import subprocess
import sys
import timeit
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import host_tools  # noqa: E402,F401 (the CPython `micropython` stand-in)
from host_tools import runtime  # noqa: E402
from shoe.cards import name  # noqa: E402
from shoe.commitment import commit  # noqa: E402
from shoe.link import codec, frame  # noqa: E402
from shoe.link.message import mac, seal_message  # noqa: E402
from shoe.link.sendqueue import FRAG  # noqa: E402
from shoe.table import Table  # noqa: E402

KEY = b"k" * 32
SESSION = b"s" * 16
FCF, HCF = "four-card-frenzy", "high-card-flush"


def round_events(game, seed):
    """(events after, events as before) of one six-seat round of `game`, dealt and decided."""
    from shoe.games import engine

    t = Table(engine=engine)
    t.command(
        "configure_supervised",
        {"game": game, "procedure": "manual-shoe", "shuffle_check": False},
        0,
    )
    deck = list(range(52))
    random.Random(seed).shuffle(deck)
    t.command("load_deck", {"serial": 0x3A7F, "back": "R"}, 0)
    for c in deck + [52]:
        t.card(0x3A7F, "R", c, 0)
    w = {"ante": 10, "odds": 10, "all_six": 5} if game == FCF else {"ante": 10}
    t.command("open_round", {"seats": {str(s): {"wagers": w} for s in range(1, 7)}}, 0)
    t.pop_events()
    for c in deck[: t.tracker.total]:
        t.card(0x3A7F, "R", c, 0)
    hands = t.tracker.hands()
    t.command("decisions", {str(s): 10 for s in range(1, 7)}, 0)
    after = [(k, b) for k, b in t.pop_events() if k in ("card", "deal_complete", "reveal")]
    before = []
    for k, b in after:
        if k == "card":
            before.append(
                (
                    k,
                    {
                        "round": b["round"],
                        "position": b["position"],
                        "card": name(deck[b["position"]]),
                        "target": b["target"],
                    },
                )
            )
        elif k == "deal_complete":
            before.append((k, {"round": b["round"], "hands": hands}))
    return after, before


def wire(kind, body, eseq):
    """Bytes on the cable for one durable event: sealed, cut into frames, each framed."""
    payload, _ = seal_message(KEY, kind, body, eseq, bytes(16))
    n = 0
    for i in range(0, len(payload), FRAG):
        ftype = frame.MORE if i + FRAG < len(payload) else frame.DATA
        n += len(
            frame.build(ftype, 300 + i, 299, payload[i : i + FRAG], key=SESSION, tag=b"SHOE2s")
        )
    return n


def sizes(events, eseq0=1000):
    out = {}
    for i, (k, b) in enumerate(events):
        out.setdefault(k, []).append(wire(k, b, eseq0 + i))
    return out


def micropython_costs(n=2000):
    """commit() and the HMAC alternative on the MicroPython unix port (microseconds)."""
    code = (
        r"""
import time, json
from shoe.commitment import commit
from shoe.link.message import mac
from shoe.link import codec
s = bytes(range(16))
n = %d
t = time.ticks_us()
for i in range(n):
    commit(s, 12, i %% 52, "dealer", "Td")
a = time.ticks_diff(time.ticks_us(), t) / n
t = time.ticks_us()
for i in range(n):
    mac(s, b"SHOE1card", codec.encode([12, i %% 52, "dealer", "Td"]))
b = time.ticks_diff(time.ticks_us(), t) / n
print(json.dumps({"commit_us": a, "hmac_us": b}))
"""
        % n
    )
    out = subprocess.run(
        runtime.command(["-c", code], "128k"),
        capture_output=True,
        text=True,
        env=runtime.environment(),
        cwd=ROOT,
        timeout=300,
    )
    if out.returncode:
        return {"error": (out.stdout + out.stderr)[-300:]}
    return json.loads(out.stdout.strip().splitlines()[-1])


_TIMING = r"""
import time, gc
from shoe.commitment import commit
from shoe.link.message import mac
from shoe.link import codec
def timed(n):
    s = bytes(range(16))
    mac(s, b"SHOE1card", b"")   # its pads made once (a round's first card)
    gc.collect()
    gc.disable()
    t = time.ticks_us()
    for i in range(n):
        commit(s, 12, i % 52, "dealer", "Td")
    a = time.ticks_diff(time.ticks_us(), t)
    gc.collect()
    t = time.ticks_us()
    for i in range(n):
        mac(s, b"SHOE1card", codec.encode([12, i % 52, "dealer", "Td"]))
    b = time.ticks_diff(time.ticks_us(), t)
    gc.enable()
    return a / n, b / n
"""
_CHIP_FILES = (
    "shoe/__init__.py",
    "shoe/errors.py",
    "shoe/crypto.py",
    "shoe/commitment.py",
    "shoe/link/__init__.py",
    "shoe/link/codec.py",
    "shoe/link/message.py",
)


def chip_costs(n=50):
    """commit() and the HMAC on the emulated RP2040 (microseconds of emulated time)."""
    import tempfile

    from host_tools.deploy import Device
    from host_tools.sim import emu

    why = emu.missing()
    if why:
        return {"error": "emulated Pico unavailable: %s" % why}
    with emu.Emulator(Path(tempfile.mkdtemp(prefix="bench-secret-")) / "state") as e:
        with Device(e.urls["repl"], timeout=120, op_timeout=600) as dev:
            dev.identify()
            dev.mkdirs(["shoe", "shoe/link"])
            for f in _CHIP_FILES:
                dev.write_file(f, (ROOT / "firmware" / f).read_bytes())
            dev.run(_TIMING)
            a, b = dev.value("timed(%d)" % n)
    return {"commit_us": a, "hmac_us": b}


def main(argv=None):
    chip = "--chip" in (sys.argv[1:] if argv is None else argv)
    print("secrecy (issue 18): card -> wire, six-seat rounds, manual shoe")
    for game, seed in ((FCF, 3), (HCF, 4)):
        after, before = round_events(game, seed)
        a, b = sizes(after), sizes(before)
        ca, cb = a["card"], b["card"]
        print(
            "  %s: card event on the wire: before %.1f bytes (min %d, max %d), after %.1f "
            "bytes (min %d, max %d): %+.1f a card (%.0f%%)"
            % (
                game,
                sum(cb) / len(cb),
                min(cb),
                max(cb),
                sum(ca) / len(ca),
                min(ca),
                max(ca),
                sum(ca) / len(ca) - sum(cb) / len(cb),
                100.0 * (sum(ca) / sum(cb) - 1),
            )
        )
        print(
            "    deal_complete: before %d bytes (every hand), after %d bytes (a count); "
            "reveal (new, %d cards + the secret): %d bytes"
            % (b["deal_complete"][0], a["deal_complete"][0], len(ca), a["reveal"][0])
        )
        tb, ta = sum(map(sum, b.values())), sum(map(sum, a.values()))
        print(
            "    the round's card, deal_complete and reveal events: before %d bytes, after %d "
            "bytes (%+d, %.1f ms more at 115200 baud)" % (tb, ta, ta - tb, (ta - tb) * 10 / 115.2)
        )
    s = bytes(range(16))
    n = 20000
    tc = timeit.timeit(lambda: commit(s, 12, 35, "dealer", "Td"), number=n) / n * 1e6
    th = (
        timeit.timeit(
            lambda: mac(s, b"SHOE1card", codec.encode([12, 35, "dealer", "Td"])), number=n
        )
        / n
        * 1e6
    )
    print(
        "  commitment, CPython: SHA-256 (one block) %.2f us, HMAC-SHA256 over the canonical "
        "CBOR (cached pads) %.2f us" % (tc, th)
    )
    mp = micropython_costs()
    if "error" in mp:
        print("  commitment, MicroPython unix port: %s" % mp["error"])
    else:
        print(
            "  commitment, MicroPython unix port: SHA-256 %.1f us, HMAC-SHA256 %.1f us (x%.1f)"
            % (mp["commit_us"], mp["hmac_us"], mp["hmac_us"] / mp["commit_us"])
        )
    if not chip:
        print("  commitment on the chip: --chip (and bench/bench_pico_card.py's stage)")
        return
    c = chip_costs()
    if "error" in c:
        print("  commitment, emulated RP2040: %s" % c["error"])
    else:
        print(
            "  commitment, emulated RP2040 (125 MHz, collector off): SHA-256 %.0f us, "
            "HMAC-SHA256 %.0f us (x%.1f)"
            % (c["commit_us"], c["hmac_us"], c["hmac_us"] / c["commit_us"])
        )


if __name__ == "__main__":
    main(sys.argv[1:])
