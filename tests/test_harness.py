"""The harness really runs MicroPython, at the heap we ask for, with the fake machine."""

from tests.mpy import json_lines, run_code


def test_runs_micropython_at_device_heap():
    out = run_code(
        "import sys, gc, json\n"
        "gc.collect()\n"
        "print(json.dumps([sys.implementation.name, gc.mem_free() + gc.mem_alloc()]))\n",
        heap="64k",
    )
    name, total = json_lines(out)[0]
    assert name == "micropython"
    assert 60_000 <= total <= 66_000


def test_failed_assert_in_firmware_script_fails_the_test():
    try:
        run_code("assert 1 == 2, 'boom'\n")
    except AssertionError as e:
        assert "boom" in str(e)
    else:
        raise AssertionError("a failing MicroPython script must fail the test")


def test_fake_machine_extends_builtin():
    out = run_code(
        "import machine, json\n"
        "p = machine.Pin(5, machine.Pin.IN)\n"
        "seen = []\n"
        "p.irq(lambda pin: seen.append(pin.value()), machine.Pin.IRQ_FALLING)\n"
        "p.drive(1); p.drive(0)\n"
        "u = machine.UART(1); u.inject(b'hello\\r\\n'); line = u.readline()\n"
        "print(json.dumps([seen, line.decode(), hasattr(machine, 'Signal')]))\n"
    )
    assert json_lines(out)[0] == [[0], "hello\r\n", True]
