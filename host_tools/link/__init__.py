"""The host end of the shoe link, a library (the command line's options and `connect()` live
with the commands: host_tools/commands/_linkopts.py).

    from host_tools.link import ShoeLink, DEMO_KEY
    with ShoeLink("socket://127.0.0.1:7001", DEMO_KEY, audit=store) as link:   # no default key
        link.open(timeout=10)                       # handshake; ShoeError if refused / silent
        reply = link.command("status", {})          # reply body; ShoeError(reason) on error reply
        ev = link.next_event(timeout=1.0)           # (kind, body, eseq) or None

Modules:
    shoelink.py     ShoeLink (reader thread, audit store, host state and counter floor, reveal
                    checks, reconnection), REASONS (refusal reasons in words), DEMO_KEY
    attestation.py  verify_attestation: a shoe's answer to a challenge against the local tree
    factory.py      link_for: a ShoeLink, or a GatewayLink for a gateway's API address
    viagateway.py   GatewayLink: the same interface through a `shoectl gateway`
    apiwire.py      the gateway API's framing and addresses (is_gateway_url)
    host.py         the host's Endpoint over the firmware's link code (also runs on MicroPython)
    portlock.py     one host process per port
"""

from host_tools.link.apiwire import is_gateway_url
from host_tools.link.attestation import verify_attestation
from host_tools.link.factory import link_for
from host_tools.link.shoelink import DEMO_KEY, REASONS, ShoeLink

__all__ = ["DEMO_KEY", "REASONS", "ShoeLink", "is_gateway_url", "link_for", "verify_attestation"]
