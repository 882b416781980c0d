"""The one exception type the CLI turns into `shoectl: <message>` and exit code 1.

It is the firmware's base error (shoe.errors.ShoeError: a message and `.reason`), so a host
caller reads `e.reason` the same way on both sides: the shoe's reason code when the shoe refused
(host_tools.link sets it from the error reply), None for a failure of the host's own (bad input,
missing port, board not answering).
"""

from shoe.errors import ShoeError as _FirmwareError


class ShoeError(_FirmwareError):
    """An expected failure (bad input, missing port, board not answering): one clear line."""

    reason = None
