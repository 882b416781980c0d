"""The games' vocabulary, defined once: game ids, dealing procedures, the wagers of a seat in
their order, and the fixed-point unit of odds and results (docs/round-lifecycle.md, rules.md).

Every firmware module that names a game or a wager imports it from here.
"""
from micropython import const

FCF = "four-card-frenzy"
HCF = "high-card-flush"
PROCEDURES = ("manual-shoe", "hand", "automated-shoe")
# clause: rules:1.1-seats, rules:2.2-dealing
MAX_SEATS = const(6)
ONE = const(10000)  # fixed point: odds and results are integers in units of 1/10000
LOST = const(-10000)  # the result of a lost wager (-1)
# the optional wagers of each game (a pay table offers them or not), in report order
OPTIONAL = {FCF: ("prime", "four_card_bonus", "all_six"),
            HCF: ("flush_bonus", "straight_flush_bonus", "progressive")}
# the wager entries of a seat's result, in the order of round_result and its packed form
WAGERS = {FCF: ("ante", "odds", "raise") + OPTIONAL[FCF], HCF: ("ante", "raise") + OPTIONAL[HCF]}
