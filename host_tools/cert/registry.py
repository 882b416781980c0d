"""The rule clauses the shoe enforces, one entry each: the clause matrix's rows.

Sources: the regulation texts we hold (58 Pa. Code 684a.7 and 684a.11, Four Card Frenzy; 678a.7,
High Card Flush: ../shared/reference/seeds/), and the decisions of ../shared/spec/rules.md
(sections 1-4: what the shoe does where the regulation text is missing or ambiguous, its
irregularities included) and of docs/irregularities.md (the shoe's own irregularities).

Identifiers:
    684a.7(c), 684a.11(c)(2)(ii)(A), 678a.7(d)(4)   a subsection of a regulation text we hold
    rules:1.4-automated                             a rule of rules.md section 1.4
    irr:power-loss                                  an irregularity of docs/irregularities.md

A clause whose `scope` is "shoe" must name at least one code location (a `# clause: ID` comment
on the function that implements it) and at least one test (`@pytest.mark.clause("ID")`) that
fails when that code is broken; `shoectl certify check` and tests/host_tools/cert enforce it.
A clause of the regulation the shoe cannot see (chips on the layout, who sits where) has scope
"outside" and says why; it needs neither.
"""

FCF = "four-card-frenzy"
HCF = "high-card-flush"
BOTH = "both"

SEED_FCF = "58 Pa. Code 684a (seeds 000, 001, 002)"
SEED_HCF = "58 Pa. Code 678a.7 (seed 003)"


class Clause:
    __slots__ = ("id", "game", "source", "text", "scope", "why")

    def __init__(self, id, game, source, text, scope="shoe", why=None):
        self.id, self.game, self.source, self.text = id, game, source, text
        self.scope, self.why = scope, why

    def as_dict(self):
        return {k: getattr(self, k) for k in self.__slots__}


def _c(*a, **kw):
    return Clause(*a, **kw)


def _out(id, game, source, text, why):
    return Clause(id, game, source, text, scope="outside", why=why)


