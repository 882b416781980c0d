from shoe.errors import ShoeError


class CommandError(ShoeError):
    """A host command refused (nothing changed); `.reason` is a code of shoe/reasons.py."""


def reason_of(e, default):
    """The reason code of an error from the engine or setup (`default` for anything else)."""
    return e.reason if isinstance(e, ShoeError) else default
