"""Exhaustive and combinatorial proofs against reference-figures.md (sections 2, 3, 4).

FCF: every one of the C(52,5) = 2,598,960 hands is evaluated. All-Six (C(52,6)) and HCF
(C(52,7)) are counted by smart enumeration: the engine classifies every rank pattern and every
flush hand (or every suit pattern), and exact combinatorial weights count the hands that share
the classification. Each test says which part is the engine and which part is arithmetic.
"""

import itertools
from collections import Counter
from math import comb, prod

import pytest

from shoe.games import allsix, fcf, hcf
from tests.oracle import naive


@pytest.mark.clause(
    "684a.11(b)(1)",
    "rules:1.2-ace",
    "rules:1.2-categories",
    "rules:1.6-dealer-opens",
    "rules:1.6-four-card-bonus",
)
def test_fcf_best_four_counts_over_all_five_card_hands():
    cats = [0] * 8
    opens = raise3 = 0
    v5 = fcf.value5  # the one evaluator, on the device and on the host
    for a, b, c, d, e in itertools.combinations(range(52), 5):
        v = v5(a, b, c, d, e)
        cats[v >> 26] += 1
        if fcf.dealer_opens(v):
            opens += 1
        if fcf.raise_multiples(v) == (1, 2, 3):
            raise3 += 1
    got = dict(zip(fcf.CATEGORIES, cats))
    assert got == {
        "four_of_a_kind": 624,
        "straight_flush": 2072,
        "three_of_a_kind": 58656,
        "flush": 114616,
        "straight": 101808,
        "two_pair": 123552,
        "pair": 1047552,
        "high_card": 1150080,
    }
    assert opens == 2202480
    assert raise3 == 482424
    assert sum(cats[fcf.TWO_PAIR :]) == 401328  # Four Card Bonus wins (reference 2.2)
    royal = sum(
        1
        for a, b, c, d, e in itertools.combinations(range(36, 52), 5)
        if fcf.is_royal(v5(a, b, c, d, e))
    )
    # every royal needs the suited A, K, Q, J (ranks 9..12 = ids 36..51) plus any fifth card:
    # those with the fifth card below J: 4 suits * 36 low cards
    low = sum(
        1
        for s in range(4)
        for x in range(36)
        if fcf.is_royal(v5(36 + s, 40 + s, 44 + s, 48 + s, x))
    )
    assert royal + low == 192


@pytest.mark.clause("rules:1.2-best-four")
def test_fcf_fast_evaluator_equals_naive_all_subsets_on_a_sample():
    # the naive evaluator tries the five four-card subsets; it is the independent method
    import random

    rng = random.Random(2024)
    for _ in range(40000):
        h = rng.sample(range(52), 5)
        assert fcf.value(h) == naive.value(h), h


@pytest.mark.clause("rules:1.2-tiebreak")
def test_fcf_rank_patterns_against_naive_exhaustively():
    # every rank multiset (6175) with every way of making a four-card flush or not
    for ranks in itertools.combinations_with_replacement(range(13), 5):
        if max(Counter(ranks).values()) > 4:
            continue
        seen = Counter()
        hand = []
        for r in ranks:
            s = seen[r]
            seen[r] += 1
            hand.append(r * 4 + s)
        assert fcf.value(hand) == naive.value(hand)
        if len(set(ranks)) >= 4:  # suit the first four distinct ranks alike
            distinct = sorted(set(ranks))[:4] if len(set(ranks)) == 4 else sorted(set(ranks))
            for suit in range(4):
                h = []
                used = set()
                for r in ranks:
                    if r in distinct and r not in used:
                        h.append(r * 4 + suit)
                        used.add(r)
                    else:
                        h.append(
                            r * 4 + next(x for x in range(4) if x != suit and r * 4 + x not in h)
                        )
                assert fcf.value(h) == naive.value(h), h


@pytest.mark.clause("684a.7(d)(2)", "684a.11(d)(1)")
def test_prime_counts_by_the_settlement():
    """Prime pays on the colours of the player's five cards only: the settlement (engine) gives
    each hand's Prime result, seeded hands of every red count 0..5; the arithmetic weighs each
    red count by the number of five-card hands that have it (reference-figures.md)."""
    import random

    from shoe import cards
    from shoe.games import engine

    rng = random.Random(83)
    red = [c for c in range(52) if c & 3 in (1, 2)]  # hearts and diamonds
    black = [c for c in range(52) if c & 3 not in (1, 2)]
    assert len(red) == 26
    pays = {}
    for k in range(6):
        seen = set()
        for _ in range(40):
            hand = rng.sample(red, k) + rng.sample(black, 5 - k)
            rng.shuffle(hand)
            rest = [c for c in range(52) if c not in hand]
            r = engine.evaluate_round(
                {
                    "game": "four-card-frenzy",
                    "paytable": "fcf-public-1",
                    "dealer": cards.names(rng.sample(rest, 5)),
                    "all_six_card": None,
                    "seats": {
                        "1": {
                            "cards": cards.names(hand),
                            "raise": 10,
                            "wagers": {"ante": 10, "odds": 10, "prime": 10},
                        }
                    },
                }
            )
            seen.add(r["seats"]["1"]["wagers"]["prime"]["result"])
        assert len(seen) == 1, (k, seen)  # the colour count alone decides
        pays[k] = seen.pop()
    assert pays == {0: 5, 1: 1, 2: -1, 3: -1, 4: 1, 5: 5}
    hands = {k: comb(26, k) * comb(26, 5 - k) for k in range(6)}
    four = sum(n for k, n in hands.items() if pays[k] == 1)
    five = sum(n for k, n in hands.items() if pays[k] == 5)
    assert (four, five, four + five) == (777400, 131560, 908960)


