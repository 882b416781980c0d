"""What shoe.games.paytable and its checker shoe.games.ptcheck share (one module both import, so
neither imports the other's private names): the PayTable, PaytableError, the fixed-point unit of
odds and the game names (both from shoe.games.vocab). The format: docs/engine.md, "Pay tables"."""
from shoe.errors import ShoeError
from shoe.games.vocab import FCF, HCF, ONE  # noqa: F401 (re-exported to paytable and ptcheck)


class PaytableError(ShoeError):
    """A pay table that cannot be used; the message names the field."""

    reason = "paytable"


def error(code, *args):
    """The PaytableError of a message code (texts in shoe.games.messages)."""
    from shoe.games import messages

    text = messages.text(code, args)[1]
    messages.unload()
    return PaytableError(text)


class PayTable:
    def __init__(self, name, game, example, payout_limit, illustrative, sections):
        self.name = name
        self.game = game
        self.example = example
        self.payout_limit = payout_limit
        self.illustrative = illustrative
        self.sections = sections
