"""The game engine: Four Card Frenzy and High Card Flush, evaluated and settled (rules.md 1, 2).

Entry points (see engine's docstring): engine.evaluate_round / check_wagers / check_raise,
paytable.load / PRESETS, packing.pack / unpack.

    engine      validation of a dealt round, dispatch to the settlement
    fcf, hcf    hand values (FCF best four of five; HCF flush and straight flush)
    allsix      the All-Six Bonus category of six cards
    fcfround, hcfround, settle    settlement (wager entries, payout limit)
    paytable, presets             pay tables as data and the example presets
    ptcheck, messages             pay table checking and error texts (loaded only when needed)
    packing, unpacking            the binary round_result for the wire
    jsonout, evalrun              deterministic JSON Lines for `shoectl eval` (device side)
    fcfhost     CPython-only lookup table for fcf.value5 (not for the board)
"""
