"""Machine code (`@micropython.native`) gives exactly what CPython gives running the same source
as plain Python. Every native function of the firmware is native in the frozen image only (a line
`# frozen: @micropython.native` above its def, host_tools/flashnative.py): in flash it costs no
RAM, while a `.mpy` deploy would load it into the chip's heap (~2x its bytecode) and the unix
port's 64 KB `shoectl eval` runs out with it. So the tests here compile the frozen image's copy
of the sources native for this machine and run it on the unix port: random values (hypothesis)
encoded byte for byte as CPython encodes them, errors included, and seeded rounds of both games
settled line for line as CPython settles them.
"""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from host_tools import build, flashnative
from host_tools.runtime import FIRMWARE
from shoe.link import codec
from tests.firmware.link.helpers import run_fw

# every function the frozen image has as machine code, as "module.function"; the test below
# fails when one is added or removed without this list (and so without its equality check)
FLASH_NATIVE = {
    # the per-card byte work: every card's event, its seal and its journal record
    "shoe.link.codec._head",
    "shoe.link.codec._order",
    "shoe.link.codec._enc",
    # the six-seat round's validate + settle (test_flash_native_game_modules_equal_cpython)
    "shoe.games.settle.wager",
    "shoe.games.settle.pay",
    "shoe.games.settle.net_of",
    "shoe.games.settle.pick",
    "shoe.games.engine.parse_cards",
    "shoe.games.engine._seat_cards",
    "shoe.games.engine.validate",
    "shoe.games.fcf._flush4",
    "shoe.games.fcf._top4",
    "shoe.games.fcf.value5",
    "shoe.games.allsix._run5",
    "shoe.games.allsix.category",
    "shoe.games.fcfround.best_names",
    "shoe.games.fcfround.settle",
    # viper (machine ints): test_flash_viper_hcf_equals_cpython
    "shoe.games.hcf.flush_value",
    "shoe.games.hcf.flush_suit",
    "shoe.games.hcf.flush_names",
    "shoe.games.hcf.straight_flush",
    "shoe.games.hcf._run",
    "shoe.games.hcfround._pay",
    "shoe.games.hcfround._flush",
    "shoe.games.hcfround.settle",
}
HOLDING = sorted({"/".join(n.split(".")[:-1]) + ".py" for n in FLASH_NATIVE})


@pytest.fixture(scope="module")
def stage(tmp_path_factory):
    """The frozen image's copy of the sources (as tools/build_pico_firmware.sh writes it)."""
    out = tmp_path_factory.mktemp("frozen-src")
    assert sorted(flashnative.stage(out)) == HOLDING
    return out


@pytest.fixture(scope="module")
def flash_fw(stage, tmp_path_factory):
    """That copy compiled for this machine (host_tools/build.py, as the virtual board's), checked
    to hold native code exactly where the markers are (the .mpy header's arch, bits 2-7 of byte
    2), so the tests below run machine code."""
    pairs = [(stage / p, p) for p in build.shipped_files()]
    out = build.compile_files(pairs, tmp_path_factory.mktemp("flash-native-mpy"))
    for p in build.shipped_files():
        arch = (out / p).with_suffix(".mpy").read_bytes()[2] >> 2
        assert (arch != 0) == (p in HOLDING), p
    return out


_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**66), max_value=2**66)
    | st.integers(min_value=-300, max_value=70000)
    | st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40)
    | st.binary(max_size=300)
    | st.floats(allow_nan=False, allow_infinity=False)
)
_keys = st.text(max_size=8, alphabet=st.characters(blacklist_categories=("Cs",))) | st.integers(
    min_value=-70000, max_value=70000
)
_values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=30)
        | st.tuples(inner, inner)
        | st.dictionaries(_keys, inner, max_size=6)
    ),
    max_leaves=40,
)
_deep = st.integers(min_value=10, max_value=14).map(lambda d: eval("[" * d + "1" + "]" * d))