CLAUSES = [
    # ---- 58 Pa. Code 684a.7 Wagers (Four Card Frenzy) ------------------------------------------
    _out(
        "684a.7(a)",
        FCF,
        "684a.7(a)",
        "Wagers are value chips, plaques or other approved instruments placed on the layout; "
        "verbal wagers with cash are not accepted.",
        "Physical wagering on the layout. The shoe receives the amounts the table system sends "
        "with open_round; it never sees chips.",
    ),
    _out(
        "684a.7(b)",
        FCF,
        "684a.7(b)",
        "Only seated players may wager; a player who has wagered and received cards stays "
        "seated until the round ends; wagers of a player who leaves may be treated as lost.",
        "Who sits and who leaves is the dealer's and the table system's. The shoe only takes "
        "seats 1..6 (rules:1.1-seats).",
    ),
    _c(
        "684a.7(c)",
        FCF,
        "684a.7(c); rules.md 1.3",
        'Every wager except the Raise is placed before "no more bets"; after it no wager may be '
        'made, increased or withdrawn except the Raise. In the shoe open_round is "no more '
        'bets": the wagers it carries are fixed, a second open_round, configure or load_deck is '
        "refused while the round is open, the only later input is each seat's Raise, and the "
        "round settles the wagers of open_round.",
    ),
    _c(
        "684a.7(d)(1)",
        FCF,
        "684a.7(d)(1); rules.md 1.3",
        "The main game: Ante and Odds in equal amounts, both required, then a Raise under "
        "684a.11(b). A seat whose Ante and Odds differ, or that has neither, is refused.",
    ),
    _c(
        "684a.7(d)(2)",
        FCF,
        "684a.7(d)(2)",
        "Prime Wager (optional): wins if at least four of the player's five cards are of the "
        "same colour.",
    ),
    _c(
        "684a.7(d)(3)",
        FCF,
        "684a.7(d)(3), 684a.6(d)",
        "Four Card Bonus Wager (optional): wins if the player's best four-card hand is two pair "
        "or better.",
    ),
    _c(
        "684a.7(d)(4)",
        FCF,
        "684a.7(d)(4), 684a.6(e)",
        "All-Six Bonus Wager (optional): wins if the player's five cards and the All-Six Bonus "
        "card form three of a kind or better.",
    ),
    _out(
        "684a.7(e)",
        FCF,
        "684a.7(e)",
        "The Rules Submission fixes how many adjacent boxes one player may wager on in a round.",
        "The shoe knows seats, not players; the table system enforces the number of boxes a "
        "player may play.",
    ),
    # ---- 58 Pa. Code 684a.11 Completion of each round (Four Card Frenzy) ----------------------
    _out(
        "684a.11(a)",
        FCF,
        "684a.11(a)(1),(2)",
        "Each player examines only his own cards, keeps his five cards in full view of the "
        "dealer; only the dealer and that player may touch them.",
        "Conduct at the table; nothing passes the shoe.",
    ),
    _c(
        "684a.11(b)",
        FCF,
        "684a.11(b); rules.md 1.5",
        "After the deal every player with Ante and Odds decides: Raise or forfeit Ante and Odds. "
        "The shoe takes a decision from each seat of the round and from no other, once per "
        "seat, and settles only when every seat has decided (the order of asking, clockwise "
        "from the dealer's left, is the dealer's: the shoe accepts the decisions in any "
        "order).",
    ),
    _c(
        "684a.11(b)(1)",
        FCF,
        "684a.11(b)(1); rules.md 1.5",
        "Raise: equal to the Ante if the player's best four is a pair of kings or lower (every "
        "high-card hand, any pair 2..K); one, two or three times the Ante if it is a pair of aces "
        "or higher. Any other amount is refused.",
    ),
    _c(
        "684a.11(b)(2)",
        FCF,
        "684a.11(b)(2); rules.md 1.5",
        "Fold (no Raise): the Ante and Odds are lost; a Prime, Four Card Bonus or All-Six Bonus "
        "wager stays in action and is settled with the seat's cards.",
    ),
    _c(
        "684a.11(c)",
        FCF,
        "684a.11(c), (c)(1); 684a.6(b),(c)",
        "The dealer's five cards form the highest four-card hand; each player's best four is "
        "compared with it (the counter-clockwise order of settling does not change any result: "
        "the shoe settles every seat from the same hands).",
    ),
    _c(
        "684a.11(c)(2)(i)",
        FCF,
        "684a.11(c)(2)(i)",
        "Ante: if the dealer's best four is not king high or better, the Ante is returned "
        "(push), whatever the player holds.",
    ),
    _c(
        "684a.11(c)(2)(ii)(A)",
        FCF,
        "684a.11(c)(2)(ii)(A); rules.md 1.6",
        "Ante: the dealer is king high or better and the player's hand is greater than or equal "
        "to the dealer's: the Ante is paid (ties: variant rules:1.6-ties).",
    ),
    _c(
        "684a.11(c)(2)(ii)(B)",
        FCF,
        "684a.11(c)(2)(ii)(B)",
        "Ante: the dealer is king high or better and the player's hand is lower: the Ante is "
        "lost.",
    ),
    _c(
        "684a.11(c)(3)(i)",
        FCF,
        "684a.11(c)(3)(i); rules.md 1.6",
        "Raise: the player's hand is greater than or equal to the dealer's: the Raise is paid "
        "(no qualifier in the text; variants rules:1.6-ties, rules:1.6-raise-not-open).",
    ),
    _c(
        "684a.11(c)(3)(ii)",
        FCF,
        "684a.11(c)(3)(ii)",
        "Raise: the player's hand is lower than the dealer's: the Raise is lost.",
    ),
    _c(
        "684a.11(c)(4)(i)(A)",
        FCF,
        "684a.11(c)(4)(i)(A); 684a.12(b)",
        "Odds: the player holds a straight or better and is greater than or equal to the "
        "dealer: the Odds wager is paid from the pay table's odds.win.",
    ),
    _c(
        "684a.11(c)(4)(i)(B)",
        FCF,
        "684a.11(c)(4)(i)(B); 684a.12(c)",
        "Odds: the player holds a straight or better and loses to the dealer: the Odds wager is "
        "paid the bad-beat payout (odds.bad_beat), not lost.",
    ),
    _c(
        "684a.11(c)(4)(ii)(A)",
        FCF,
        "684a.11(c)(4)(ii)(A)",
        "Odds: the player holds two pair or lower and is greater than or equal to the dealer: "
        "the Odds wager is returned (push).",
    ),
    _c(
        "684a.11(c)(4)(ii)(B)",
        FCF,
        "684a.11(c)(4)(ii)(B)",
        "Odds: the player holds two pair or lower and is lower than the dealer: the Odds wager "
        "is lost.",
    ),
    _c(
        "684a.11(d)(1)",
        FCF,
        "684a.11(d)(1)(i),(ii); 684a.12(d)",
        "Prime: four or more of the player's five cards of one colour: paid from the pay "
        "table's prime section (five or four of one colour); otherwise lost.",
    ),
    _c(
        "684a.11(d)(2)",
        FCF,
        "684a.11(d)(2)(i),(ii); 684a.12(e)",
        "Four Card Bonus: the player's four-card hand two pair or better: paid from the pay "
        "table's four_card_bonus section; otherwise lost.",
    ),
    _c(
        "684a.11(d)(3)",
        FCF,
        "684a.11(d)(3)(i),(ii); 684a.12(f)",
        "All-Six Bonus: the All-Six card combined with the player's five cards into the highest "
        "six-card hand; three of a kind or better paid from the all_six section; otherwise "
        "lost.",
    ),
    _c(
        "684a.11(e)",
        FCF,
        "684a.11(e)",
        "The cards go to the discard rack so that every hand can be reconstructed in a dispute. "
        "The shoe supports it: every card's position and destination is an event, and the last "
        "100 rounds (cards, hands and result) can be recalled from the shoe's journal.",
    ),
    # ---- 58 Pa. Code 678a.7 Wagers (High Card Flush) -------------------------------------------
    _out(
        "678a.7(a)",
        HCF,
        "678a.7(a)",
        "Wagers are value chips, plaques or other approved instruments placed on the layout; "
        "verbal wagers with cash are not accepted.",
        "Physical wagering on the layout; the shoe receives amounts from the table system.",
    ),
    _out(
        "678a.7(b)",
        HCF,
        "678a.7(b)",
        "Only seated players may wager; a player who has wagered and received cards stays "
        "seated; wagers of a player who leaves may be treated as lost.",
        "Who sits is the dealer's and the table system's; the shoe takes seats 1..6 "
        "(rules:2.2-dealing).",
    ),
    _c(
        "678a.7(c)",
        HCF,
        "678a.7(c); rules.md 2.2",
        'Ante, Flush Bonus, Straight Flush Bonus and Progressive wagers are placed before "no '
        'more bets"; after it nothing may be made, increased or withdrawn except the Raise. As '
        "684a.7(c): the wagers of open_round are fixed, only Raises follow.",
    ),
    _c(
        "678a.7(d)(1)",
        HCF,
        "678a.7(d)(1); rules.md 2.2",
        "The main game: an Ante (required), then a Raise under 678a.11(b) (rules:2.2-raise-caps). "
        "A seat without an Ante is refused.",
    ),
    _c(
        "678a.7(d)(2)",
        HCF,
        "678a.7(d)(2); 678a.6(b); rules.md 2.2",
        "Flush Bonus (optional): wins if the player's seven cards form a four-card flush or "
        "higher, paid flush_bonus[length]; it has no bearing on any other wager.",
    ),
    _c(
        "678a.7(d)(3)",
        HCF,
        "678a.7(d)(3); 678a.6(d); rules.md 2.2",
        "Straight Flush Bonus (optional): wins if the player's seven cards form a three-card "
        "straight flush or higher, paid straight_flush_bonus[length] if the table lists that "
        "length; it has no bearing on any other wager.",
    ),
    _c(
        "678a.7(d)(4)",
        HCF,
        "678a.7(d)(4); rules.md 2.2",
        "Progressive Jackpot Wager (optional, only with an Ante): wins on a three-card straight "
        "flush, or a four-card straight flush or higher, as the selected pay table says. The "
        "shoe reports the tier the longest straight flush hits (or none); the jackpot meter and "
        "award are the host's.",
    ),
    _out(
        "678a.7(e)",
        HCF,
        "678a.7(e)",
        "The Rules Submission fixes how many adjacent boxes one player may wager on.",
        "The shoe knows seats, not players.",
    ),
    # ---- rules.md 1.1 Table, cards, decks -------------------------------------------------------
    _c(
        "rules:1.1-seats",
        BOTH,
        "rules.md 1.1; 684a.2(a)",
        "Up to six player seats, numbered 1..6 (seat 1 farthest to the dealer's left); a seat "
        "number outside 1..6, a seat twice or more than six seats is refused.",
    ),
    _c(
        "rules:1.1-deck",
        BOTH,
        "rules.md 1.1; 684a.3(a)",
        "One 52-card deck plus one cover card. Before a deck deals, its check pass must read "
        "exactly its 52 cards and the cover card: a missing, doubled, foreign or forged card, "
        "or no cover card, fails the check and the deck does not deal.",
    ),
    _c(
        "rules:1.1-two-decks",
        BOTH,
        "rules.md 1.1; 684a.3(b)",
        "Two-deck mode: two decks with different back colours alternate, each every other "
        "round, never both in one round.",
    ),
    _c(
        "rules:1.1-deck-age",
        BOTH,
        "rules.md 1.1; 684a.3(c)",
        "A deck is replaced after 4 h if dealt by hand, 8 h if dealt from a shoe: the shoe's "
        "default limits, per procedure.",
    ),
    _c(
        "rules:1.1-shuffle",
        BOTH,
        "rules.md 1.1; 684a.5(a)",
        "The cards are shuffled after every round: a round dealt in the same order as one of the "
        "last four (even after a cut or one riffle) is caught (rules:3-unshuffled).",
    ),
    _c(
        "rules:1.1-cover-last",
        BOTH,
        "rules.md 1.1; 684a.5(d)",
        "After a cut the cover card is the last item of the stack: the shoe ends a deck check "
        "or stub pass at the cover card, a pass without it fails, and the cover card during a "
        "deal is an irregularity (rules:3-cover-card).",
    ),
    # ---- rules.md 1.2 Four-card hands -----------------------------------------------------------
    _c(
        "rules:1.2-ace",
        FCF,
        "rules.md 1.2; 684a.6(a)",
        "The ace is high; it is low only in A-2-3-4 (the lowest straight / straight flush); no "
        "wrap-around (Q-K-A-2 is nothing).",
    ),
    _c(
        "rules:1.2-categories",
        FCF,
        "rules.md 1.2; 684a.6(b)",
        "The eight four-card categories, high to low: four of a kind, straight flush, three of "
        "a kind, flush, straight, two pair, pair, high card (reference counts over all C(52,5) "
        "hands in rules.md 1.2).",
    ),
    _c(
        "rules:1.2-best-four",
        FCF,
        "rules.md 1.2; 684a.6(b), 684a.11(b),(c)",
        "Each hand, player's and dealer's, is the best four of its five cards; the shoe "
        "forms it itself.",
    ),
    _c(
        "rules:1.2-tiebreak",
        FCF,
        "rules.md 1.2 (decision); 684a.6(c)",
        "Decision: category first; inside a category, in order: quad rank; straight top card "
        "(A-2-3-4 has top 4); trips rank then kicker; higher pair, lower pair; pair rank then "
        "kickers high to low; flush and high card card by card. Only the four chosen cards "
        "count: the fifth card and suits never break a tie. Equal after that: a tie.",
    ),
    # ---- rules.md 1.3 Wagers --------------------------------------------------------------------
    _c(
        "rules:1.3-optional-needs-ante",
        BOTH,
        "rules.md 1.3, 2.2 (decision)",
        "An optional wager is accepted only at a seat that also has the main wager (FCF: Ante "
        "and Odds; HCF: Ante).",
    ),
    _c(
        "rules:1.3-offered",
        BOTH,
        'rules.md 1.3; 684a.7(d)(2)-(4) ("if specified in its Rules Submission")',
        "Which optional wagers a table offers is configuration: a wager the table does not "
        "offer is refused, and a pay table that does not pay an offered wager is refused at "
        "configure time.",
    ),
    # ---- rules.md 1.4 Dealing -------------------------------------------------------------------
    _c(
        "rules:1.4-manual",
        FCF,
        "rules.md 1.4 (decision); 684a.8(c)",
        "Manual shoe: with an All-Six wager the first card goes face down to the All-Six area; "
        "then one card at a time to each active seat in seat order, then the dealer, round "
        "after round, until each holds five.",
    ),
    _c(
        "rules:1.4-hand",
        FCF,
        "rules.md 1.4 (decision); 684a.9 (text missing)",
        "Dealing from the hand: the same order as the manual shoe.",
    ),
    _c(
        "rules:1.4-automated",
        FCF,
        "rules.md 1.4; 684a.10(b)",
        "Automated shoe: stacks of five, the first to the first active seat, then each other "
        "active seat in order, then the dealer; with an All-Six wager one more stack whose first "
        "card goes to the All-Six area and whose other four go to the discard rack unseen (they "
        "count as dealt).",
    ),
    _c(
        "rules:1.4-card-count",
        FCF,
        "rules.md 1.4; 684a.10(b),(c)",
        "Cards per round: 5 x (seats + 1), plus 1 (manual shoe or hand with an All-Six wager) or "
        "5 (automated shoe with one); then the stub leaves the shoe.",
    ),
    _c(
        "rules:1.4-stub-count",
        BOTH,
        "rules.md 1.4; 684a.10(d)",
        "The stub is counted at least every 5 rounds; the shoe counts it every round by "
        "default (stub_every 1, at most 5; raising it needs the supervisor key).",
    ),
    # ---- rules.md 1.5 Raise or fold -------------------------------------------------------------
    _c(
        "rules:1.5-refused",
        BOTH,
        "rules.md 1.5, 2.2",
        "A Raise that breaks the rules is refused with an error naming the seat, the hand and "
        "the allowed amounts; nothing changes and the round waits for a valid decision.",
    ),
    # ---- rules.md 1.6 Settlement ----------------------------------------------------------------
    _c(
        "rules:1.6-dealer-opens",
        FCF,
        "rules.md 1.6 (decision); 684a.11(c)(2)",
        '"King high or better": the dealer opens with a pair or better, or a high-card best '
        "four whose highest card is K or A (2,202,480 of the 2,598,960 five-card hands).",
    ),
    _c(
        "rules:1.6-ties",
        FCF,
        "rules.md 1.6 (variant)",
        "Variant `ties`: `player` (default, the PA text: a tie wins Ante and Raise) or `push` "
        "(public rules: a tie pushes Ante and Raise).",
    ),
    _c(
        "rules:1.6-raise-not-open",
        FCF,
        "rules.md 1.6 (variant)",
        "Variant `raise_when_dealer_not_open`: `compare` (default, the PA text: the Raise is "
        "settled by comparison) or `win` (public rules: the Raise wins when the dealer does not "
        "open).",
    ),
    _c(
        "rules:1.6-odds-by-hands",
        FCF,
        "rules.md 1.6; docs/engine.md (decision)",
        'The Odds wager follows "P >= D" under both `ties` variants and never depends on the '
        "dealer opening.",
    ),
    _c(
        "rules:1.6-four-card-bonus",
        FCF,
        "rules.md 1.6; 684a.6(d)",
        "Four Card Bonus categories: four of a kind, royal flush (A-K-Q-J suited, split out of "
        "the straight flushes), straight flush, three of a kind, flush, straight, two pair; "
        "each pays its own pay-table entry.",
    ),
    _c(
        "rules:1.6-all-six",
        FCF,
        "rules.md 1.6 (decision); 684a.6(e)",
        "All-Six categories on the best five of six cards (A-2-3-4-5 allowed, no wrap): "
        "six-card royal flush (A-K-Q-J-T-9 suited), royal flush, straight flush, four of a kind, "
        "full house, flush, straight, three of a kind; only the single highest category pays.",
    ),
    _c(
        "rules:1.6-payout-limit",
        BOTH,
        "rules.md 1.6; 684a.12(g)",
        "Optional payout limit: a seat's winning payouts in one round are capped at the "
        "configured amount; losses are not (net = min(wins, limit) - losses); the result says "
        "when the cap applied and gives the uncapped net.",
    ),
    # ---- rules.md 2 High Card Flush -------------------------------------------------------------
    _c(
        "rules:2.1-flush",
        HCF,
        "rules.md 2.1; 678a.6(b)",
        "Seven cards to each hand; a hand's flush is its largest group of one suit (2..7 "
        "cards); if two suits tie on length, the one whose cards compare higher card by card.",
    ),
    _c(
        "rules:2.1-compare",
        HCF,
        "rules.md 2.1 (decision); 678a.6(c)",
        "Hands compare by flush length first, then the flush cards card by card high to low; "
        "off-suit cards never count; equal is a tie.",
    ),
    _c(
        "rules:2.1-straight-flush",
        HCF,
        "rules.md 2.1 (decision); 678a.6(d)",
        "Straight flush (for the bonus wagers): consecutive ranks in one suit, 3..7 long, ace "
        "high or low (A-2-3 counts), no wrap; the longest run counts, once.",
    ),
    _c(
        "rules:2.2-dealing",
        HCF,
        "rules.md 2.2 (decision)",
        "Manual shoe and hand: one card at a time, seats in order then the dealer, until seven "
        "each; automated shoe: stacks of seven, seats then dealer; at most 6 seats.",
    ),
    _c(
        "rules:2.2-raise-caps",
        HCF,
        "rules.md 2.2 (decision)",
        "Raise by the player's flush length: 2-4 cards exactly 1x Ante; 5: 1x or 2x; 6-7: 1x, "
        "2x or 3x.",
    ),
    _c(
        "rules:2.2-fold",
        HCF,
        "rules.md 2.2 (decision)",
        "Fold: the Ante is lost; the bonus wagers stay in action.",
    ),
    _c(
        "rules:2.2-dealer-qualifies",
        HCF,
        "rules.md 2.2 (decision)",
        "The dealer qualifies with a three-card flush whose highest card is 9 or more, or any "
        "flush of four or more cards.",
    ),
    _c(
        "rules:2.2-not-qualified",
        HCF,
        "rules.md 2.2 (decision)",
        "The dealer does not qualify: Ante paid 1 to 1, Raise pushes.",
    ),
    _c(
        "rules:2.2-qualified",
        HCF,
        "rules.md 2.2 (decision)",
        "The dealer qualifies: player higher, Ante and Raise paid 1 to 1; tie, both push; "
        "player lower, both lost.",
    ),
    # ---- rules.md 3 Irregularities --------------------------------------------------------------
    _c(
        "rules:3-latched",
        BOTH,
        "rules.md 3",
        "Each irregularity is a latched event with a reason code, sent to the host, kept until "
        "acknowledged (it survives a power cut); the blocking ones refuse the next round until "
        "then.",
    ),
    _c(
        "rules:3-supervisor-ack",
        BOTH,
        "rules.md 3",
        "Acknowledging a latched irregularity needs the supervisor: a command signed with the "
        "table key is refused.",
    ),
    _c(
        "rules:3-never-settle",
        BOTH,
        "rules.md 3",
        "The shoe never settles a round it knows is irregular: the round is void before the "
        "engine is asked, and every round ends in exactly one result or one void.",
    ),
    _c(
        "rules:3-misdeal-too-many",
        BOTH,
        "rules.md 3",
        "Misdeal: a card (or an unreadable card) after the deal was complete: round void, the "
        "deck rechecked.",
    ),
    _c(
        "rules:3-misdeal-too-few",
        BOTH,
        "rules.md 3",
        "Misdeal: the round closed before the deal completed: round void.",
    ),
    _c(
        "rules:3-card-foreign",
        BOTH,
        "rules.md 3",
        "A card of another deck (serial or back differ): round void, deck quarantined.",
    ),
    _c(
        "rules:3-card-other-back",
        BOTH,
        "rules.md 3; 684a.3(b)",
        "Two-deck mode: a card of the other back colour in a round: round void, both decks out.",
    ),
    _c(
        "rules:3-card-forged",
        BOTH,
        "rules.md 3",
        "A card whose code fails authentication (its MAC): round void, deck quarantined.",
    ),
    _c(
        "rules:3-duplicate",
        BOTH,
        "rules.md 3",
        "A card already dealt since the last shuffle: round void, deck quarantined.",
    ),
    _c(
        "rules:3-cover-card",
        BOTH,
        "rules.md 3",
        "The cover card out of the shoe during a deal: round void, reshuffle (deck rechecked).",
    ),
    _c(
        "rules:3-stub-misdealt",
        BOTH,
        "rules.md 3",
        "Stub count wrong (dealt + stub != 52) but all 52 cards present: round void, deck "
        "rechecked.",
    ),
    _c(
        "rules:3-stub-deck-wrong",
        BOTH,
        "rules.md 3",
        "Stub count wrong and the union of dealt and stub is not exactly the deck (missing, "
        "foreign or forged cards, or no cover card): round void, deck removed.",
    ),
    _c(
        "rules:3-unreadable",
        BOTH,
        "rules.md 3",
        "An unreadable card (no read, garbled read) may be re-presented a configured number of "
        "times; beyond that it is a misdeal (round void).",
    ),
    _c(
        "rules:3-unshuffled",
        BOTH,
        "rules.md 3; docs/irregularities.md",
        "Unshuffled deck: a dealt sequence far too ordered to be a shuffle, or repeating an "
        "earlier round: a warning before settlement, and the round is void.",
    ),
    _c(
        "rules:3-deck-expired",
        BOTH,
        "rules.md 3",
        "A deck older than the 4 h / 8 h limit: a warning (latched); the round goes on.",
    ),
    _c(
        "rules:3-jam",
        BOTH,
        "rules.md 3",
        "Shoe jam: no card within the configured time while the deal is incomplete: an event "
        "(the deal goes on when cards come); a stalled pass fails.",
    ),
    _c(
        "irr:card-out-of-round",
        BOTH,
        "docs/irregularities.md",
        "A card leaves the shoe while no deal or pass runs: latched, the deck goes through the "
        "reader again before the next round.",
    ),
    _c(
        "irr:void-supervisor",
        BOTH,
        "docs/irregularities.md",
        "A supervisor voids the open round (void_round): void, deck rechecked.",
    ),
    _c(
        "irr:power-loss",
        BOTH,
        "docs/irregularities.md, docs/architecture.md",
        "A power cut loses and doubles nothing: the table resumes from the journal (the dealer "
        "re-presents a card the shoe had not recorded) and every round ends in exactly one "
        "result or one void. Table.void_in_progress voids an open round the app cannot resume "
        "(reason power_loss; the app does not call it today).",
    ),
    _c(
        "irr:settle-error",
        BOTH,
        "docs/irregularities.md",
        "The engine refuses or fails on a dealt round (a bug): the round is void, never "
        "settled, and the shoe keeps running.",
    ),
    _c(
        "irr:journal-corrupt",
        BOTH,
        "docs/irregularities.md, docs/journal.md",
        "Flash corruption found at boot: journal_corrupt latched and blocking; if the restored "
        "state may be stale the open round is void and the decks are out.",
    ),
    # ---- rules.md 4 Pay tables are data ---------------------------------------------------------
    _c(
        "rules:4-paytable-data",
        BOTH,
        "rules.md 4; 684a.12, 678a.12 (text missing)",
        "The shoe never hard-codes a payout: a pay table is a JSON document loaded per table "
        "and validated; a bad one is refused naming the field.",
    ),
    _c(
        "rules:4-examples",
        BOTH,
        "rules.md 4",
        "The shipped pay tables are examples from public game descriptions (rules.md 4 values), "
        "marked as examples; the All-Six table is marked illustrative.",
    ),
    _c(
        "rules:4-round-down",
        BOTH,
        "rules.md 4",
        "Payouts may be fractional odds; amounts are integers in the smallest currency unit and "
        "a payout is rounded down, and the result says so.",
    ),
]

BY_ID = {c.id: c for c in CLAUSES}
GAMES = {FCF: "Four Card Frenzy", HCF: "High Card Flush", BOTH: "both games"}


def check_registry():
    """Problems of the registry itself (ids unique and well formed, fields filled)."""
    out = []
    seen = set()
    for c in CLAUSES:
        if c.id in seen:
            out.append("clause %s is listed twice" % c.id)
        seen.add(c.id)
        if not c.text or not c.source or c.game not in GAMES:
            out.append("clause %s: text, source and game are required" % c.id)
        if c.scope not in ("shoe", "outside"):
            out.append("clause %s: scope must be shoe or outside" % c.id)
        if c.scope == "outside" and not c.why:
            out.append("clause %s is outside the shoe but does not say why" % c.id)
        if any(ch in c.id for ch in " ,\"'"):
            out.append("clause id %r: no spaces, commas or quotes" % c.id)
    return out
