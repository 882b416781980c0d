"""Where a round card's chip time goes: the app's card path on the emulated Pico, stage by stage.

    .venv/bin/python bench/bench_pico_card.py [--cards 36] [--game fcf|hcf] [--frozen]

The shoe is assembled as shipped (`shoectl deploy --board pico`, `shoectl provision`) and booted
with the service jumper, so main.py builds the hardware and leaves the REPL free. At the REPL the
bench builds the app itself (`shoe.app.App(main.build())`: the real journal on the raw flash
rings, the real link on UART0), configures a six-seat table with every side wager, loads and
checks a deck (52 cards + cover card through `App.on_read`) and opens a round; then it deals the
round's cards through `App.on_read` + `App.pump` (what the reader task does for each card) and
times, with time.ticks_us on the chip (= emulated time), the whole card and each stage inside it
(stages are wrapped at the REPL, nothing in the firmware is instrumented; nested stages are
inside their parents). The first third of the cards run with the app's own collection
threshold (what the shoe sees), the second third with a collection before each card and the
collector off during it (the card without collections, and the bytes it allocates), the last
third with every stage wrapped (each wrapper's own cost is printed: subtract it per nested
call). After each card the host (ShoeLink on UART0) acknowledges its frame.

It complements bench_pico.py, whose card -> frame figure is taken from the rig's UART logs
(from the optical line's last byte to the frame's first byte on UART0).
Needs SHOE_PICO_UF2 and SHOE_RP2040_BOOTROM (see README).
"""

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from host_tools import frozen  # noqa: E402
from host_tools.link import ShoeLink  # noqa: E402
from host_tools.sim import emu as _emu  # noqa: E402
from shoe.cardcode import CardCodes  # noqa: E402
from shoe.cards import COVER  # noqa: E402

SERIAL = 0x3A7F
WAGERS = {
    "four-card-frenzy": {"ante": 10, "odds": 10, "prime": 5, "four_card_bonus": 5, "all_six": 5},
    "high-card-flush": {"ante": 10, "flush_bonus": 5, "straight_flush_bonus": 5},
}

