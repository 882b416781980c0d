"""The example pay tables of rules.md 4 as JSON text (each `"example": true`), in the order of
shoe.games.paytable.PRESETS. Text, not dict literals: a string costs its length in RAM, a dict
display costs many times that in bytecode.

The values come from public game descriptions, not from the PA regulation (684a.12 / 678a.12
were not obtainable). The All-Six Bonus table is illustrative only (no public table was found):
the document says so in `illustrative` and `notes`.
"""

# clause: rules:4-examples
TEXT = (
    '{"name": "fcf-public-1", "game": "four-card-frenzy", "example": true, '
    '"notes": "example values from public game descriptions; the all_six table is '
    'illustrative only (no public table found)", "illustrative": ["all_six"], '
    '"odds": {"four_of_a_kind": {"win": 30, "bad_beat": 100}, '
    '"straight_flush": {"win": 15, "bad_beat": 50}, '
    '"three_of_a_kind": {"win": 2, "bad_beat": 4}, "flush": {"win": 1.5, "bad_beat": 3}, '
    '"straight": {"win": 1, "bad_beat": 2}}, '
    '"prime": {"five_one_colour": 5, "four_one_colour": 1}, '
    '"four_card_bonus": {"four_of_a_kind": 100, "royal_flush": 50, "straight_flush": 30, '
    '"three_of_a_kind": 8, "flush": 4, "straight": 3, "two_pair": 2}, '
    '"all_six": {"six_card_royal_flush": 1000, "royal_flush": 200, "straight_flush": 50, '
    '"four_of_a_kind": 20, "full_house": 10, "flush": 5, "straight": 4, '
    '"three_of_a_kind": 3}, "payout_limit": null}',
    '{"name": "hcf-public-1", "game": "high-card-flush", "example": true, '
    '"notes": "example values from public game descriptions", '
    '"flush_bonus": {"7": 300, "6": 100, "5": 10, "4": 1}, '
    '"straight_flush_bonus": {"7": 8000, "6": 1000, "5": 100, "4": 60, "3": 7}, '
    '"progressive": {"7": "jackpot", "6": "tier-2", "5": "tier-3", "4": "tier-4"}, '
    '"payout_limit": null}',
    '{"name": "hcf-public-2", "game": "high-card-flush", "example": true, '
    '"notes": "example values (alternative public table)", '
    '"flush_bonus": {"7": 100, "6": 20, "5": 10, "4": 2}, '
    '"straight_flush_bonus": {"7": 500, "6": 200, "5": 100, "4": 50, "3": 9}, '
    '"progressive": {"7": "jackpot", "6": "tier-2", "5": "tier-3", "4": "tier-4"}, '
    '"payout_limit": null}',
)
