"""Dealing: where each card goes (tracker.py) and validation of table set-up and seats (setup.py)."""
