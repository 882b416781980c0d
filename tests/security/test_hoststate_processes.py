"""Host state against real processes: the issue's rolled-back shoe end to end (a journal
restored from an old flash dump, its counter floor file damaged, a captured supervisor command),
a second host process on the same audit store (refused, naming the holder's PID), and a host
killed with SIGKILL in the middle of writing its state (old or new, never torn)."""

import os
import random
import shutil
import signal
import sys

import pytest

from host_tools import cli
from host_tools.audit import AuditStore
from host_tools.errors import ShoeError
from host_tools.hoststate import parse_floor
from host_tools.link import ShoeLink
from shoe.link import codec
from tests.host_tools.link.fakeshoe import KEY, SUP, FakeShoe
from tests.security.hoststate_support import floor_of, keys_file, python, verdict, write_state
from tests.support import wait_for

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX processes and flock")


def open_link(shoe, db, **kw):
    store = AuditStore(db)
    link = ShoeLink(shoe.url, KEY, supervisor_key=SUP, audit=store, **kw)
    try:
        link.open(timeout=10)
    except BaseException:
        link.close()
        store.close()
        raise
    return link, store


def capture(link):
    """Every command message the host seals from now on, as the cable (or an insider holding
    the table key) sees it."""
    sent = []
    queue = link.ep._queue
    link.ep._queue = lambda payload: (sent.append(bytes(payload)), queue(payload))[1]
    return sent


