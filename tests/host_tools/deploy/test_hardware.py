"""On a real board (pytest --device /dev/ttyACM0, service jumper fitted): deploy and read back.

Skipped without --device. The board's name comes from its sys.platform (rp2 -> pico, esp32).
"""

import pytest

from host_tools import deploy as dp

pytestmark = pytest.mark.hardware


def test_deploy_to_real_board(request):
    port = request.config.getoption("--device")
    with dp.Device(port) as dev:
        platform = dev.identify()["platform"]
    board = {"rp2": "pico", "esp32": "esp32"}.get(platform)
    if board is None:
        pytest.skip("no wiring for a %s board" % platform)
    first = dp.deploy(board, port, progress=None)
    again = dp.deploy(board, port, progress=None)
    assert again["version"] == first["version"] and again["previous"] == first["version"]
    with dp.Device(port) as dev:
        dev.identify()
        assert dev.value("_shoe_read('shoe_fw/active')") == first["version"]
        out = dev.run(
            "import sys\nsys.path.insert(0, '/shoe_fw/%s')\nimport wiring, shoe.drivers."
            "mfrc522\nprint(wiring.board)" % first["version"]
        )
        assert out.strip() == board
