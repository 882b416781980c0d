"""shoectl tags: write (and check) a deck's authenticated RFID tags (NTAG 424 DNA).

    shoectl tags provision --deck 3A7F --back R --keys shoe.json --writer sim --sim-tags deck.json
    shoectl tags check --keys shoe.json --writer sim --sim-tags deck.json

Each card's tag gets its card code and the card's own keys, diversified from the shoe's card
key (host_tools/tagwriter.py, docs/hardware.md section 4). A shoe provisioned with the same card
key checks each read of them: a copy of a tag's UID and memory is a forged card.
"""

import json
from pathlib import Path

from host_tools import keys as _keys
from host_tools.errors import ShoeError

NAME = "tags"
HELP = "write a deck's authenticated RFID tags (NTAG 424 DNA) through a writer, or check them"
DESCRIPTION = (
    "provision: for each card of the deck (52 cards, then the cover card), the writer presents "
    "the next blank NTAG 424 DNA tag, which gets the card code in its NDEF file, Secure Dynamic "
    "Messaging (every read answers with its UID, a read counter and a MAC) and the card's own "
    "keys, diversified from the shoe's card key (--keys: the shoe's provisioning file, or "
    "SHOE_KEY_*). A tag that is not blank is refused. Each tag is read back and checked as the "
    "shoe checks it. --out FILE writes the deck's list (card, code, UID). check: read every "
    "tag on the writer and check it as the shoe does. --writer sim is a simulated writer with "
    "simulated tags (--sim-tags FILE keeps them: the tests put them in the emulated shoe's "
    "field); a real writer is a PC/SC contactless reader, not driven by this build."
)

CARDS = [*range(52), 52]  # the cards of a deck in the order written: As.. by id, then CV


def configure(p):
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    w = sub.add_parser("provision", help="write a deck's tags (card code, SDM, the card's keys)")
    w.add_argument("--deck", required=True, help="deck serial, 4 hex digits (e.g. 3A7F)")
    w.add_argument("--back", required=True, choices=("R", "B"), help="back colour")
    w.add_argument("--out", metavar="FILE", help="write the deck's list (card, code, UID) here")
    c = sub.add_parser("check", help="read and check every tag on the writer as the shoe does")
    for q in (w, c):
        _keys.add_arguments(q)
        q.add_argument(
            "--writer",
            default="sim",
            help="sim (simulated tags); pcsc:NAME for a PC/SC reader (not in this build)",
        )
        q.add_argument(
            "--sim-tags",
            metavar="FILE",
            help="the simulated tags: written by provision, read by check",
        )
        q.add_argument("--json", action="store_true", help="one JSON line per tag")


def _serial(text):
    try:
        v = int(text, 16)
    except ValueError:
        v = -1
    if len(text) != 4 or not 0 <= v <= 0xFFFF:
        raise ShoeError("--deck must be 4 hex digits, not %r" % text)
    return v


def run(args):
    from host_tools import tagwriter
    from shoe import cards
    from shoe.cardcode import CardCodes

    key = _keys.load(args)["card"]
    if args.action == "provision":
        serial = _serial(args.deck)
        codes = CardCodes(key)
        writer = tagwriter.open_writer(args.writer, len(CARDS), args.sim_tags)
        done = []
        for card, tag in zip(CARDS, writer.tags()):
            code = codes.make(serial, args.back, card)
            try:
                ctr = tagwriter.provision(tag, code, key)
            except tagwriter.TagError as e:
                raise ShoeError(
                    "card %s (tag %s): %s" % (cards.name(card), tag.uid.hex(), e)
                ) from None
            row = {"card": cards.name(card), "code": code, "uid": tag.uid.hex(), "ctr": ctr}
            done.append(row)
            print(
                json.dumps(row)
                if args.json
                else "%-3s %s  tag %s  ok" % (row["card"], code, row["uid"])
            )
        if len(done) != len(CARDS):
            raise ShoeError("the writer ran out of tags after %d of %d" % (len(done), len(CARDS)))
        if hasattr(writer, "save"):
            writer.save([(r["code"], m) for r, m in zip(done, writer.models)])
        if args.out:
            Path(args.out).write_text(
                json.dumps({"deck": args.deck.upper(), "back": args.back, "cards": done}, indent=1)
            )
        if not args.json:
            print(
                "deck %s%s: %d tags written and checked"
                % (args.deck.upper(), args.back, len(done))
            )
        return 0
    writer = _saved_writer(args)
    bad = 0
    for tag in writer.tags():
        kind, data, ctr = tagwriter.check(tag, key)
        ok = kind == "card"
        bad += not ok
        row = {
            "uid": tag.uid.hex(),
            "ok": ok,
            "code": data.decode() if ok else None,
            "reason": None if ok else data,
            "ctr": ctr,
        }
        print(
            json.dumps(row)
            if args.json
            else "tag %s  %s"
            % (row["uid"], ("%s  read %d" % (row["code"], ctr)) if ok else "FORGED (%s)" % data)
        )
    if bad:
        raise ShoeError("%d tag(s) failed the check" % bad)
    return 0


def _saved_writer(args):
    from host_tools import tagwriter

    if args.writer != "sim":
        return tagwriter.open_writer(args.writer, 0)
    if not args.sim_tags:
        raise ShoeError("check --writer sim needs --sim-tags FILE (written by provision)")
    try:
        doc = json.loads(Path(args.sim_tags).read_text())
    except (OSError, ValueError) as e:
        raise ShoeError("cannot read %s: %s" % (args.sim_tags, e)) from None
    return tagwriter.SimWriter.load(doc)
