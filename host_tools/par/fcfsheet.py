"""The Four Card Frenzy part of a par sheet: exact figures (host_tools.par.fcf, fcfside) and
the simulation's figures beside them (host_tools.par.sheet builds the rest)."""

from fractions import Fraction

from host_tools.par import fcf, fcfhands, fcfside
from host_tools.par.entry import wager
from shoe.games.vocab import LOST, ONE

MAIN_METHOD = (
    "exact: all 2,598,960 x 1,533,939 (player, dealer) pairs, by inclusion-"
    "exclusion over the cards two hands could share, on the 134,459 suit classes of "
    "the player's five cards; each hand raises what maximizes its exact expected "
    "return"
)
MAIN_BRIEF = "exact, all (player, dealer) pairs; per-hand best raise"


def _names(ids):
    return " ".join("23456789TJQKA"[c >> 2] + "cdhs"[c & 3] for c in sorted(ids, reverse=True))


def _side(section, counts, order, total):
    rows = []
    for cat in order:
        fx = section.get(cat, LOST)
        rows.append((cat, counts[cat], Fraction(fx, ONE)))
    rows.append(("nothing that pays", counts[None], Fraction(-1)))
    return rows


def exact(table, rules):
    """(sheet fields, decide) for a validated FCF table: decide(cards) -> raise multiples."""
    m = fcf.model()
    g = fcf.Main(m, table, rules)
    o = g.outcomes()
    total = fcf.N_PAIRS
    ra = g.raise_amount()
    wagers = [
        wager(
            "ante",
            "Ante",
            MAIN_METHOD,
            "(player, dealer) pairs",
            total,
            o["ante"],
            brief=MAIN_BRIEF,
        ),
        wager(
            "odds",
            "Odds",
            MAIN_METHOD,
            "(player, dealer) pairs",
            total,
            o["odds"],
            brief=MAIN_BRIEF,
        ),
        wager(
            "raise",
            "Raise",
            MAIN_METHOD,
            "(player, dealer) pairs",
            total,
            o["raise"],
            wagered=ra,
            brief=MAIN_BRIEF,
        ),
    ]
    ret = sum((Fraction(w["return_exact"]) for w in wagers), Fraction(0))
    lo, hi, mixed = g.borders()
    main = {
        "return_per_hand": float(ret),
        "return_exact": "%d/%d" % (ret.numerator, ret.denominator),
        "initial_wager": 2,
        "average_raise": float(ra),
        "house_edge_per_hand": float(-ret / 2),
        "element_of_risk": float(-ret / (2 + ra)),
        "method": MAIN_METHOD,
        "brief": MAIN_BRIEF,
        "strategy": {
            "rule": "each of the 2,598,960 hands takes the raise (fold, 1x, or "
            "3x with a pair of aces or better) with the largest exact "
            "expected return of Ante + Odds + Raise; equal: the smaller",
            "by_category": g.strategy(),
            "weakest_raised": _names(lo),
            "strongest_folded": _names(hi),
            "values_raised_and_folded": mixed,
            "note": "card removal: the weakest raised hand is below the strongest "
            "folded one; %d hand value(s) are raised with some fifth "
            "cards and folded with others" % mixed,
        },
    }
    secs = table.sections
    if "prime" in secs:
        wagers.append(
            wager(
                "prime",
                "Prime",
                "exact: combinatorics (colours of 5 cards from 26 red + 26 black)",
                "five-card hands",
                fcf.N_HANDS,
                _side(secs["prime"], fcfside.prime_counts(), fcfside.PRIME, fcf.N_HANDS),
                brief="exact, combinatorics",
            )
        )
    if "four_card_bonus" in secs:
        wagers.append(
            wager(
                "four_card_bonus",
                "Four Card Bonus",
                "exact: enumeration of the "
                "134,459 suit classes of the 2,598,960 five-card hands (weighted)",
                "five-card hands",
                fcf.N_HANDS,
                _side(secs["four_card_bonus"], fcf.bonus_counts(m), fcf.BONUS, fcf.N_HANDS),
                brief="exact, enumeration",
            )
        )
    if "all_six" in secs:
        n6 = 20358520
        wagers.append(
            wager(
                "all_six",
                "All-Six Bonus",
                "exact: combinatorics over the rank "
                "multisets of six cards and the suited sets (C(52,6) = 20,358,520)",
                "six-card sets",
                n6,
                _side(secs["all_six"], fcfside.all_six_counts(), fcfside.ALL_SIX, n6),
                brief="exact, combinatorics",
            )
        )
    opens = Fraction(int(m.weight[fcfhands.opens(m.value)].sum()), fcf.N_HANDS)
    fields = {
        "wagers": wagers,
        "main_game": main,
        "dealer": {
            "opens": float(opens),
            "opens_exact": "%d/%d" % (opens.numerator, opens.denominator),
            "method": "exact: enumeration of the suit classes of the dealer's hand",
        },
    }
    return fields, g.decision
