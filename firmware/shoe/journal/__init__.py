"""Power-loss-safe storage on the board's flash (a directory; the --state directory on the
virtual board): log (CRC'd append-only record files, recovery, atomic rewrite), journal (the
Journal: table snapshot, counters, latched errors, the link's outbox, hash-chain head, the last
100 rounds), config (the provisioned shoe id and keys). See docs/journal.md.
"""
