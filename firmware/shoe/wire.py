"""An app event as it goes on the link: most as they are; a round result packed to fit one
frame (shoe.games.packing; the packed format: docs/protocol.md).

    kind, body = for_wire(kind, body)
"""


def for_wire(kind, body):
    if kind == "round_result":
        from shoe.games import packing

        packed = dict(body)
        deck = packed.get("deck")
        if isinstance(deck, str):
            packed["deck"] = int(deck, 16)      # the packed form holds the serial as a number
        return kind, {"round": body.get("round"), "packed": packing.pack(packed)}
    return kind, body