# every branch of the encoder and each of its errors, beside the random values
FIXED = [
    0,
    23,
    24,
    255,
    256,
    65535,
    65536,
    2**32 - 1,
    2**32,
    2**64 - 1,
    2**64,
    -1,
    -24,
    -25,
    -(2**64),
    -(2**64) - 1,
    "",
    "x" * 23,
    "x" * 24,
    "\u00e9\u20ac",
    # under 24 characters, 24 bytes and more: MicroPython's str-as-buffer path gives way
    "\u00e9" * 12,
    "\u20ac" * 10,
    {"\u00e9" * 12: 1, "a": 2, "\u00e9": 3},
    b"",
    b"\0" * 24,
    bytearray(b"ab"),
    1.5,
    -0.0,
    True,
    False,
    None,
    [],
    (),
    {},
    list(range(24)),
    {"b": 1, "a": 2, 10: 3, -1: 4, "aa": 5},
    {i: i for i in range(24)},
    {True: 1},
    {1.5: 1},
    # a shape kept for int keys is not one for the keys that equal them (True == 1 == 1.0)
    {1: 1},
    {True: 1},
    {1.0: 1},
    {0: "a", 1: "b"},
    {False: "a", True: "b"},
    {0: "a", 1.0: "b"},
    {(1,): 2},
    {b"k": 1},
    set(),
    [[[[[[[[[[[[1]]]]]]]]]]]],
    [[[[[[[[[[[[[1]]]]]]]]]]]]],
    {"card": {"round": 1, "position": 7, "commit": bytes(16)}},
]

RUN = r"""
import sys
from binascii import hexlify
from shoe.link import codec
for line in open(sys.argv[1]):
    v = eval(line)
    try:
        print(hexlify(codec.encode(v)).decode())
    except codec.CodecError as e:
        print("error " + e.reason)
"""


def _cpython(v):
    try:
        return codec.encode(v).hex()
    except codec.CodecError as e:
        return "error " + e.reason


def test_the_native_list_is_the_firmwares(fw_build):
    """FLASH_NATIVE is what the sources mark; nothing is native outside the frozen image (the
    .mpy files of a deploy and of the virtual board hold no machine code)."""
    found, flash = set(), set()
    for path in (FIRMWARE / "shoe").rglob("*.py"):
        mod = ".".join(path.relative_to(FIRMWARE).with_suffix("").parts)
        text = path.read_text()
        found.update(mod + "." + name for name in flashnative.native_functions(text))
        flash.update(mod + "." + name for name in flashnative.marked(text))
    assert found == set()
    assert flash == FLASH_NATIVE
    assert all(m.read_bytes()[2] >> 2 == 0 for m in (fw_build / "shoe").rglob("*.mpy"))


@settings(max_examples=1, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(_values | _deep, min_size=300, max_size=300))
def test_codec_encode_native_equals_cpython(flash_fw, tmp_path_factory, values):
    path = tmp_path_factory.mktemp("native") / "values.txt"
    values = values + FIXED
    path.write_text("".join(repr(v) + "\n" for v in values), encoding="utf-8")
    got = run_fw(flash_fw, RUN, args=(str(path),), heap="1m").splitlines()
    want = [_cpython(v) for v in values]
    assert len(got) == len(want)
    for v, g, w in zip(values, got, want):
        assert g == w, v


@settings(max_examples=2, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.integers(min_value=0, max_value=2**32))
def test_flash_native_game_modules_equal_cpython(flash_native_build, seed):
    """The frozen image's copy of the game modules (markers made decorators), compiled native
    for this machine and run on the unix port (at 1 MB: native code costs the unix port heap,
    which is why only the frozen image has it), settles seeded rounds of both games, every 5th
    broken, exactly as CPython does."""
    from host_tools.engine.evaluate import Evaluator
    from tests.firmware.games.rounds import stream

    lines = stream(seed=seed, count=150, bad_every=5)
    with Evaluator("micropython", heap="1m", firmware=flash_native_build) as ev:
        m = list(ev.results(lines))
    with Evaluator("cpython") as ev:
        c = list(ev.results(lines))
    assert len(m) == len(c) == 150
    assert any('"round_result"' in x for x in m) and any('"error"' in x for x in m)
    for i, (a, b) in enumerate(zip(m, c), 1):
        assert a == b, "line %d differs:\n%s\n%s" % (i, a, b)


@pytest.fixture(scope="module")
def flash_native_build(stage, tmp_path_factory):
    """The engine (`shoectl eval`'s modules) compiled from the frozen image's copy."""
    from host_tools.engine.evaluate import compiled_firmware

    out = compiled_firmware(sources=stage, out=tmp_path_factory.mktemp("flash-native-engine"))
    assert out is not None
    assert (out / "shoe" / "games" / "engine.mpy").read_bytes()[2] >> 2 != 0
    return out


@pytest.fixture(params=["bytecode", "native"])
def either_fw(request, fw_build, flash_fw):
    """The firmware as the unix port and a deploy run it, and as the frozen image (native)."""
    return fw_build if request.param == "bytecode" else flash_fw


