"""A shoe application on a real TCP socket for host tests: the firmware's Journal and
ShoeEndpoint (CPython) and a few commands: status, emit (N durable events), ack_error,
configure_supervised (supervisor key; the bodies it executed are kept in `configs`) and
reply_then_crash (its reply, durable or not, is queued and the board restarts before it leaves)."""

import socket
import threading
import time

from shoe.journal.journal import Journal
from shoe.link.endpoint import Endpoint

KEY = b"k" * 32
SUP = b"s" * 32


class FakeShoe:
    """A shoe application on 127.0.0.1: Journal + ShoeEndpoint + a few commands. `reboot()`
    closes the connection and starts over from the journal, as the virtual board does."""

    def __init__(self, root, shoe_id="T1"):
        self.root = str(root)
        self.shoe_id = shoe_id
        self.configs = []  # the configure_supervised bodies it executed, with their counters
        self.srv = socket.socket()
        self.srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.srv.bind(("127.0.0.1", 0))
        self.srv.listen(1)
        self.srv.settimeout(0.05)
        self.url = "socket://127.0.0.1:%d" % self.srv.getsockname()[1]
        self.stop = threading.Event()
        self.reboots = threading.Event()
        self.crash_now = False
        self.crash_next = None  # (ctr, durable): reply and crash at the next turn
        self.lock = threading.Lock()
        self.boot()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def boot(self):
        self.j = Journal(self.root)
        self.ep = Endpoint("shoe", KEY, store=self.j, shoe_id=self.shoe_id, supervisor_key=SUP)

    def handle(self, kind, body, ctr):
        ep = self.ep
        if kind == "status":
            ep.reply(
                ctr, {"eseq": self.j.eseq, "boot": self.j.boot, "outbox": len(self.j.outbox())}
            )
        elif kind == "emit":
            n = (self.j.state or {}).get("n", 0)
            ep.send_many(
                [("card", {"n": n + i + 1}) for i in range(body["n"])], state={"n": n + body["n"]}
            )
            ep.reply(ctr, {"ok": True})
        elif kind == "ack_error":
            ep.reply(ctr, {"acked": body.get("id", body.get("ids"))}, durable=True)
        elif kind == "reply_then_crash":  # executed, replied, power cut before it leaves
            if body.get("after_ack"):  # ... after the frame's ack went out on its own
                self.crash_next = (ctr, bool(body.get("durable")))
                return
            ep.reply(ctr, {"done": ctr}, durable=bool(body.get("durable")))
            self.crash_now = True
        elif kind == "no_reply":  # a command the shoe takes and never answers
            pass
        elif kind == "configure_supervised":
            self.configs.append((ctr, body))
            ep.reply(ctr, {"ok": True})
        else:
            ep.error(ctr, "unknown_command")

    def run(self):
        while not self.stop.is_set():
            try:
                conn, _ = self.srv.accept()
            except TimeoutError:
                continue
            conn.settimeout(0.01)
            while not self.stop.is_set() and not self.reboots.is_set():
                try:
                    data = conn.recv(4096)
                    if not data:
                        break
                except TimeoutError:
                    data = b""
                except OSError:
                    break
                now = int(time.monotonic() * 1000)
                with self.lock:
                    if self.crash_next is not None:  # its ack has left: now reply and crash
                        c, durable = self.crash_next
                        self.crash_next = None
                        self.ep.reply(c, {"done": c}, durable=durable)
                        self.crash_now = True
                    for kind, body, ctr, _ in self.ep.receive(data, now):
                        self.handle(kind, body, ctr)
                    out = self.ep.transmit(now) if not self.crash_now else b""
                if self.crash_now:  # nothing more leaves: the board restarts
                    self.crash_now = False
                    self.reboots.set()
                    break
                if out:
                    try:
                        conn.sendall(out)
                    except OSError:
                        break
            conn.close()
            if self.reboots.is_set():
                with self.lock:
                    self.j.close()
                    self.boot()
                self.reboots.clear()

    def close(self):
        self.stop.set()
        self.thread.join(5)
        self.srv.close()
