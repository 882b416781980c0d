"""The game engine: Four Card Frenzy and High Card Flush, evaluated and settled (rules.md 1, 2).

Entry points (see engine's docstring): engine.evaluate_round / check_wagers / check_raise,
paytable.load / PRESETS, packing.pack (the host unpacks: host_tools/engine/unpacking.py).

    engine      validation of a dealt round, dispatch to the settlement
    fcf, hcf    hand values (FCF best four of five; HCF flush and straight flush)
    allsix      the All-Six Bonus category of six cards
    fcfround, hcfround, settle    settlement (wager entries, payout limit)
    paytable, presets             pay tables as data and the example presets
    pttypes                       the PayTable and PaytableError (shared by paytable and ptcheck)
    ptcheck, messages             pay table checking and error texts (loaded only when needed)
    packing                       the binary round_result for the wire
    jsonout                       deterministic JSON for `shoectl eval` (its device side is
                                  host_tools/engine/evalrun.py)
"""