def test_a_kept_shape_never_encodes_the_keys_that_only_equal_its_own(either_fw):
    """The encoder keeps each dict shape's canonical order by the tuple of its keys. True, False
    and 1.0 equal 1 and 0 (and hash alike), so a shape kept for int keys would take a dict keyed
    by them, and encode True as the key 1: each must still be refused ("key"), on both ports."""
    seq = [{1: 1}, {True: 1}, {1.0: 1}, {0: "a", 1: "b"}, {False: "a", True: "b"}, {0: 1, 1.0: 2}]
    want = ["a10101", "error key", "error key", "a2006161016162", "error key", "error key"]
    assert [_cpython(v) for v in seq] == want
    got = run_fw(either_fw, "from shoe.link import codec\n" + _MPY_SEQ % repr(seq)).splitlines()
    assert got == want


_MPY_SEQ = r"""
from binascii import hexlify
for v in %s:
    try:
        print(hexlify(codec.encode(v)).decode())
    except codec.CodecError as e:
        print("error " + e.reason)
"""


def test_a_subclass_of_str_as_a_key_is_encoded_as_its_text(either_fw):
    """A key that is a str subclass is encoded as the str, before and after the plain str's
    shape is kept (MicroPython's short-key path writes only exact strs)."""
    code = (
        "from binascii import hexlify\nfrom shoe.link import codec\n"
        "class S(str):\n    pass\n"
        "for d in ({S('a'): 1}, {'a': 1}, {S('a'): 1}):\n"
        "    print(hexlify(codec.encode(d)).decode())\n"
    )
    assert run_fw(either_fw, code).split() == ["a1616101"] * 3

    class S(str):
        pass

    assert [codec.encode(d).hex() for d in ({S("a"): 1}, {"a": 1}, {S("a"): 1})] == [
        "a1616101"
    ] * 3


_HCF_RUN = r"""
import sys
from shoe.games import hcf
for line in open(sys.argv[1]):
    h = [int(x) for x in line.split()]
    v = hcf.flush_value(h)
    c, sf = hcf.flush_and_straight(h, v)
    n, sf2 = hcf.flush_names(h, ["n%d" % x for x in h], v)
    c = " ".join(str(x) for x in c)
    print(v, hcf.flush_suit(h), sf, hcf.straight_flush(h), sf2, c, " ".join(n))
import micropython
def locked(h):  # locals only: a module-level name would grow the globals dict
    micropython.heap_lock()  # the raise check's and the counts' functions allocate nothing
    try:
        return hcf.flush_value(h) + hcf.flush_suit(h) + hcf.straight_flush(h)
    finally:
        micropython.heap_unlock()
print("locked", locked([0, 4, 8, 12, 16, 20, 24]))
"""


def _hcf_line(h):
    from shoe.games import hcf

    v = hcf.flush_value(h)
    c, sf = hcf.flush_and_straight(h, v)
    n, sf2 = hcf.flush_names(h, ["n%d" % x for x in h], v)
    return "%d %d %d %d %d %s %s" % (
        v,
        hcf.flush_suit(h),
        sf,
        hcf.straight_flush(h),
        sf2,
        " ".join(map(str, c)),
        " ".join(n),
    )


def test_flash_viper_hcf_equals_cpython(flash_fw, tmp_path):
    """HCF's hand functions are viper in the frozen image (machine ints, the suit masks in
    locals): compiled so for this machine, they give what CPython gives for 5,000 random hands
    and for every straight flush of 3 to 7 cards in each suit (ace low and high) with the other
    cards of the hand in other suits, and for two suits holding the same ranks; flush_value,
    flush_suit and straight_flush allocate nothing."""
    import random

    rng = random.Random(20261205)
    hands = [rng.sample(range(52), 7) for _ in range(5000)]
    for suit in range(4):
        for n in range(3, 8):
            for top in range(n - 2, 13):  # ranks top-n+1..top, -1 the ace low
                run = [(r % 13) << 2 | suit for r in range(top - n + 1, top + 1)]
                rest = [c for c in range(52) if c & 3 != suit][: 7 - n]
                hands.append(run + rest)
    hands.append([0, 1, 4, 5, 8, 9, 50])  # two suits with the same three ranks
    assert all(len(set(h)) == 7 for h in hands)
    from shoe.games import hcf

    h = [0, 4, 8, 12, 16, 20, 24]
    path = tmp_path / "hands.txt"
    path.write_text("".join(" ".join(map(str, h)) + "\n" for h in hands))
    got = run_fw(flash_fw, _HCF_RUN, args=(str(path),), heap="1m").splitlines()
    assert got[-1] == "locked %d" % (
        hcf.flush_value(h) + hcf.flush_suit(h) + hcf.straight_flush(h)
    )
    assert got[:-1] == [_hcf_line(h) for h in hands]
