"""shoectl commands, one module each.

A command module defines NAME (the sub-command), HELP (one line), `configure(parser)` to add its
arguments, and `run(args) -> int`. host_tools.cli finds every module here; adding a command is
adding a file.
"""
