"""The virtual board's `machine`: what board/main.py and drivers/hwbuild.py build the shoe from.

    import simmachine
    simmachine.setup(uart_ports={0: 5001, 1: 5002}, service=False)
    main.main(simmachine, ...)        # the same assembly as on a Pico or an ESP32

UART(id, ...) is a TCP endpoint on 127.0.0.1 (sockuart.SocketUART) at the port given for that
id; Pin is a plain level holder (the service jumper pin reads as fitted when `service` is set);
WDT is a real watchdog whose timer runs on the host: WDT(timeout=ms) prints
`SHOE-SIM WDT start <ms>` and every feed() prints `SHOE-SIM WDT feed`; host_tools/sim/simboard.py
kills and restarts the board when no feed comes within the timeout, as the chip would reset.
"""
from sockuart import SocketUART

_ports = {}
_service_pin = [None, 1]      # [pin number, level it reads]


def setup(uart_ports, service_pin=None, service_level=0, service=False):
    _ports.clear()
    for k in uart_ports:
        _ports[k] = uart_ports[k]
    _service_pin[0] = service_pin
    _service_pin[1] = service_level if service else 1 - service_level


class Pin:
    IN = 0
    OUT = 1
    PULL_UP = 1
    PULL_DOWN = 2
    IRQ_FALLING = 4
    IRQ_RISING = 8

    def __init__(self, id, mode=IN, pull=None, value=None):
        self.id = id
        self._value = 1 if pull == Pin.PULL_UP else 0
        if id == _service_pin[0] and mode == Pin.IN:
            self._value = _service_pin[1]
        if value is not None:
            self._value = 1 if value else 0

    def value(self, v=None):
        if v is None:
            return self._value
        self._value = 1 if v else 0

    __call__ = value

    def irq(self, handler=None, trigger=0, hard=False):
        return None


def UART(id, baudrate=115200, tx=None, rx=None, rxbuf=256, timeout=0, **kw):
    if id not in _ports:
        raise ValueError("the virtual board has no UART %r" % (id,))
    return SocketUART(_ports[id])


class WDT:
    def __init__(self, id=0, timeout=5000):
        self.timeout = timeout
        print("SHOE-SIM WDT start %d" % timeout)

    def feed(self):
        print("SHOE-SIM WDT feed")