# Runs at the chip's REPL after main.build() (service mode). STAGES: (object expression,
# attribute, label) pairs, wrapped once the app exists.
BUILD = (  # in steps, as main.py does it, so the REPL's own compiling fragments the heap less
    "import main, gc\nhw = main.build()\ngc.collect()",
    "from shoe import app as _A\ngc.collect()",
    "app = _A.App(hw)\napp.boot()\ngc.collect()",
)
SETUP = r"""
import time, json
T = {}
N = {}
ON = [False]   # stages are timed only inside card(), not while the link is serviced
P = {}         # stage -> [its time in each card timed with the collector off]
def _wrap(obj, attr, label):
    f = getattr(obj, attr)
    def w(*a, **k):
        if not ON[0]:
            return f(*a, **k)
        t = time.ticks_us()
        r = f(*a, **k)
        T[label] = T.get(label, 0) + time.ticks_diff(time.ticks_us(), t)
        N[label] = N.get(label, 0) + 1
        return r
    setattr(obj, attr, w)
_rx = bytearray(256)
def service(ms):
    # what the host task does: read UART0, feed the link, answer; plus the ticker task's pump;
    # until the host has acknowledged every frame (or ms have passed)
    t = time.ticks_ms()
    while time.ticks_diff(time.ticks_ms(), t) < ms:
        n = hw.host.readinto(_rx) if hw.host.any() else 0
        if n:
            app.on_host_bytes(memoryview(_rx)[:n], time.ticks_ms())
        app.pump()
        if app.link.up and not app.link._in_flight and not app.link._txq:
            return True
        time.sleep_ms(2)
    return app.link.up
def frame_cost(n):
    # one DATA frame of a card event's payload: encryption, MAC, CRC, COBS (what link.transmit
    # adds a card)
    from shoe.link import frame
    from shoe.link.cipher import Ctr
    from shoe.link.message import seal_message
    p, _ = seal_message(b"k" * 32, "card", {"round": 1, "position": 7, "target": "3",
                                            "commit": bytes(16)}, 9, bytes(16))
    out = bytearray()
    raw = bytearray(frame.MAX_FRAME)
    c = Ctr(b"e" * 16)
    gc.collect()
    t = time.ticks_us()
    for i in range(n):
        out = bytearray(b"\x00")
        frame.build_into(out, raw, frame.DATA, i, 0, c.crypt(1, frame.DATA, i + 1, p),
                         frame.VERSION, b"s" * 32, b"SHOE3s")
    return time.ticks_diff(time.ticks_us(), t) // n, len(p)
def commit_cost(n):
    # a dealt card's commitment (shoe.commitment: SHA-256, one block) beside the HMAC-SHA256
    # over the canonical CBOR it could have been (shoe.link.message.mac, cached pads)
    from shoe.commitment import commit
    from shoe.link.message import mac
    from shoe.link import codec
    s = bytes(range(16))
    mac(s, b"SHOE1card", b"")   # its pads made once (a round's first card)
    gc.collect()
    gc.disable()                # the calls alone, no collection in between
    t = time.ticks_us()
    for i in range(n):
        commit(s, 12, i % 52, "dealer", "Td")
    a = time.ticks_diff(time.ticks_us(), t) // n
    gc.collect()
    t = time.ticks_us()
    for i in range(n):
        mac(s, b"SHOE1card", codec.encode([12, i % 52, "dealer", "Td"]))
    b = time.ticks_diff(time.ticks_us(), t) // n
    gc.enable()
    return a, b
def overhead(n):
    # what one stage wrapper costs the card it is in (to read nested figures by)
    def nop():
        return 0
    class O:
        pass
    o = O()
    o.f = nop
    _wrap(o, "f", "_nop")
    ON[0] = True
    gc.collect()
    t = time.ticks_us()
    for i in range(n):
        o.f()
    d = time.ticks_diff(time.ticks_us(), t)
    t = time.ticks_us()
    for i in range(n):
        nop()
    d -= time.ticks_diff(time.ticks_us(), t)
    ON[0] = False
    T.pop("_nop", None)
    return d // n
def cmd(kind, body):
    r = app.on_command(kind, body, "supervisor")   # the bench is the supervisor too
    app.pump()
    return r.get("ok", True), r.get("reason")
def feed(codes):
    for c in codes:
        app.on_read("card", c)
        app.pump()
F = [0, -1, None]   # the card's start, its first write to the host UART after it (us), App._put
def _first_put(b):
    if F[1] < 0:
        F[1] = time.ticks_diff(time.ticks_us(), F[0])
    return F[2](b)
def card(code, collect):
    if F[2] is None and hasattr(app, "_put"):   # the app's writes to the host UART, timed
        F[2] = app._put
        app._put = _first_put
    if collect:
        gc.collect()
        gc.disable()
        m0 = gc.mem_free()
    ON[0] = True
    F[1] = -1
    t = F[0] = time.ticks_us()
    if hasattr(app, "take_read"):   # what the reader task does (its record held: App.take_read)
        app.take_read("card", code)
    else:   # an older image
        app.on_read("card", code)
        app.pump()
    d = time.ticks_diff(time.ticks_us(), t)
    ON[0] = False
    if T:   # this card's stages, kept per card (the report gives medians)
        for k in T:
            P.setdefault(k, []).append(T[k])
        T.clear()
    a = 0
    if collect:
        a = m0 - gc.mem_free()
        gc.enable()
    return d, a, F[1]
"""

# (module or object expression at the REPL, attribute, label); wrapped only if present
_M = "__import__('shoe.%s', None, None, ['x'])"
STAGES = (
    ("app.codes", "parse", "card code check"),
    (_M % "cardcode", "hmac_sha256", "  HMAC-SHA256"),
    ("app.table", "card", "table.card"),
    ("app.table.ledger", "classify", "  ledger.classify"),
    ("app.table", "_dealt", "  table._dealt"),
    (_M % "table", "commit", "    commitment.commit"),
    ("app.table.tracker", "place", "    tracker.place"),
    ("app.table", "_op", "    table._op"),
    ("app.table", "_emit", "    table._emit"),
    ("app.table", "_after", "  table._after"),
    ("app.table", "state", "table.state()"),
    ("app.table", "take_delta", "table.take_delta"),
    ("_A", "for_wire", "wire.for_wire"),
    ("app.link", "send_many", "link.send_many (seal + journal)"),
    (_M % "link.sendqueue", "seal", "  seal (message)"),
    (_M % "link.message", "mac", "    message.mac (HMAC)"),
    (_M % "link.message.codec", "encode", "    codec.encode (all callers)"),
    ("app.journal", "outbox_add", "  journal.outbox_add"),
    (_M % "journal.journal", "chain_head", "    journal.chain_head"),
    (_M % "journal.journal.delta", "diff", "    delta.diff"),
    (_M % "journal.journal.delta", "apply", "    delta.apply"),
    ("app.journal", "_append", "    journal._append (encode + flash)"),
    ("app.journal._store", "append", "      store.append (ring program)"),
    ("app.link", "transmit", "link.transmit"),
    ("app.link", "_send_frame", "  endpoint._send_frame"),
    (_M % "link.frame", "build_into", "    frame.build_into"),
    (_M % "link.frame", "frame_mac", "      frame_mac (HMAC)"),
    (_M % "link.frame.cobs", "encode_into", "      cobs.encode_into"),
    ("app", "_show_phase", "app._show_phase"),
    ("app.per", "on_read", "peripherals.on_read"),
    ("hw.host", "write", "UART0 write"),
)


