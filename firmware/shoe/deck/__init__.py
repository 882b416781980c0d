"""Deck integrity: the deck ledger (ledger.py) and the unshuffled-deck detector (shuffle_check.py)."""
