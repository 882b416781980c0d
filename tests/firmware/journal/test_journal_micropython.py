"""The journal under MicroPython with a 64 KB data heap (bytecode aside, as on a board with frozen
firmware; see tests/firmware/link/helpers.py) on a real directory: the same records, recovery
of a torn tail, compaction, rounds; and program attestation identical to CPython's."""

import json

from shoe import attest
from shoe.journal import log
from shoe.journal.journal import Journal
from tests.firmware.link.helpers import CODE_ROOM, DATA_HEAP_PRELUDE, run_fw
from tests.mpy import run_mpy

KEY = b"k" * 32

SCRIPT = (
    DATA_HEAP_PRELUDE
    + r"""
import sys, os, json, gc
from shoe.journal.journal import Journal
from shoe.link.endpoint import Endpoint
_ballast = _data_heap(64 * 1024)  # a device's 64 KB heap from here on
root, phase = sys.argv[1], sys.argv[2]
if phase == "write":
    j = Journal(root, max_bytes=4096)
    ep = Endpoint("shoe", b"k" * 32, store=j, shoe_id="M")
    for i in range(150):
        ep.send_many([("card", {"n": i})], state={"n": i})
        if i % 4 == 3:
            j.outbox_ack(j.eseq - 3, i)
            ep.transmit(i)  # (not connected: a HELLO; forgets the acknowledged events)
    for r in range(130):
        j.add_round(r, "round_result", {"round": r})
    j.close()
    gc.collect()
    print(json.dumps({"compactions": j.compactions, "writes": j.writes, "free": gc.mem_free()}))
else:
    j = Journal(root, max_bytes=4096)
    print(json.dumps({"state": j.state, "ctr": j.ctr, "eseq": j.eseq, "boot": j.boot,
                      "outbox": [e for e, p in j.outbox()],
                      "rounds": j.round_numbers()[-3:], "r100": j.round(100),
                      "torn": j.recovered_torn, "recovery": j.recovery,
                      "chain": "".join("%02x" % b for b in j.chain)}))
"""
)


def test_journal_under_micropython_in_a_64k_data_heap_with_a_torn_tail(tmp_path, fw_build):
    script = tmp_path / "jmain.py"
    script.write_text(SCRIPT)
    state = tmp_path / "state"
    state.mkdir()
    out = run_mpy(
        str(script), heap=CODE_ROOM, extra_path=(str(fw_build),), args=(str(state), "write")
    )
    w = json.loads(out.splitlines()[-1])
    assert w["compactions"] >= 2 and w["free"] > 8000
    # CPython reads what MicroPython wrote
    j = Journal(str(state), max_bytes=4096)
    assert j.state == {"n": 149}
    want_outbox = [e for e, p in j.outbox()]
    assert want_outbox == [146, 147, 148, 149, 150]
    j.close()
    # tear the last record (the boot record CPython just wrote is complete; add a torn one:
    # the first bytes of a record, as a write cut short leaves them)
    with open(state / "journal.log", "ab") as f:
        f.write(log.pack(b"\x85aP\x18\x97\x81\x42partial payload")[:14])
    out = run_mpy(
        str(script), heap=CODE_ROOM, extra_path=(str(fw_build),), args=(str(state), "read")
    )
    r = json.loads(out.splitlines()[-1])
    assert r["state"] == {"n": 149} and r["outbox"] == want_outbox and r["torn"] == 1
    assert r["recovery"] is None and r["eseq"] == 150  # a cut write: not damage
    assert r["boot"] == 3
    assert r["rounds"] == [127, 128, 129] and r["r100"] == ["round_result", {"round": 100}]
    assert r["chain"] == Journal(str(state), max_bytes=4096).chain.hex()


def test_attestation_is_identical_on_both_runtimes(tmp_path, fw_build):
    fw = tmp_path / "fw"
    (fw / "shoe" / "sub").mkdir(parents=True)
    (fw / "shoe" / "a.py").write_bytes(b"print('a')\n")
    (fw / "shoe" / "sub" / "b.mpy").write_bytes(bytes(range(256)) * 5)
    (fw / "shoe" / "__pycache__").mkdir()
    (fw / "shoe" / "__pycache__" / "x.pyc").write_bytes(b"ignored")
    (fw / "main.py").write_bytes(b"import shoe\n")
    roots = [str(fw / "shoe"), str(fw / "main.py")]
    nonce = b"0123456789abcdef"
    want = attest.attest(KEY, nonce, roots)
    assert want["files"] == 3
    assert [n for n, _ in attest.file_hashes(roots)] == ["main.py", "shoe/a.py", "shoe/sub/b.mpy"]
    out = run_fw(
        fw_build,
        "import json\nfrom shoe import attest\n"
        "a = attest.attest(b'k' * 32, b'0123456789abcdef', %r)\n"
        "print(json.dumps([a['files'], ''.join('%%02x' %% x for x in a['manifest']),"
        " ''.join('%%02x' %% x for x in a['mac'])]))\n" % roots,
    )
    files, manifest, mac = json.loads(out.splitlines()[-1])
    assert (files, manifest, mac) == (3, want["manifest"].hex(), want["mac"].hex())
    from host_tools.link import verify_attestation

    assert verify_attestation(want, KEY, nonce, roots)[0]
    (fw / "shoe" / "a.py").write_bytes(b"print('tampered')\n")
    assert not verify_attestation(want, KEY, nonce, roots)[0]
    assert not verify_attestation(want, KEY, b"another-nonce-16", roots)[0]


