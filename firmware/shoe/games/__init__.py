"""The game engine: Four Card Frenzy and High Card Flush, evaluated and settled (rules.md 1, 2).

engine (entry points: evaluate_round, check_wagers, check_raise), fcf / hcf / allsix (hands),
fcfround / hcfround (settlement), paytable + presets (pay tables as data), packing (binary
round_result), jsonout + evalrun (deterministic JSON Lines for `shoectl eval`), naive (the
slow reference evaluator used only by tests and benchmarks).
"""
