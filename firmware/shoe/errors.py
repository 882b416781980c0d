"""The one base of the firmware's errors: a message for people and a reason code for reports.

Every refusal the shoe reports carries `.reason`, a short code listed in shoe/reasons.py and
docs/protocol.md. Catch `ShoeError` and read `e.reason`; anything else that escapes is a bug.
A subclass names its default code in the class attribute `reason`.
"""


class ShoeError(ValueError):
    reason = "error"

    def __init__(self, message=None, reason=None):
        if reason is not None:
            self.reason = reason
        super().__init__(self.reason if message is None else message)


class CommandError(ShoeError):
    """A host command refused: nothing changed (shoe.table; the app's own commands too)."""
