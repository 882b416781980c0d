"""link_for(): the link for an address, a ShoeLink on the shoe's port or a GatewayLink through a
`shoectl gateway`'s API (gateway+unix://, gateway+tcp://, gateway+tls://)."""

from host_tools.link.apiwire import is_gateway_url
from host_tools.link.shoelink import ShoeLink


def link_for(url, key, supervisor_key=None, audit=None, role=None, **options):
    """A ShoeLink on the shoe's port, or a GatewayLink (host_tools/link/viagateway.py) for a
    gateway's API address (gateway+unix://PATH, gateway+tcp://127.0.0.1:PORT): the same
    open/command/next_event/close; through a gateway the gateway's store keeps the events
    (`audit` is not written) and `role` says what this client speaks as (default: supervisor
    with a supervisor key, else table)."""
    if is_gateway_url(url):
        from host_tools.link.viagateway import GatewayLink

        return GatewayLink(url, key, supervisor_key=supervisor_key, role=role)
    return ShoeLink(url, key, supervisor_key=supervisor_key, audit=audit, **options)