def ms(us):
    return us / 1000.0


class Chip:
    def __init__(self, dev):
        self.dev = dev

    def run(self, code, timeout=600):
        self.dev._guard.deadline = time.monotonic() + timeout + 5
        out, err = self.dev.t.exec_raw(code, timeout=timeout)
        if err:
            raise RuntimeError("chip: %s" % err.decode()[-600:])
        return out.decode()

    def value(self, expr, timeout=600):
        import ast

        return ast.literal_eval(self.run("print(repr(%s))" % expr, timeout).strip())


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cards", type=int, default=36, help="round cards to time (even)")
    ap.add_argument("--game", choices=["fcf", "hcf"], default="fcf")
    ap.add_argument(
        "--frozen",
        action="store_true",
        help="the image with the firmware frozen in (build/pico-firmware/firmware.uf2, what "
        "ships): main.py copied and provisioned as bench_pico.py --frozen does, no deploy",
    )
    args = ap.parse_args(argv if argv is not None else [])
    why = _emu.missing()
    if why:
        print("bench_pico_card: skipped: emulated Pico unavailable: %s" % why)
        return
    game = "four-card-frenzy" if args.game == "fcf" else "high-card-flush"
    d = Path(tempfile.mkdtemp(prefix="bench-card-"))
    keys_file = _emu.write_keys_file(d / "shoe.json")
    codes = CardCodes(_emu.EMU_KEYS["card"])
    mk = lambda c: codes.make(SERIAL, "R", c)  # noqa: E731
    deck = list(range(52))
    random.Random(11).shuffle(deck)
    check = [mk(c) for c in deck] + [mk(COVER)]
    per_hand = 5 if game == "four-card-frenzy" else 7
    total = per_hand * 7 + (1 if game == "four-card-frenzy" else 0)
    n = min(args.cards, total)
    round_cards = [mk(c) for c in deck[:n]]
    uf2 = None
    if args.frozen:
        from bench_pico import assemble_frozen

        uf2 = str(frozen.DEFAULT_UF2)
        asm = assemble_frozen(d / "state", "rfid", keys_file, uf2)  # the Pico's own wiring
    with _emu.Emulator(d / "state", uf2=uf2) as e:
        if not args.frozen:
            asm = _emu.assemble(e, keys_file, reset=False)
        dev = _emu.service_repl(e)  # the service jumper: main.py leaves the REPL free
        with dev:
            chip = Chip(dev)
            for step in BUILD:
                chip.run(step)
            chip.run(SETUP)
            keys = _emu.EMU_KEYS
            link = ShoeLink(e.urls["uart0"], keys["shoe"], supervisor_key=keys["supervisor"])
            link.start()  # the host: handshake, then it acknowledges every event
            for _ in range(20):
                if chip.value("service(500)") and chip.value("app.link.up"):
                    break
            else:
                raise SystemExit("bench_pico_card: the link to the host did not come up")
            seats = {str(s): {"wagers": WAGERS[game]} for s in range(1, 7)}
            for kind, body in (
                ("configure_supervised", {"game": game, "procedure": "manual-shoe"}),
                ("load_deck", {"serial": "%04X" % SERIAL, "back": "R"}),
            ):
                ok = chip.value("cmd(%r, %r)" % (kind, body))
                if not ok[0]:
                    raise SystemExit("bench_pico_card: %s refused: %s" % (kind, ok[1]))
            chip.run("feed(%r)" % [c.encode() for c in check])
            phase = chip.value("app.table.current_phase()")
            if phase != "open_round":
                raise SystemExit("bench_pico_card: the deck check did not pass (phase %s)" % phase)
            ok = chip.value("cmd('open_round', %r)" % ({"seats": seats},))
            if not ok[0]:
                raise SystemExit("bench_pico_card: open_round refused: %s" % ok[1])
            third = n // 3
            clean_gc, clean, wrapped = [], [], []
            for i, c in enumerate(round_cards):
                if i == 2 * third:  # the last third: stage by stage
                    for obj, attr, label in STAGES:
                        chip.run(
                            "try:\n    _o = %s\n    _wrap(_o, %r, %r) if hasattr(_o, %r) "
                            "else None\nexcept Exception as _e:\n    print('no stage', %r, "
                            "_e)\n" % (obj, attr, label, attr, label)
                        )
                collect = i >= third
                dt, alloc, first = chip.value("card(%r, %s)" % (c.encode(), collect))
                (clean_gc if i < third else clean if i < 2 * third else wrapped).append(
                    (dt, alloc, first)
                )
                if not chip.value("service(3000)"):  # the host's ack arrives and is handled
                    print("  WARNING: the host had not acknowledged card %d after 3 s" % i)
            over = chip.value("overhead(200)")
            fcost = chip.value("frame_cost(50)")
            ccost = chip.value("commit_cost(20)")
            stages = chip.value("(P, N)")
            thr = chip.value("app.gcpacer.threshold")
            free = chip.value("(gc.collect(), gc.mem_free())[1]")
            dealt = chip.value("app.table.tracker.n")
            chip.value("service(3000)")
            link.close()
            got = 0
            while not link.events.empty():
                ev = link.events.get()
                got += ev[0] == "card" if isinstance(ev, tuple) else 0
    print(
        "emulated Pico (%s): %s, six seats, every side wager; %d round cards "
        "through App.on_read + App.pump, chip time (ticks_us = emulated time)"
        % (
            "frozen image, main.py copied"
            if args.frozen
            else "deploy %.0f s wall" % asm["deploy_s"],
            game,
            n,
        )
    )
    if dealt != n:
        print("  WARNING: the table placed %d of %d cards (a card was refused)" % (dealt, n))
    print("  the host (ShoeLink on UART0) received %d card events" % got)
    if got < n:
        print(
            "  WARNING: the link stalled (frames in flight were not acknowledged): the figures "
            "below include retransmissions or no frame at all; link.transmit is not "
            "representative. One card event's DATA frame alone (MAC + CRC + COBS, %d-byte "
            "payload) costs %.2f ms; bench_pico.py gives card -> frame end to end"
            % (fcost[1], fcost[0] / 1000.0)
        )
    ts = [ms(x) for x, _, _ in clean_gc]
    print(
        "  as the shoe runs (the app's collection threshold, %d B): median %.2f ms, max %.2f ms "
        "(%d cards)" % (thr, statistics.median(ts), max(ts), len(ts))
    )
    fs = [ms(f) for _, _, f in clean_gc + clean if f >= 0]
    if fs:
        print(
            "  ... to its frame's first bytes handed to the host UART (the record held back and "
            "programmed after them, App.take_read): median %.2f ms, max %.2f ms (%d cards)"
            % (statistics.median(fs), max(fs), len(fs))
        )
    ts = [ms(x) for x, _, _ in clean]
    al = [a for _, a, _ in clean]
    print(
        "  collector off during the card (collected before it): median %.2f ms, max %.2f ms; "
        "allocates median %d B, max %d B a card (%d cards)"
        % (statistics.median(ts), max(ts), statistics.median(al), max(al), len(ts))
    )
    without = wrapped
    ts = [ms(x) for x, _, _ in wrapped]
    print(
        "  with every stage wrapped (collector off): median %.2f ms; one wrapper costs %.0f us "
        "of its parent's time" % (statistics.median(ts), over)
    )
    t, k = stages
    print(
        "  stages, collector off (median over the cards that reached the stage, with the "
        "number of calls; nested stages indented, inside their parent):"
    )
    for _, _, label in STAGES:
        if label in t:
            xs = t[label] + [0] * (len(without) - len(t[label]))
            print(
                "    %-40s %7.2f ms  (max %6.2f; %d calls)"
                % (label, ms(statistics.median(xs)), ms(max(xs)), k[label])
            )
    print(
        "  a card's commitment (commit_cost, 20 calls, collector off): %.2f ms (SHA-256, one "
        "block); the HMAC-SHA256 over the canonical CBOR instead: %.2f ms"
        % (ms(ccost[0]), ms(ccost[1]))
    )
    print("  heap free after the cards (collected): %d B" % free)
    print(
        json.dumps(
            {
                "clean_gc_us": [x for x, _, _ in clean_gc],
                "clean_us": [x for x, _, _ in clean],
                "first_write_us": [f for _, _, f in clean_gc + clean],
                "alloc": al,
                "wrapped_us": [x for x, _, _ in wrapped],
                "stages_us": t,
            }
        )
    )


if __name__ == "__main__":
    main(sys.argv[1:])
