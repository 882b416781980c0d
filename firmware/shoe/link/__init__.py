"""The wire protocol between the shoe and the host (docs/protocol.md), sans-I/O, same code on
both ends: crc (CRC-32), cobs (framing), codec (canonical CBOR subset), frame (frames and the
resynchronising deframer), message (command/event envelopes with HMAC, hash chain), store (the
persistence interface + an in-memory one), endpoint (sessions, acks, retransmission, heartbeats,
handshake, authentication). Import what you need: `from shoe.link.endpoint import Endpoint`.
"""
