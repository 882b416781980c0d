"""A whole virtual table in one object: virtual board + host link + world simulator + runner.

    with VirtualTable(state_dir, on_event=print) as t:
        t.runner.play(script)

Used by `shoectl session`, `shoectl demo` and the end-to-end tests. The state directory gets
demo keys (labelled demo) and its own shoe id if it has none. The board boots like a Pico
(board/main.py) and is powered up again if its process dies from outside (power returns).
"""

from host_tools.sim.faultproxy import FaultProxy
from host_tools.sim.provision_sim import DEMO_KEYS, ensure_demo_keys
from host_tools.sim.session import TableParts, TableRunner
from host_tools.sim.simboard import SimBoard
from host_tools.sim.world import ReaderPort, World


class VirtualTable(TableParts):
    def __init__(
        self, state_dir, on_event=None, heap=None, event_timeout=20.0, faults=None, db=None
    ):
        self.state_dir = state_dir
        self.on_event = on_event
        self.heap = heap
        self.event_timeout = event_timeout
        self.demo_keys = False
        self.faults = faults or {}  # FaultProxy options: seed, corrupt, drop, dup
        self.db = db  # audit store path: every event stored once (None: none)

    def __enter__(self):
        from host_tools.link import ShoeLink

        self.demo_keys = ensure_demo_keys(self.state_dir)
        # power returns: a board process killed from outside is powered up again
        self.board = SimBoard(self.state_dir, heap=self.heap, power_returns=True)
        try:
            self.board.start()
            # The host talks to the board through a proxy that can pull the cable (link-drop)
            # and, on request, corrupt, drop or duplicate bytes.
            self.proxy = FaultProxy(("127.0.0.1", self.board.host_port), **self.faults).start()
            self._open_store(self.db)
            self.link = ShoeLink(
                self.proxy.url,
                DEMO_KEYS["shoe"],
                supervisor_key=DEMO_KEYS["supervisor"],
                reconnect_s=0.05,
                audit=self.store,
                endpoint_options={"rto_ms": 100},
            )
            self.link.open(timeout=15)
            self.port = ReaderPort(*self.board.reader_addr)
            world = World(self.port, card_key=DEMO_KEYS["card"])
            self.runner = TableRunner(
                self.board,
                self.link,
                world,
                on_event=self.on_event,
                event_timeout=self.event_timeout,
                cut_link=self.proxy.cut,
            )
        except BaseException:
            self.__exit__()
            raise
        return self
