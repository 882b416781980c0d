"""The firmware's engine (shoe.games) on the host, never a copy of it: `shoectl eval`
(evaluate.py, with evalrun.py its side in the MicroPython process), re-evaluation of reported
results (reeval.py) and the reading half of the packed round_result (unpacking.py)."""
