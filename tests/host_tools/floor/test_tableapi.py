"""The table system through the gateway's API (host_tools/floor/tableapi.py): a real virtual board,
`shoectl gateway` publishing to the embedded broker, and `shoectl session/monitor/table` as
separate processes going through --port gateway+unix://... (and gateway+tcp://).

A table client driving a round is SIGKILLed mid-deal (with a monitor): nothing is lost (every
eseq in the gateway's store reaches MQTT exactly once), the round is voided through the API with
the supervisor's own signature, and a new client plays a whole round. A wrong or missing
credential is refused, a second direct opener of the UART is refused naming the gateway, and a
client with the table key only can do nothing supervisor-only through the gateway."""

import contextlib
import json
import os
import signal
import socket
import stat
import subprocess
import sys
import threading

import pytest

from host_tools.floor import keyring, mqtt
from host_tools.link import apiwire
from host_tools.sim.floor import brokers
from host_tools.sim.provision_sim import DEMO_KEYS, ensure_demo_keys
from host_tools.sim.simboard import SimBoard
from shoe.link.message import unseal
from tests.host_tools.floor.conftest import wait_for
from tests.security import leaks

SEATS = {
    "1": {"wagers": {"ante": 10, "odds": 10}, "raise": 10},
    "3": {"wagers": {"ante": 5, "odds": 5}, "raise": 0},
}


