"""Dealing: where each card goes (tracker.py); table set-up and seat validation (setup.py)."""