def shoectl(capsys, *argv):
    rc = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def test_the_issue_a_rolled_back_shoe_is_refused_after_its_floor_file_is_damaged(tmp_path, capsys):
    """Issue 18: a shoe restored from an old flash dump (its command counter back) was refused
    while `<db>.counters.json` was intact, and accepted without a word once one byte of it
    changed, after which a captured supervisor `configure` replayed. Now the damaged file
    refuses the shoe (one line naming the file), and only the supervisor's acceptance lets it in
    again, after raising its counter so the captured command is dead."""
    db, board, dump = tmp_path / "audit.sqlite", tmp_path / "board", tmp_path / "dump"
    kf = keys_file(tmp_path / "keys.json")
    shoe = FakeShoe(board)
    link, store = open_link(shoe, db)
    link.command("emit", {"n": 3})
    for _ in range(5):
        link.command("status")
    link.close()
    store.close()
    shoe.close()
    shutil.copytree(board, dump)  # the flash dump, counter c1
    shoe = FakeShoe(board)
    c1 = shoe.j.ctr
    link, store = open_link(shoe, db)
    for _ in range(20):
        link.command("status")
    sent = capture(link)
    link.command("configure_supervised", {"paytable": "house-max"}, supervisor=True)
    captured = [p for p in sent if b"configure_supervised" in p][0]
    link.close()
    store.close()
    c2 = shoe.configs[0][0]
    assert c2 > c1 + 20 and parse_floor(floor_of(db).read_bytes())["shoes"]["T1"]["ctr"] >= c2
    shoe.close()
    shutil.rmtree(board)
    shutil.copytree(dump, board)  # restored from the old dump
    shoe = FakeShoe(board)
    try:
        assert shoe.j.ctr == c1
        with pytest.raises(ShoeError) as e:  # the floor file intact: refused
            open_link(shoe, db)
        assert "command counter went back" in str(e.value) and e.value.reason is None
        raw = floor_of(db).read_bytes()
        for i in (len(raw) // 2, raw.index(b'"ctr":') + 6):  # one byte: anywhere, the counter
            changed = bytearray(raw)
            changed[i] ^= 0x01
            floor_of(db).write_bytes(bytes(changed))
            with pytest.raises(ShoeError) as e:
                open_link(shoe, db)
            line = str(e.value)
            assert str(floor_of(db)) in line and "\n" not in line and "refusing" in line
            assert e.value.host_state.reason in ("floor_mac", "floor_damaged")
            rc, out, err = shoectl(
                capsys,
                "table",
                "status",
                "--port",
                shoe.url,
                "--keys",
                kf,
                "--db",
                db,
                "--timeout",
                5,
            )
            assert rc == 1 and str(floor_of(db)) in err and err.count("\n") == 1
        assert shoe.j.ctr == c1 and shoe.configs == []  # nothing reached the shoe

        # what the refusal stands between: without the host's floor the captured supervisor
        # command replays on the rolled-back shoe (a copy of it, to leave this one untouched)
        shutil.copytree(dump, tmp_path / "board2")
        twin = FakeShoe(tmp_path / "board2")
        try:
            with ShoeLink(twin.url, KEY) as bare:
                bare.open(timeout=10)
                with bare._lock:
                    bare.ep._queue(captured)
                assert wait_for(lambda: twin.configs, what="the replayed configure")
            assert twin.configs == [(c2, {"paytable": "house-max"})]
        finally:
            twin.close()

        # the supervisor looks, then accepts; the shoe's counter goes above every old one
        rc, out, err = shoectl(capsys, "trust", "--port", shoe.url, "--keys", kf, "--db", db)
        assert rc == 1 and "REFUSED" in out and "counter_reset" in out and str(floor_of(db)) in out
        rc, out, err = shoectl(
            capsys,
            "trust",
            "--port",
            shoe.url,
            "--keys",
            kf,
            "--db",
            db,
            "--accept",
            "--yes",
            "--note",
            "restored from a dump, checked",
        )
        assert rc == 0, err
        assert "accepted" in out and shoe.j.ctr == c2 + 1
        link, store = open_link(shoe, db)  # accepted again
        try:
            before = shoe.ep.errors().get("replay", 0)
            with link._lock:
                link.ep._queue(captured)  # the captured command is dead now
            assert wait_for(lambda: shoe.ep.errors().get("replay", 0) > before)
            assert shoe.configs == []
        finally:
            link.close()
            store.close()
        rc, out, err = shoectl(capsys, "trust", "--port", shoe.url, "--keys", kf, "--db", db)
        assert rc == 0 and "intact" in out and "restored from a dump, checked" in out
    finally:
        shoe.close()


HOLD = """
import sys, time
sys.path.insert(0, ".")
import host_tools
from host_tools.audit import AuditStore
from host_tools.hoststate import HostState
store = AuditStore(sys.argv[1])
hs = HostState(store)
try:
    hs.open()
except Exception as e:
    print("refused", e, flush=True)
    sys.exit(1)
print("locked", flush=True)
sys.stdin.readline()   # hold it until the test says so
"""


def test_a_second_host_process_is_refused_naming_the_holder(tmp_path, capsys):
    db = tmp_path / "audit.sqlite"
    write_state(db)
    holder = python(HOLD, db, stdin=__import__("subprocess").PIPE)
    try:
        assert holder.stdout.readline().strip() == "locked"
        # a second `shoectl monitor` on the same --db: one line, the holder's PID, exit 1
        second = python(
            "import sys; sys.path.insert(0, '.'); from host_tools import cli; "
            "sys.exit(cli.main(sys.argv[1:]))",
            "monitor",
            "--port",
            "socket://127.0.0.1:9",
            "--demo-keys",
            "--db",
            db,
            "--seconds",
            "1",
        )
        out, err = second.communicate(timeout=60)
        assert second.returncode == 1, err
        assert err.count("\n") == 1 and str(db) in err and "PID %d" % holder.pid in err
        assert "[store_locked]" in err
        v = verdict(db)  # this process too
        assert v.reason == "store_locked" and "PID %d" % holder.pid in str(v)
        holder.kill()  # however it dies, the lock goes
        holder.wait(30)
        assert verdict(db) == 31
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait(30)


def test_two_processes_racing_for_one_store_one_wins_the_other_is_refused(tmp_path):
    db = tmp_path / "audit.sqlite"
    write_state(db)
    pipe = __import__("subprocess").PIPE
    procs = [python(HOLD, db, stdin=pipe) for _ in range(2)]
    try:
        lines = {p.pid: p.stdout.readline().strip() for p in procs}
        winners = [pid for pid, line in lines.items() if line == "locked"]
        assert len(winners) == 1, lines
        loser = [line for pid, line in lines.items() if pid != winners[0]][0]
        assert loser.startswith("refused") and "PID %d" % winners[0] in loser
    finally:
        for p in procs:
            p.kill()
            p.wait(30)
    assert verdict(db) == 31  # nothing was torn or half written


WRITER = """
import os, sys, time
sys.path.insert(0, ".")
import host_tools
from host_tools import hoststate
from host_tools.audit import AuditStore
from tests.security.hoststate_support import KEY, Shoe
db, step, at = sys.argv[1], sys.argv[2], int(sys.argv[3])
store = AuditStore(db)
hs = hoststate.HostState(store)
hs.open()
floor = hs.check("T1", KEY)
shoe = Shoe()
shoe.events(store.last_eseq("T1"))   # the shoe's history so far (stored already)
print("start", floor, flush=True)
armed = [False, 0]

def stop(name):
    print("at", name, flush=True)
    time.sleep(600)

def patch(name, real):
    def step_(*a):
        if armed[0] and step == name:
            if name == "write":    # half of the bytes on the disk, then the power goes
                real(a[0], bytes(a[1][:len(a[1]) // 2]))
            stop(name)
        return real(*a)
    return step_

os.write, os.replace = patch("write", os.write), patch("replace", os.replace)
flush = hoststate._flush
def flushes(fd):   # the file's flush, then the directory's
    armed[1] += 1
    if armed[0] and step == ("flush-file", "flush-dir")[(armed[1] - 1) % 2]:
        stop(step)
    flush(fd)
hoststate._flush = flushes
n = 0
while True:
    n += 1
    armed[0] = n == at
    hs.commit("T1", KEY, floor + n, shoe.events(2))   # two events and the floor: one commit
    print("committed", floor + n, flush=True)
"""


@pytest.mark.parametrize("step", ["write", "flush-file", "replace", "flush-dir"])
def test_kill_9_in_the_middle_of_writing_the_floor_leaves_it_old_or_new(tmp_path, step):
    db = tmp_path / "audit.sqlite"
    write_state(db)  # floor 31, generation 2
    child = python(WRITER, db, step, 3)
    try:
        assert child.stdout.readline().split() == ["start", "31"]
        lines = [child.stdout.readline().strip() for _ in range(3)]
        assert lines == ["committed 32", "committed 33", "at %s" % step], lines
        child.send_signal(signal.SIGKILL)  # in the middle of the 3rd write
        child.wait(30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(30)
    doc = parse_floor(floor_of(db).read_bytes())  # never torn: it parses, and is ...
    assert isinstance(doc, dict), doc
    assert doc["shoes"]["T1"]["ctr"] in (33, 34)  # ... the old (33) or the new (34)
    assert verdict(db) == 34  # the store committed 34 first
    entry = parse_floor(floor_of(db).read_bytes())["shoes"]["T1"]
    assert (entry["ctr"], entry["eseq"]) == (34, 7 + 3 * 2)  # caught up, with the 3rd events


def test_kill_9_at_random_instants_of_a_committing_host(tmp_path):
    """A host committing as fast as it can, killed after a random number of commits, six
    times over the same files: each time the next host accepts them, the floor at least as
    high as the last commit the killed one finished."""
    db = tmp_path / "audit.sqlite"
    write_state(db)
    rnd = random.Random(int(os.environ.get("SHOE_SEED", "18")))
    done = 31
    for _ in range(6):
        child = python(WRITER, db, "none", 0)
        try:
            start = int(child.stdout.readline().split()[1])
            assert start >= done
            for _ in range(rnd.randint(1, 12)):
                done = int(child.stdout.readline().split()[1])
            child.send_signal(signal.SIGKILL)
            child.wait(30)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait(30)
        v = verdict(db)
        assert isinstance(v, int) and v >= done, v
        done = v


def test_the_issue_on_the_virtual_board(tmp_path, capsys):
    """The real firmware: its flash (the state directory) dumped, more commands (a supervisor's
    configure that weakens a setting, captured), the dump restored: its command counter went
    back, its events did not (a configure is no event). Refused with the floor file intact,
    refused with one byte of it changed; the supervisor accepts it and its counter goes above
    every old one, so the captured configure is refused as a replay."""
    from host_tools.sim.provision_sim import DEMO_KEYS
    from tests.support import virtual_board

    state, dump, db = tmp_path / "flash", tmp_path / "dump", tmp_path / "audit.sqlite"
    cfg = {
        "game": "four-card-frenzy",
        "paytable": "fcf-public-1",
        "procedure": "manual-shoe",
        "stub_every": 5,
    }  # a weaker setting: the supervisor's authority only

    def table(board, *argv):
        return shoectl(
            capsys,
            "table",
            *argv,
            "--port",
            board.host_url,
            "--demo-keys",
            "--db",
            db,
            "--timeout",
            20,
        )

    with virtual_board(state) as board:
        assert table(board, "configure", "--game", "four-card-frenzy")[0] == 0
        assert table(board, "status")[0] == 0
    shutil.copytree(state, dump)  # the flash dump
    with virtual_board(state) as board:
        for _ in range(3):
            assert table(board, "status")[0] == 0
        store = AuditStore(db)
        link = ShoeLink(
            board.host_url, DEMO_KEYS["shoe"], supervisor_key=DEMO_KEYS["supervisor"], audit=store
        )
        try:
            link.open(timeout=20)
            sent = capture(link)
            link.command("configure_supervised", cfg, supervisor=True, timeout=20)
            captured = [p for p in sent if b"configure_supervised" in p][0]
            assert link.command("status", timeout=20)["config"]["stub_every"] == 5
        finally:
            link.close()
            store.close()
    [entry] = parse_floor(floor_of(db).read_bytes())["shoes"].values()
    shutil.rmtree(state)
    shutil.copytree(dump, state)  # restored
    with virtual_board(state) as board:
        rc, out, err = table(board, "configure", "--game", "four-card-frenzy")
        assert rc == 1 and "command counter went back" in err  # intact files: refused
        raw = bytearray(floor_of(db).read_bytes())
        raw[raw.index(b'"ctr":') + 6] ^= 0x01  # one byte of the floor
        floor_of(db).write_bytes(bytes(raw))
        for argv in (("configure", "--game", "four-card-frenzy"), ("status",)):
            rc, out, err = table(board, *argv)
            assert rc == 1 and str(floor_of(db)) in err and err.count("\n") == 1, err
        common = ("--port", board.host_url, "--demo-keys", "--db", db, "--timeout", 20)
        rc, out, err = shoectl(capsys, "trust", *common)
        assert rc == 1 and "counter_reset" in out and "floor_mac" in out
        rc, out, err = shoectl(capsys, "trust", *common, "--accept", "--yes")
        assert rc == 0, err
        store = AuditStore(db)
        link = ShoeLink(board.host_url, DEMO_KEYS["shoe"], audit=store)
        try:
            link.open(timeout=20)
            assert link.ep.peer["ctr"] > entry["ctr"]  # above every old counter
            ctr = codec.decode(captured)[2]
            with link._lock:
                link.ep._queue(captured)  # the captured configure
            while True:  # its answer: replay
                ev = link.next_event(20)
                assert ev is not None, "no answer to the replayed configure"
                if ev[0] == "error" and ev[1].get("re") == ctr:
                    break
            assert ev[1]["reason"] == "replay"
            assert link.command("status", timeout=20)["config"]["stub_every"] == 1
        finally:
            link.close()
            store.close()


def test_a_holder_that_has_not_written_its_record_yet_is_still_named(tmp_path):
    """The process that takes the store's lock writes its record (PID, command) just after the
    flock: one refused in between used to say "PID unknown" (a loaded run's racing test). The
    refused one reads the record again for a moment."""
    import fcntl
    import json
    import threading

    from host_tools.hoststate import HostStateError, StoreLock

    path = tmp_path / "audit.sqlite.lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT)  # the holder: locked, no record yet
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    late = threading.Timer(
        0.1, lambda: os.write(fd, json.dumps({"pid": 4242, "cmd": "x", "since": "t"}).encode())
    )
    late.start()
    try:
        with pytest.raises(HostStateError) as e:
            StoreLock(path).acquire(tmp_path / "audit.sqlite")
        assert "PID 4242" in str(e.value), e.value
    finally:
        late.join()
        os.close(fd)