TORN = (
    DATA_HEAP_PRELUDE
    + r"""
import sys, os, json, gc
from shoe.journal.journal import Journal
from shoe.link.endpoint import Endpoint
_ballast = _data_heap(64 * 1024)
root = sys.argv[1]
path = root + "/journal.log"
j = Journal(root)
ep = Endpoint("shoe", b"k" * 32, store=j, shoe_id="M")
for i in range(5):
    ep.send_many([("card", {"n": i})], state={"n": i})
j.close()
j = Journal(root)
want = [j.state, j.eseq, j.ctr, j.outbox(), j.chain]
size0 = os.stat(path)[6]
ep = Endpoint("shoe", b"k" * 32, store=j, shoe_id="M")
ep.send_many([("round_result", {"round": 1, "net": 40})], state={"n": 99})
j.close()
with open(path, "rb") as f:
    full = f.read()
with open(root + "/marks", "rb") as f:
    marks = f.read()
bad = []
for k in range(len(full) - size0):
    for mode in (0, 1):
        if mode == 0:
            torn = full[:size0 + k]
        else:
            b = bytearray(full)
            b[size0 + k] ^= 0x5A
            torn = bytes(b)
        with open(path, "wb") as f:
            f.write(torn)
        with open(root + "/marks", "wb") as f:
            f.write(marks)
        r = None
        gc.collect()
        r = Journal(root)
        rec = r.recovery
        if mode == 0 or (k == 2 and rec is None):  # a cut write: the state before it
            ok = [r.state, r.eseq, r.outbox(), r.chain] == [want[0], want[1], want[3], want[4]] \
                and rec is None
        else:  # all there but it does not check: damage; above every number it may have used
            ok = rec is not None and rec["tail"] and r.eseq > want[1] + 1 \
                and [r.state, r.outbox()] == [want[0], want[3]]
        if not ok or r.ctr < want[2]:
            bad.append([mode, k])
        r.close()
print(json.dumps({"offsets": len(full) - size0, "bad": bad}))
"""
)


def test_micropython_recovers_a_torn_write_at_every_offset(tmp_path, fw_build):
    script = tmp_path / "torn.py"
    script.write_text(TORN)
    state = tmp_path / "state"
    state.mkdir()
    out = run_mpy(str(script), heap=CODE_ROOM, extra_path=(str(fw_build),), args=(str(state),))
    r = json.loads(out.splitlines()[-1])
    assert r["offsets"] > 40 and r["bad"] == []


CORRUPT = (
    DATA_HEAP_PRELUDE
    + r"""
import sys, os, json, gc, struct
from shoe.journal.journal import Journal
from shoe.link.endpoint import Endpoint
_ballast = _data_heap(64 * 1024)
root = sys.argv[1]
path = root + "/journal.log"


def snap(j):
    return [j.state, j.ctr, j.eseq, j.chain, j.outbox()]


j = Journal(root, max_bytes=1 << 20)
ep = Endpoint("shoe", b"k" * 32, store=j, shoe_id="M")
kinds, truths = ["B"], [snap(j)]
for i in range(6):
    st = {"n": i, "cards": "0a" * i, "seen": "%014x" % (1 << i)}
    ep.send_many([("card", {"n": i})], state=st)
    kinds.append("P")
    truths.append(snap(j))
    if i == 2:
        j.set_ctr(7)
        kinds.append("C")
        truths.append(snap(j))
    if i == 3:
        j.outbox_add([], state={"n": 33})  # a state change alone
        kinds.append("P0")
        truths.append(snap(j))
j.close()
j = ep = None
truths = [[t[0], t[1], t[2]] for t in truths[:-1]] + [truths[-1]]  # (state, ctr, eseq) suffice
gc.collect()
with open(path, "rb") as f:
    full = f.read()
with open(root + "/marks", "rb") as f:
    marks = f.read()
recs, pos = [], 0
while pos < len(full):
    n = struct.unpack(">H", full[pos + 1:pos + 3])[0] + 7
    recs.append((pos, n))
    pos += n
truth = truths[-1]
x = [12345]


def rand(n):
    x[0] = (x[0] * 1103515245 + 12345) & 0x7FFFFFFF
    return x[0] % n


bad = []
for i in range(len(recs)):
    off, n = recs[i]
    for how in ("flip", "zero", "garbage"):
        b = bytearray(full)
        if how == "flip":
            b[off + rand(n)] ^= 1 << rand(8)
        else:
            for k in range(n):
                b[off + k] = 0 if how == "zero" else rand(256)
        with open(path, "wb") as f:
            f.write(b)
        with open(root + "/marks", "wb") as f:
            f.write(marks)
        b = None
        gc.collect()
        r = Journal(root, max_bytes=1 << 20)
        got = snap(r)
        before = truths[i - 1]
        rec = r.recovery
        if how == "flip":  # repaired
            ok = rec is None and r.fixed == 1 and got == truth
        elif i == len(recs) - 1:  # a damaged tail: above every number it may have used
            ok = rec is not None and rec["tail"] and got[0] == before[0] and \
                got[1] >= before[1] and got[2] > before[2] + 1
        else:
            ok = (rec is not None and rec["holes"] == 1 and not rec["tail"]
                  and got[1] >= truth[1] and got[2] == truth[2]
                  and got[3] == truth[3]
                  and got[0] == (truth[0] if i == 0 else before[0]))
        if not ok:
            bad.append([i, kinds[i], how])
        r.close()
        r = None
print(json.dumps({"records": len(recs), "bad": bad}))
"""
)


def test_micropython_keeps_every_good_record_after_corruption_at_every_position(
    tmp_path, fw_build
):
    script = tmp_path / "corrupt.py"
    script.write_text(CORRUPT)
    state = tmp_path / "state"
    state.mkdir()
    out = run_mpy(str(script), heap=CODE_ROOM, extra_path=(str(fw_build),), args=(str(state),))
    r = json.loads(out.splitlines()[-1])
    assert r["records"] >= 9 and r["bad"] == []