def _allsix_rank_part():
    """category -> number of six-card hands with no five cards of one suit."""
    out = Counter()
    flush_hands = Counter()  # rank multiset -> six-card hands with 5+ cards of one suit
    for suit in range(4):
        others = [c for c in range(52) if c & 3 != suit]
        for six in itertools.combinations(range(13), 6):
            flush_hands[six] += 1
        for five in itertools.combinations(range(13), 5):
            for o in others:
                flush_hands[tuple(sorted(five + (o >> 2,)))] += 1
    for ranks in itertools.combinations_with_replacement(range(13), 6):
        cnt = Counter(ranks)
        if max(cnt.values()) > 4:
            continue
        total = prod(comb(4, n) for n in cnt.values())
        # a representative without a flush: suits round-robin over the sorted ranks
        hand = [r * 4 + i % 4 for i, r in enumerate(ranks)]
        out[allsix.category(hand)] += total - flush_hands[ranks]
    return out


def _allsix_flush_part():
    """category -> count, by the engine, over every six-card hand with 5+ cards of one suit."""
    out = Counter()
    for suit in range(4):
        others = [c for c in range(52) if c & 3 != suit]
        for six in itertools.combinations(range(13), 6):
            out[allsix.category([r * 4 + suit for r in six])] += 1
        for five in itertools.combinations(range(13), 5):
            base = [r * 4 + suit for r in five]
            for o in others:
                out[allsix.category(base + [o])] += 1
    return out


@pytest.mark.clause("rules:1.6-all-six")
def test_all_six_category_counts_over_all_six_card_hands():
    got = _allsix_rank_part() + _allsix_flush_part()
    assert dict(got) == {
        "six_card_royal_flush": 4,
        "royal_flush": 184,
        "straight_flush": 1656,
        "four_of_a_kind": 14664,
        "full_house": 165984,
        "flush": 205792,
        "straight": 361620,
        "three_of_a_kind": 732160,
        None: 18876456,
    }
    assert sum(got.values()) == comb(52, 6)


# -- High Card Flush: per-suit classes by the engine, combined over suit compositions --------

_FILL = [r * 4 + s for r in (0, 4, 8) for s in (1, 2, 3)]  # off-suit, no runs, <= 2 per suit first


def _per_suit_classes():
    """k -> Counter of (straight flush class, qualifies-as-3-flush) over the k-subsets of one
    suit (clubs), each classified by the engine on a 7-card hand padded with off-suit cards."""
    out = {}
    for k in range(8):
        c = Counter()
        for ranks in itertools.combinations(range(13), k):
            hand = [r * 4 for r in ranks] + _FILL[: 7 - k]
            sf = hcf.straight_flush(hand)
            v = hcf.flush_value(hand)
            q = k == 3 and hcf.length(v) == 3 and hcf.flush_suit(hand) == 0 and hcf.qualifies(v)
            c[(sf, q)] += 1
        out[k] = c
    return out


def _compositions():
    for a in range(8):
        for b in range(8 - a):
            for c in range(8 - a - b):
                d = 7 - a - b - c
                yield (a, b, c, d)


@pytest.mark.clause("rules:2.1-flush")
def test_hcf_flush_length_distribution():
    got = Counter()
    for comp in _compositions():
        hand = [r * 4 + s for s, k in enumerate(comp) for r in range(0, 2 * k, 2)]
        assert hcf.length(hcf.flush_value(hand)) == max(comp)  # the engine, per suit pattern
        got[max(comp)] += prod(comb(13, k) for k in comp)
    assert dict(got) == {7: 6864, 6: 267696, 5: 3814668, 4: 26137540, 3: 78881088, 2: 24676704}


@pytest.mark.clause("rules:2.1-straight-flush", "rules:2.2-dealer-qualifies")
def test_hcf_straight_flush_distribution_and_dealer_qualification():
    per = _per_suit_classes()
    sf_count = {k: Counter() for k in per}
    for k, c in per.items():
        for (sf, _q), n in c.items():
            sf_count[k][sf] += n
    # P(longest straight flush <= r) over all hands, then differences
    classes = [0, 3, 4, 5, 6, 7]
    at_most = {}
    for r in classes:
        total = 0
        for comp in _compositions():
            total += prod(sum(n for sf, n in sf_count[k].items() if sf <= r) for k in comp)
        at_most[r] = total
    got = {
        classes[i]: at_most[classes[i]] - (at_most[classes[i - 1]] if i else 0)
        for i in range(len(classes))
    }
    assert got == {7: 32, 6: 1592, 5: 39960, 4: 676196, 3: 8642932, 0: 71985176 + 52438672}
    assert comb(52, 7) == sum(got.values())
    # dealer qualification: 3-card suits must reach 9 unless another suit has 4+
    qual3 = sum(n for (sf, q), n in per[3].items() if q)
    assert qual3 == comb(13, 3) - comb(7, 3)  # the engine's 9-high rule on every 3-subset
    not_q = 0
    for comp in _compositions():
        m = max(comp)
        if m == 2:
            not_q += prod(comb(13, k) for k in comp)
        elif m == 3:
            not_q += prod(comb(7, 3) if k == 3 else comb(13, k) for k in comp)
    assert not_q == 32959524
    assert comb(52, 7) - not_q == 100825036


@pytest.mark.clause("rules:1.2-best-four")
def test_best_cards_are_four_of_the_hand_worth_its_value():
    import random

    rng = random.Random(7)
    for _ in range(60000):
        h = rng.sample(range(52), 5)
        v = fcf.value(h)
        best = fcf.best_cards(h, v)
        assert len(set(best)) == 4 and set(best) <= set(h)
        assert naive.value4(best) == v, (h, best)
