"""Turn an event as it came over the wire into the form the rest of the host uses.

The shoe sends a round result in packed form (`{"round": n, "packed": bytes}`, shoe.games.packing,
to keep a six-seat round inside one frame); everything else arrives as it is. `jsonable` is a
body as JSON holds it (bytes as hex): what the audit store keeps and the reveal check compares.
"""


def decode(kind, body):
    if kind == "round_result" and isinstance(body, dict) and "packed" in body:
        from host_tools.engine import unpacking

        result = unpacking.unpack(bytes(body["packed"]))
        if isinstance(result.get("deck"), int):
            result["deck"] = "%04X" % result["deck"]   # as the shoe's other events name it
        return kind, result
    return kind, body


def jsonable(x):
    if isinstance(x, (bytes, bytearray)):
        return bytes(x).hex()
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    return x
