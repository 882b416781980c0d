"""The wire protocol between the shoe and the host (docs/protocol.md), sans-I/O, same code on
both ends: crc (CRC-32), cobs (framing), codec (canonical CBOR subset), frame (frames and the
resynchronising deframer), message (command/event envelopes with HMAC, hash chain), endpoint
(sessions, acks, retransmission, heartbeats, authentication) with handshake and sendqueue
(fragments, the durable queue) as its mixins. The host end subclasses it in
host_tools/link/host.py; the store interface is in docs/protocol.md 7.
Import what you need: `from shoe.link.endpoint import Endpoint`.
"""
