"""Reason codes: every irregularity and every refused command, in one place.

An irregularity (rules.md section 3) is latched until a supervisor acknowledges it. Its `action`
says what the shoe did and what the table must do next (docs/irregularities.md):

    void_recheck     the round is void; collect and reshuffle the deck, then run the whole deck
                     (52 cards + cover card last) through the reader (phase "deck_check")
    void_quarantine  the round is void; the deck is quarantined: load and check another deck
    void_remove      the round is void; the deck is removed from the table (stub count wrong):
                     load and check another deck
    recheck          no round was void, but the deck must be run through the reader again
    warning          nothing is void; the supervisor must acknowledge (e.g. deck expired)
    event            nothing is void; reported and latched (e.g. reader jam)

`blocks` (True for the two deck-removing actions) means no round can open until the
irregularity is acknowledged (and, through the ledger, until another deck passed its check).
Command errors are refusals: nothing latches, nothing changes, the reply carries the reason.
"""

# irregularities: reason -> action ------------------------------------------------------------
MISDEAL_TOO_MANY = "misdeal_too_many"  # a card after the deal was complete
MISDEAL_TOO_FEW = "misdeal_too_few"  # the round was closed before the deal completed
MISDEAL_UNREADABLE = "misdeal_unreadable"  # a card still unreadable after the re-presentations
CARD_FOREIGN = "card_foreign"  # an authenticated card of another deck
CARD_FORGED = "card_forged"  # a code whose MAC fails (forged or foreign)
CARD_OTHER_BACK = "card_other_back"  # two-deck mode: a card of the other deck
CARD_DUPLICATE = "card_duplicate"  # a card already seen since the shuffle
COVER_CARD = "cover_card"  # the cover card left the shoe during a deal
STUB_MISDEALT = "stub_misdealt"  # stub count wrong, but all 52 cards present
STUB_DECK_WRONG = "stub_deck_wrong"  # stub count wrong, cards missing or foreign
DECK_UNSHUFFLED = "deck_unshuffled"  # the dealt order is far too ordered / repeats a round
DECK_EXPIRED = "deck_expired"  # deck older than its age limit
READER_JAM = "reader_jam"  # no card within jam_timeout_s while a deal/pass is incomplete
CARD_OUT_OF_ROUND = "card_out_of_round"  # a card left the shoe while no round was dealing
VOID_SUPERVISOR = "void_supervisor"  # a supervisor voided the round (command void_round)
POWER_LOSS = "power_loss"  # the app could not know what happened (void_in_progress)
SETTLE_ERROR = "settle_error"  # the engine refused the dealt round (should never happen)

VOID_RECHECK = "void_recheck"
VOID_QUARANTINE = "void_quarantine"
VOID_REMOVE = "void_remove"
RECHECK = "recheck"
WARNING = "warning"
EVENT = "event"

ACTION = {
    MISDEAL_TOO_MANY: VOID_RECHECK,
    MISDEAL_TOO_FEW: VOID_RECHECK,
    MISDEAL_UNREADABLE: VOID_RECHECK,
    CARD_FOREIGN: VOID_QUARANTINE,
    CARD_FORGED: VOID_QUARANTINE,
    CARD_OTHER_BACK: VOID_QUARANTINE,
    CARD_DUPLICATE: VOID_QUARANTINE,
    COVER_CARD: VOID_RECHECK,
    STUB_MISDEALT: VOID_RECHECK,
    STUB_DECK_WRONG: VOID_REMOVE,
    DECK_UNSHUFFLED: VOID_RECHECK,
    DECK_EXPIRED: WARNING,
    READER_JAM: EVENT,
    CARD_OUT_OF_ROUND: RECHECK,
    VOID_SUPERVISOR: VOID_RECHECK,
    POWER_LOSS: VOID_RECHECK,
    SETTLE_ERROR: VOID_RECHECK,
}


def action(reason):
    return ACTION.get(reason, VOID_RECHECK)


def voids(reason):
    return ACTION.get(reason, VOID_RECHECK)[:4] == "void"


def blocks(reason):
    a = ACTION.get(reason)
    return a == VOID_QUARANTINE or a == VOID_REMOVE


# reader rejections (from the drivers / cardcode): which mean "unreadable", which "forged" -------
READ_FORGED = ("code_mac",)  # everything else (no_read, code_format, ...) is unreadable

# command errors ---------------------------------------------------------------------------------
BAD_COMMAND = "bad_command"  # unknown command kind or body not an object
BAD_FIELD = "bad_field"  # a field of the wrong type / out of range
UNKNOWN_GAME = "unknown_game"
UNKNOWN_PROCEDURE = "unknown_procedure"
NOT_CONFIGURED = "not_configured"
OUT_OF_SEQUENCE = "out_of_sequence"  # the command does not fit the current phase
ROUND_OPEN = "round_open"  # a round is already open
NO_ROUND = "no_round"  # no round is open
PASS_OPEN = "pass_open"  # a deck check / stub pass is running
DECK_NOT_READY = "deck_not_ready"  # the round's deck is not loaded and checked
BLOCKED = "blocked"  # a blocking irregularity is not acknowledged
TOO_MANY_SEATS = "too_many_seats"
NO_SEATS = "no_seats"
BAD_SEAT = "bad_seat"  # not 1..6
SEAT_TWICE = "seat_twice"
BAD_WAGER = "bad_wager"  # unknown wager, not a positive integer
ANTE_ODDS = "ante_odds"  # FCF: Ante and Odds missing or unequal
ANTE_MISSING = "ante_missing"  # an optional wager without the main wager
WAGER_NOT_OFFERED = "wager_not_offered"
BAD_RAISE = "bad_raise"  # refused by the engine's check_raise (its own reason is kept)
DECISION_REPEAT = "decision_repeat"  # a seat's decision was already given
UNKNOWN_IRREGULARITY = "unknown_irregularity"
BAD_DECK = "bad_deck"  # serial/back malformed, or two-deck backs equal
