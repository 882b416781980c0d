"""The one exception type the CLI turns into `shoectl: <message>` and exit code 1."""


class ShoeError(Exception):
    """An expected failure (bad input, missing port, board not answering): one clear line."""
