"""Reason codes: every irregularity and every refused command, in one place.

An irregularity (rules.md section 3) is latched until a supervisor acknowledges it; its action
(void_recheck, void_quarantine, void_remove, recheck, warning, event) says what the shoe did and
what the table must do next. The codes with their actions: docs/irregularities.md; what follows
each action: docs/round-lifecycle.md, "After each outcome". Command errors are refusals: nothing
latches, nothing changes.
The codes are plain strings in the code that raises them (no module globals: RAM); a test
checks that every code used in firmware/shoe/{table,deck,dealing} is listed here.
"""

# "reason:action" of every irregularity, one string (one object in RAM, not 17 tuples):
#   misdeal_too_many    a card after the deal was complete
#   misdeal_too_few     the round was closed (close_round) before the deal completed
#   misdeal_unreadable  a card still unreadable after represent_max re-presentations
#   card_foreign        an authenticated card of another deck
#   card_forged         the code's MAC fails (reader reason code_mac), or an authenticated RFID
#                       tag's answer does (tag_mac), is one seen before (tag_replay), or a plain
#                       tag or code reads for a card of a deck of authenticated tags (tag_plain),
#                       or a plain tag reported by its UID holds other bytes than when it was
#                       read whole (tag_changed: a copy with its UID, or rewritten memory)
#   card_other_back     two-deck mode: a card of the other deck
#   card_duplicate      a card already seen since the shuffle
#   cover_card          the cover card left the shoe during a deal
#   stub_misdealt       stub count wrong, all 52 cards present
#   stub_deck_wrong     stub count wrong, cards missing or foreign (or no cover card)
#   deck_unshuffled     far too ordered, or repeats an earlier round (deck/shuffle_check.py)
#   deck_expired        older than deck_age_hand_s / deck_age_shoe_s
#   reader_jam          no card within jam_timeout_s while cards are awaited
#   card_out_of_round   a card left the shoe while no deal or pass was running
#   void_supervisor     command void_round
#   power_loss          the app voided the round (Table.void_in_progress)
#   settle_error        the engine refused the dealt round (a bug, never expected)
#   journal_corrupt     the journal lost records to flash corruption (Table.journal_damaged)
IRREGULARITIES = (
    " misdeal_too_many:void_recheck misdeal_too_few:void_recheck"
    " misdeal_unreadable:void_recheck card_foreign:void_quarantine card_forged:void_quarantine"
    " card_other_back:void_quarantine card_duplicate:void_quarantine cover_card:void_recheck"
    " stub_misdealt:void_recheck stub_deck_wrong:void_remove deck_unshuffled:void_recheck"
    " deck_expired:warning reader_jam:event card_out_of_round:recheck"
    " void_supervisor:void_recheck power_loss:void_recheck settle_error:void_recheck"
    " journal_corrupt:void_quarantine "
)

# refused host commands (the reply's reason; the engine's own codes, e.g. invalid_raise,
# ante_odds, paytable, bad_rules, pass through unchanged):
#   bad_command      unknown command kind, body not an object
#   bad_field        a field of the wrong type or out of range
#   unknown_game, unknown_procedure
#   not_configured   configure first
#   out_of_sequence  the command does not fit the phase (decisions before deal_complete)
#   round_open       a round is open (second open_round, configure, load_deck)
#   no_round         no round is open
#   pass_open        a deck check is running: finish it first
#   deck_not_ready   the round's deck is not loaded and checked
#   blocked          a blocking irregularity is not acknowledged
#   too_many_seats, no_seats, seat_twice
#   bad_seat         not 1..6, or not playing this round
#   bad_wager, ante_odds, ante_missing, wager_not_offered
#   bad_raise        the raise is not a whole amount >= 0
#   decision_repeat  the seat has already decided
#   unknown_irregularity  ack of an id that is not latched
#   bad_deck         serial/back malformed, or two decks with the same back
#   needs_supervisor sent with the table key, what the allowlist gives the supervisor (shoe/roles.py:
#                    any configuration change, ack, a void once a card is out, a held deck)
# not a refusal: `not_journalled` (shoe/app.py) says a command was done in RAM but its events
# could not be journalled yet (docs/protocol.md section 4); like the link's reply_too_big, the
# command was executed.
COMMAND_ERRORS = (
    " bad_command bad_field unknown_game unknown_procedure not_configured out_of_sequence"
    " round_open no_round pass_open deck_not_ready blocked too_many_seats no_seats seat_twice"
    " bad_seat bad_wager ante_odds ante_missing wager_not_offered bad_raise decision_repeat"
    " unknown_irregularity bad_deck needs_supervisor "
)

# reader rejections that mean "forged or foreign"; every other reason means "unreadable"
READ_FORGED = ("code_mac", "tag_mac", "tag_replay", "tag_plain", "tag_changed")


def action(reason):
    """The action of an irregularity reason (unknown reasons void and recheck)."""
    i = IRREGULARITIES.find(" %s:" % reason)
    if i < 0:
        return "void_recheck"
    i += len(reason) + 2
    return IRREGULARITIES[i : IRREGULARITIES.find(" ", i)]


def irregularities():
    """[(reason, action), ...] (for tests and docs)."""
    return [tuple(x.split(":")) for x in IRREGULARITIES.split()]


def command_errors():
    return COMMAND_ERRORS.split()


def voids(reason):
    return action(reason)[:4] == "void"


def blocks(reason):
    a = action(reason)
    return a == "void_quarantine" or a == "void_remove"