def shoectl(*args, timeout=120):
    return subprocess.run(
        [sys.executable, "-m", "host_tools"] + [str(a) for a in args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _interruptible():
    # Ctrl-C as a terminal gives it: a suite started as a background job (`make test &` in a
    # script) ignores SIGINT, and a child would inherit that and never stop on it
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def popen(*args):
    return subprocess.Popen(
        [sys.executable, "-m", "host_tools"] + [str(a) for a in args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_interruptible,
    )


class Published:
    """Every event message on the broker, by (shoe, eseq), counted."""

    def __init__(self, url):
        self.seen = {}
        self.ready = threading.Event()
        self.lock = threading.Lock()
        self.c = mqtt.client(
            url,
            "tableapi-test",
            clean=True,
            on_connect=self._on_connect,
            on_message=self._on_message,
        )
        self.c.on_subscribe = lambda *a: self.ready.set()

    def _on_connect(self, client, userdata, flags, rc, props):
        client.subscribe("floor/shoe/+/events", qos=1)

    def _on_message(self, client, userdata, msg):
        eseq = unseal(keyring.split_event(msg.payload)[0], 5)[0][2]
        with self.lock:
            self.seen[eseq] = self.seen.get(eseq, 0) + 1

    def counts(self):
        with self.lock:
            return dict(self.seen)


def _spawn_gateway(board, broker, db):
    """`shoectl gateway` on the board's link with its API on a Unix socket (beside `db`: the same
    path again after a restart) and a TCP port -> (process, {"gateway+unix": url, ...})."""
    proc = popen(
        "gateway",
        "--port",
        "socket://127.0.0.1:%d" % board.host_port,
        "--demo-keys",
        "--db",
        db,
        "--broker",
        broker.url,
        "--api-tcp",
        0,
    )
    urls = {}
    try:
        while len(urls) < 2:
            line = proc.stdout.readline()
            assert line, proc.stderr.read()
            if "table system API on" in line:
                url = line.split(" on ")[1].split()[0]
                urls[url.split(":")[0]] = url
    except BaseException:
        proc.kill()
        proc.wait(10)
        raise
    # from here on its lines are read as they come and kept (proc.lines): a pipe nobody reads
    # fills up, and a gateway blocked writing its next line stops serving its link
    proc.lines = {"stdout": [], "stderr": []}
    proc.drains = [
        threading.Thread(target=lambda f=f, k=k: proc.lines[k].extend(f), daemon=True)
        for f, k in ((proc.stdout, "stdout"), (proc.stderr, "stderr"))
    ]
    for t in proc.drains:
        t.start()
    return proc, urls


def gateway_output(proc):
    """The gateway's lines so far (for an assertion's message)."""
    return "--- gateway stdout\n%s--- gateway stderr\n%s" % (
        "".join(proc.lines["stdout"][-40:]),
        "".join(proc.lines["stderr"][-40:]),
    )


def stop_gateway(proc):
    proc.send_signal(signal.SIGTERM)
    proc.wait(30)
    for t in proc.drains:
        t.join(10)
    assert proc.returncode == 0, gateway_output(proc)


@contextlib.contextmanager
def gateway(d):
    """A virtual board, an embedded broker and `shoectl gateway` holding the board's link with
    its API on a Unix socket and TCP; the broker's event messages counted (gw.pub).
    gw.restart() stops the gateway and starts another on the same store and socket."""
    ensure_demo_keys(d / "flash")
    board = SimBoard(str(d / "flash"), power_returns=False)
    broker = brokers.embedded()
    board.start()
    broker.start()
    pub = Published(broker.url)
    gw = None
    try:
        wait_for(pub.ready.is_set, what="the test's subscription")
        db = d / "gw.sqlite"
        proc, urls = _spawn_gateway(board, broker, db)
        gw = type("GW", (), {})()
        gw.dir, gw.db, gw.board, gw.pub, gw.proc = d, db, board, pub, proc
        gw.unix, gw.tcp = urls["gateway+unix"], urls["gateway+tcp"]
        gw.sock = urls["gateway+unix"][len("gateway+unix://") :]
        gw.key = gw.sock[:-5] + ".key"
        gw.reader = "socket://127.0.0.1:%d" % board.reader_port

        def restart():
            stop_gateway(gw.proc)
            gw.proc = None
            gw.proc, urls = _spawn_gateway(board, broker, db)
            assert urls["gateway+unix"] == gw.unix
            gw.tcp = urls["gateway+tcp"]

        gw.restart = restart
        yield gw
    finally:
        if gw is not None and gw.proc is not None:
            stop_gateway(gw.proc)
        pub.c.loop_stop()
        broker.stop()
        board.stop()


@pytest.fixture(scope="module")
def gw(tmp_path_factory):
    """One gateway for the module's tests: what they leave on the board (an open round, a deck
    check) the next one finds, in whatever order the xdist workers run them."""
    with gateway(tmp_path_factory.mktemp("gwapi")) as g:
        yield g


@pytest.fixture
def fresh_gw(tmp_path_factory):
    """A gateway on a board no other test has touched: for a test whose premise is the fresh
    board (under --dist worksteal a worker that steals tests may run the module's round-killing
    test before it, on the shared `gw`: a loaded run found the deck check it left running)."""
    with gateway(tmp_path_factory.mktemp("gwapi")) as g:
        yield g


def stored(gw):
    import sqlite3

    con = sqlite3.connect(gw.db)
    try:
        return [r[0] for r in con.execute("SELECT eseq FROM events ORDER BY eseq")]
    finally:
        con.close()


def all_published_once(gw):
    """Every eseq the gateway stored reached the broker exactly once (and nothing else did)."""
    st = stored(gw)
    got = gw.pub.counts()
    return bool(st) and st == list(range(1, len(st) + 1)) and got == {e: 1 for e in st}


def caught_up(link, seen, gw):
    """The reader client has every event the gateway stored since it joined, in order."""

    def done():
        ev = link.next_event(0.05)
        if ev is not None:
            seen.append(ev)
        got = [e for k, b, e in seen if e]
        st = stored(gw)
        return got and got == st[st.index(got[0]) :]

    wait_for(
        done,
        what=lambda: "the reader has every stored event: %s" % ([e for k, b, e in seen if e],),
    )


def script(path, rounds):
    path.write_text(
        json.dumps(
            {
                "game": "four-card-frenzy",
                "procedure": "manual-shoe",
                "seed": 11,
                "rounds": [{"seats": SEATS}] * rounds,
            }
        )
    )
    return path


def session_args(gw, name, rounds):
    """`shoectl session` through the gateway's Unix socket, the board's reader, `rounds` rounds
    of the test's script, JSON lines."""
    path = script(gw.dir / name, rounds)
    return (
        "session",
        "--port",
        gw.unix,
        "--demo-keys",
        "--reader",
        gw.reader,
        "--script",
        path,
        "--json",
    )


def test_the_table_key_alone_cannot_supervise_through_the_gateway(fresh_gw, tmp_path):
    """(On the fresh board every configuration field is the supervisor's to set.)"""
    gw = fresh_gw
    table_only = tmp_path / "table.json"
    table_only.write_text(
        json.dumps({"shoe": DEMO_KEYS["shoe"].hex(), "card": DEMO_KEYS["card"].hex()})
    )
    before = shoectl("table", "status", "--json", "--port", gw.unix, "--demo-keys")
    r = shoectl("table", "ack", "all", "--port", gw.unix, "--keys", table_only)
    assert r.returncode == 1
    assert (
        "ack_error refused by the gateway: the allowlist gives ack_error to the supervisor"
        in r.stderr
    ), r.stderr
    # configure is the shoe's to decide field by field: forwarded with the table key, refused
    r = shoectl(
        "table", "configure", "--game", "high-card-flush", "--port", gw.unix, "--keys", table_only
    )
    assert (
        r.returncode == 1
        and "configure refused by the shoe" in r.stderr
        and "the allowlist gives it to the supervisor" in r.stderr
    ), r.stderr
    after = shoectl("table", "status", "--json", "--port", gw.unix, "--demo-keys")
    assert json.loads(after.stdout)["config"] == json.loads(before.stdout)["config"]
    # by hand: a table client may not hand in sealed commands, nor send the link's own;
    # the reader role may only read
    secret = apiwire.load_secret(gw.key)

    def login(role):
        s = apiwire.connect(gw.unix, 10)
        ch = apiwire.recv(s)
        cn = os.urandom(16)
        apiwire.send(
            s,
            {
                "t": "auth",
                "role": role,
                "cnonce": cn,
                "mac": apiwire.client_proof(secret, ch["nonce"], cn, role),
            },
        )
        assert apiwire.recv(s)["t"] == "welcome"
        return s

    def ask(s, msg):
        apiwire.send(s, dict(msg, id=7))
        while True:
            rep = apiwire.recv(s)
            if rep["t"] in ("reply", "prepared") and rep.get("id") == 7:
                return rep

    from host_tools.link.host import seal_command

    t = login("table")
    rep = ask(t, {"t": "prepare"})
    assert rep["ok"] is False and rep["reason"] == "not_allowed", rep
    payload = seal_command(DEMO_KEYS["shoe"], "ack_error", {"all": True}, 10**6, "X")
    rep = ask(t, {"t": "sealed", "kind": "ack_error", "ctr": 10**6, "payload": payload})
    assert rep["ok"] is False and rep["reason"] == "not_allowed", rep
    rep = ask(t, {"t": "command", "kind": "_ack", "body": {"upto": 10**6}})
    assert rep["ok"] is False and rep["reason"] == "not_allowed", rep
    t.close()
    rd = login("reader")
    rep = ask(rd, {"t": "command", "kind": "open_round", "body": {"seats": {}}})
    assert rep["ok"] is False and rep["reason"] == "not_allowed", rep
    assert ask(rd, {"t": "command", "kind": "status", "body": {}})["ok"] is True
    rd.close()
    # a supervisor client whose "supervisor" key is only the table key: the shoe decides
    sup = login("supervisor")
    prep = ask(sup, {"t": "prepare"})
    payload = seal_command(
        DEMO_KEYS["shoe"], "ack_error", {"all": True}, prep["ctr"], prep["shoe"]
    )
    rep = ask(sup, {"t": "sealed", "kind": "ack_error", "ctr": prep["ctr"], "payload": payload})
    assert rep["ok"] is False and rep["reason"] in ("needs_supervisor", "stale_counter"), rep
    # the link's own command sealed and declared as another: the gateway reads the payload
    prep = ask(sup, {"t": "prepare"})
    payload = seal_command(DEMO_KEYS["supervisor"], "_ack", {"upto": 1}, prep["ctr"], prep["shoe"])
    rep = ask(sup, {"t": "sealed", "kind": "void_round", "ctr": prep["ctr"], "payload": payload})
    assert rep["ok"] is False and rep["reason"] == "malformed", rep
    sup.close()


def test_killed_clients_cost_the_floor_nothing(gw):
    from host_tools.link.viagateway import GatewayLink

    # a monitor over TCP for the whole test (reader role), one SIGKILLed mid-round, and this
    # test's own reader: a whole view of the events, in order
    watch = popen("monitor", "--port", gw.tcp + "?key=" + gw.key, "--demo-keys", "--json")
    mon = popen("monitor", "--port", gw.unix, "--demo-keys", "--json")
    link = GatewayLink(gw.unix, role="reader").open(timeout=10)
    seen = []
    try:
        # the table system (supervisor role: its key file holds the supervisor key) plays
        # round 1; the monitor is SIGKILLed mid-deal of round 1, the table system itself
        # mid-deal of round 2
        ses = popen(*session_args(gw, "two.json", 2))
        rounds = []
        for line in ses.stdout:
            e = json.loads(line)
            if e["event"] == "round_open":
                rounds.append(e["round"])
            if e["event"] == "card" and e.get("position") == 3:
                (mon if len(rounds) == 1 else ses).kill()
                if len(rounds) == 2:
                    break
        assert ses.wait(10) == -signal.SIGKILL, ses.stderr.read()
        assert mon.wait(10) == -signal.SIGKILL
        rnd = rounds[-1]
        # the floor has it all, once: every event the gateway stored is published once
        wait_for(
            lambda: all_published_once(gw),
            what=lambda: (
                "every stored eseq published "
                "once: stored %s, published %s" % (stored(gw), gw.pub.counts())
            ),
        )
        caught_up(link, seen, gw)
        # what a client sees: the round's cards face down until its reveal
        results = [b["round"] for k, b, e in seen if k == "round_result"]
        assert results == rounds[:1]
        evs = [(k, b) for k, b, e in seen if isinstance(b, dict) and b.get("round") == rounds[0]]
        reveal = [b for k, b in evs if k == "reveal"][0]
        before = evs[: [b for k, b in evs].index(reveal)]
        assert [k for k, b in before].count("card") == len(reveal["cards"]) > 0
        assert leaks.search(before, reveal["cards"]) == {}
        # a new client gets on and voids the round the dead one left open (a card is out:
        # the supervisor's, sealed by the client with its own key for the gateway's next
        # counter; the shoe checks it)
        st = shoectl("table", "status", "--json", "--port", gw.unix, "--demo-keys")
        assert st.returncode == 0, st.stderr
        assert json.loads(st.stdout)["round"]["round"] == rnd
        v = shoectl(
            "table", "void", "--detail", "table system died", "--port", gw.unix, "--demo-keys"
        )
        assert v.returncode == 0, v.stderr
        assert v.stdout.strip() == "void_round: ok"
        wait_for(
            lambda: all_published_once(gw),
            what=lambda: (
                "every stored eseq published "
                "once: stored %s, published %s" % (stored(gw), gw.pub.counts())
            ),
        )
        caught_up(link, seen, gw)
        assert [b["round"] for k, b, e in seen if k == "round_void"] == [rnd]
    except BaseException:
        watch.kill()
        raise
    finally:
        link.close()
        if mon.poll() is None:
            mon.kill()
    watch.send_signal(signal.SIGINT)
    w = [json.loads(x) for x in watch.communicate(timeout=20)[0].splitlines() if x.strip()]
    assert [e["round"] for e in w if e["event"] in ("round_result", "round_void")] == results + [
        rnd
    ]


def test_a_monitor_outlives_a_gateway_restart_and_misses_nothing(fresh_gw):
    """`shoectl monitor` through the gateway's Unix socket while the gateway is stopped and
    started again after a round: the monitor process goes on by itself (its GatewayLink logs in
    again and catches up), and its lines hold every event the gateway stored since it joined,
    once each, in order: the round's result, and the next round opened and voided through the
    new gateway."""
    gw = fresh_gw
    mon = popen("monitor", "--port", gw.unix, "--demo-keys", "--json")
    lines = []
    t = threading.Thread(
        target=lambda: lines.extend(json.loads(x) for x in mon.stdout if x.strip()), daemon=True
    )
    t.start()
    try:
        r = shoectl(*session_args(gw, "one.json", 1), timeout=300)
        assert r.returncode == 0, r.stderr
        wait_for(
            lambda: any(e["event"] == "round_result" for e in list(lines)),
            what=lambda: "round 1's result on the monitor: %s" % [e["event"] for e in lines],
        )
        gw.restart()  # the monitor's connection is cut; it is not restarted
        # durable events through the new gateway: a round opened and voided before any card
        for args in (("open", "--seat", "1:ante=10,odds=10"), ("void", "--detail", "restart")):
            r = shoectl("table", *args, "--port", gw.unix, "--demo-keys")
            assert r.returncode == 0, (args, r.stderr)
        assert mon.poll() is None, mon.stderr.read()
        wait_for(
            lambda: any(e["event"] == "round_void" for e in list(lines)),
            what=lambda: (
                "the voided round on the monitor: %s (monitor %s)"
                % ([e["event"] for e in lines], mon.poll() is None or mon.stderr.read()[-2000:])
            ),
        )
    finally:
        mon.send_signal(signal.SIGINT)
        try:
            mon.wait(20)
        except subprocess.TimeoutExpired:
            mon.kill()
        t.join(10)
    got = [e["eseq"] for e in lines if e.get("eseq")]
    st = stored(gw)
    assert got and got == st[st.index(got[0]) :], (got, st)
    # the monitor said the link was made again, between round 1's result and the new round
    ev = [e["event"] for e in lines]
    assert ev.count("link_reconnected") == 1 and "events_missed" not in ev, ev
    assert ev.index("round_result") < ev.index("link_reconnected") < ev.index("round_void"), ev


def test_a_wrong_or_missing_credential_is_refused(gw, tmp_path):
    assert stat.S_IMODE(os.stat(gw.sock).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(gw.key).st_mode) == 0o600
    wrong = tmp_path / "wrong.key"
    wrong.write_text(os.urandom(32).hex())
    wrong.chmod(0o600)
    for url in (gw.unix + "?key=%s" % wrong, gw.tcp + "?key=%s" % wrong):
        r = shoectl("table", "status", "--port", url, "--demo-keys")
        assert r.returncode == 1 and "refused this client: wrong API key" in r.stderr, r.stderr
    r = shoectl("table", "status", "--port", gw.tcp, "--demo-keys")  # no key for TCP
    assert r.returncode == 1 and "API key file" in r.stderr, r.stderr
    r = shoectl(
        "table", "status", "--port", gw.unix + "?key=%s" % (tmp_path / "none"), "--demo-keys"
    )
    assert r.returncode == 1 and "No such file" in r.stderr, r.stderr
    shared = tmp_path / "shared.key"  # the right key, but readable by others
    shared.write_bytes(open(gw.key, "rb").read())
    shared.chmod(0o644)
    r = shoectl("table", "status", "--port", gw.unix + "?key=%s" % shared, "--demo-keys")
    assert r.returncode == 1 and "is open to others (mode 644)" in r.stderr, r.stderr
    # by hand: the proof is an HMAC over the gateway's fresh nonce; the secret never goes out
    secret = apiwire.load_secret(gw.key)
    for mac in (
        lambda n, c: apiwire.client_proof(b"x" * 32, n, c, "supervisor"),
        lambda n, c: secret,
        lambda n, c: b"",
    ):
        s = apiwire.connect(gw.unix, 10)
        ch = apiwire.recv(s)
        cn = os.urandom(16)
        apiwire.send(
            s, {"t": "auth", "role": "supervisor", "cnonce": cn, "mac": mac(ch["nonce"], cn)}
        )
        rep = apiwire.recv(s)
        assert rep["t"] == "refused" and rep["reason"] == "credential", rep
        with pytest.raises(apiwire.WireError):
            apiwire.recv(s)
        s.close()
    # garbage after a good login ends that connection only
    s = apiwire.connect(gw.unix, 10)
    ch = apiwire.recv(s)
    cn = os.urandom(16)
    apiwire.send(
        s,
        {
            "t": "auth",
            "role": "reader",
            "cnonce": cn,
            "mac": apiwire.client_proof(secret, ch["nonce"], cn, "reader"),
        },
    )
    assert apiwire.recv(s)["t"] == "welcome"
    s.sendall(b"\x00\x00\x00\x03abc")
    msgs = []
    with pytest.raises(apiwire.WireError):
        while True:
            msgs.append(apiwire.recv(s))
    assert msgs[-1]["t"] == "bye" and "bad input" in msgs[-1]["message"]
    s.close()
    r = shoectl("table", "status", "--port", gw.unix, "--demo-keys")
    assert r.returncode == 0, r.stderr


def test_the_client_checks_the_gateway_knows_the_key(tmp_path):
    """A process that listens on the socket without the key cannot pose as the gateway."""
    path = str(tmp_path / "fake.sock")
    key = tmp_path / "fake.key"
    apiwire.new_secret_file(str(key))
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(path)
    srv.listen(1)

    def fake():
        c, _ = srv.accept()
        apiwire.send(c, {"t": "challenge", "v": 1, "nonce": os.urandom(16), "shoe": "X"})
        apiwire.recv(c)
        apiwire.send(
            c, {"t": "welcome", "shoe": "X", "mac": os.urandom(32), "up": True, "sessions": 1}
        )
        c.recv(10)
        c.close()

    threading.Thread(target=fake, daemon=True).start()
    from host_tools.errors import ShoeError
    from host_tools.link.viagateway import GatewayLink

    link = GatewayLink("gateway+unix://" + path, role="table")
    with pytest.raises(ShoeError, match="did not prove the API key"):
        link.open(timeout=5)
    link.close()
    srv.close()


def test_a_second_direct_opener_is_refused(gw):
    def link():
        r = shoectl("status", "--json", "--port", gw.unix, "--demo-keys")
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)["link"]

    before = link()
    assert before["up"] is True and before["via"] == gw.unix
    r = shoectl(
        "table", "status", "--port", "socket://localhost:%d" % gw.board.host_port, "--demo-keys"
    )
    assert r.returncode == 1
    assert "held by PID %d (shoectl gateway" % gw.proc.pid in r.stderr, r.stderr
    assert "go through it with --port %s" % gw.unix in r.stderr, r.stderr
    # the gateway's link never went down nor started again
    after = link()
    assert after["up"] is True
    assert (after["reconnects"], after["resyncs"]) == (
        before["reconnects"],
        before["resyncs"],
    ), gateway_output(gw.proc)


def test_a_gateway_without_broker_on_the_operators_key_over_tcp_only(tmp_path):
    ensure_demo_keys(tmp_path / "flash")
    board = SimBoard(str(tmp_path / "flash"), power_returns=False)
    key = tmp_path / "operator.key"
    key.write_text("a key the operator chose, long enough\n")
    key.chmod(0o600)
    clients, pit = tmp_path / "clients.json", tmp_path / "pit-3.key"
    r = shoectl("gateway-client", "add", "pit-3", "--roles", "table,supervisor", "--clients",
                clients, "--out", pit)  # fmt: skip
    assert r.returncode == 0, r.stderr
    board.start()
    proc = popen(
        "gateway",
        "--port",
        "socket://127.0.0.1:%d" % board.host_port,
        "--demo-keys",
        "--db",
        tmp_path / "gw.sqlite",
        "--api-socket",
        "none",
        "--api-tcp",
        0,
        "--api-key",
        key,
        "--api-clients",
        clients,
    )
    try:
        line = proc.stdout.readline()
        assert "table system API on gateway+tcp://127.0.0.1:" in line, proc.stderr.read()
        url = line.split(" on ")[1].split()[0]
        # read here: communicate() below reads the pipe itself and misses what readline's
        # buffer already holds (the next line often came in the same chunk)
        assert "no broker" in proc.stdout.readline()
        assert not list(tmp_path.glob("*.sock")) and not list(tmp_path.glob("*.api.key"))
        r = shoectl("table", "status", "--port", url + "?key=%s" % key, "--demo-keys")
        assert r.returncode == 0 and r.stdout.startswith("phase configure"), r.stderr
        # a named client (--api-clients) with its own key file; removed, it is refused
        r = shoectl("table", "status", "--port", url + "?key=%s" % pit, "--demo-keys")
        assert r.returncode == 0 and r.stdout.startswith("phase configure"), r.stderr
        shoectl("gateway-client", "remove", "pit-3", "--clients", clients)
        r = shoectl("table", "status", "--port", url + "?key=%s" % pit, "--demo-keys")
        assert r.returncode == 1 and "wrong API key" in r.stderr, r.stderr
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
        board.stop()
    assert proc.returncode == 0, err


def test_a_gateway_started_before_its_shoe_waits_for_it(tmp_path):
    """A daemon does not exit because its shoe is still booting (an emulated Pico takes minutes):
    the gateway says it waits, tries again, and serves the table once the board answers."""
    import socket as _socket

    ensure_demo_keys(tmp_path / "flash")
    with _socket.socket() as s:  # a port nobody listens on yet
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = popen(
        "gateway",
        "--port",
        "socket://127.0.0.1:%d" % port,
        "--demo-keys",
        "--db",
        tmp_path / "gw.sqlite",
        "--timeout",
        "1",
    )
    board = None
    try:
        lines = [proc.stdout.readline() for _ in range(2)]
        assert all("waiting for the shoe" in line for line in lines), (
            lines,
            proc.poll() is None or proc.stderr.read(),
        )
        board = SimBoard(str(tmp_path / "flash"), host_port=port, power_returns=False).start()
        line = proc.stdout.readline()
        while "waiting for the shoe" in line:
            line = proc.stdout.readline()
        assert "table system API on gateway+unix://" in line, line + proc.stderr.read()
        sock = line.split(" on ")[1].split()[0]
        assert "no broker" in proc.stdout.readline()
        r = shoectl("table", "status", "--port", sock, "--demo-keys")
        assert r.returncode == 0 and r.stdout.startswith("phase configure"), r.stderr
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)
        if board is not None:
            board.stop()
