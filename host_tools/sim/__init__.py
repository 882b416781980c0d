"""The simulator: everything that stands in for the world around a real shoe.

simboard (the virtual board: the firmware under the MicroPython unix port), world (the dealer,
the cards and the reader), faultproxy (a hostile cable), session (the scripted table system that
plays a script against a board), virtual_table (board + world + runner, what `shoectl session`
and `shoectl demo` start), remote (the same runner against a board that runs elsewhere),
power_returns (re-sending a command across a power cut), provision_sim (the demo keys of a
virtual board) and demo (the demo's players and scripts). The product (link, audit, deploy,
diagnostics, commands) does not import from here, except the commands that start a simulator.
"""
