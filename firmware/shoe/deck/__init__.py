"""Deck integrity: the deck ledger (ledger.py), the unshuffled-deck detector (shuffle_check.py)."""
