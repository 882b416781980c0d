"""shoectl trust: show the host's state about a shoe and, as a supervisor, accept the shoe again
after the host refused it for that state (docs/hoststate.md)."""

import getpass
import json
import socket
import sys
import time

from host_tools.errors import ShoeError

NAME = "trust"
HELP = "show the host's state about a shoe; --accept (supervisor key) accepts a refused shoe again"
DESCRIPTION = (
    "The host keeps, beside its audit store (--db), a counter floor file (<db>.counters.json) "
    "and in the store a MAC'd record per shoe: the highest command counter the shoe accepted "
    "and the store's last event. When either is damaged, missing, older than the other, "
    "another store's, or the shoe's counter went back (a journal restored from an old flash "
    "dump would accept captured commands again), every command refuses the shoe with one line "
    "naming the file. This command connects to the shoe (its authenticated HELLO gives its "
    "counter and last event), shows what is wrong, and with --accept and the supervisor key: "
    "shows what it will accept (the old floor against the shoe's), asks for confirmation "
    "(--yes skips it), raises the shoe's command counter above every counter it ever accepted "
    "with a supervised command that changes nothing (so no captured command can replay, and "
    "the shoe itself proves the supervisor key), takes the audit store as it is now, rewrites "
    "the record and the floor file, and keeps who accepted what and when in the store (MAC'd "
    "with the supervisor key). Exit code 1 while the shoe is refused. A shoe whose event "
    "sequence went back cannot be accepted into the same store (its new events would collide "
    "with the stored ones): --new-db PATH accepts it into a new audit store, with its counter "
    "raised above this store's floor all the same. A damaged SQLite file must be restored from "
    "a backup."
)


def configure(p):
    from host_tools.commands._linkopts import add_port_arguments

    add_port_arguments(p, db=False)
    p.add_argument(
        "--db",
        help="the audit store whose host state is shown (nothing is stored "
        "in it but an acceptance); default under the user's data dir",
    )
    p.add_argument(
        "--accept", action="store_true", help="accept the shoe again (needs the supervisor key)"
    )
    p.add_argument("--yes", action="store_true", help="with --accept: do not ask")
    p.add_argument("--note", default="", help="with --accept: why (kept with the acceptance)")
    p.add_argument(
        "--new-db",
        metavar="PATH",
        help="with --accept, for a shoe whose events went back: the new audit store "
        "its log continues in (it must not exist yet)",
    )
    p.add_argument("--json", action="store_true", help="print the report as JSON")


def _rec(r):
    if r is None:
        return "none (or it does not verify)"
    return "generation %d, counter %d, event %d%s" % (
        r["gen"],
        r["ctr"],
        r["eseq"],
        ", accepted at event %d" % r["base"] if r["base"] else "",
    )


def _ask(shoe):
    if not sys.stdin.isatty():
        raise ShoeError("trust --accept: not a terminal to confirm on: give --yes")
    ans = input("accept shoe %s as shown? type yes: " % shoe)
    return ans.strip().lower() == "yes"


def run(args):
    from host_tools import keys as keyfile
    from host_tools.audit import AuditStore
    from host_tools.hoststate import HostState
    from host_tools.link import ShoeLink

    k = keyfile.load(args)
    if args.accept and not k.get("supervisor"):
        raise ShoeError(
            "trust --accept needs the supervisor key (--keys FILE or SHOE_KEY_SUPERVISOR): refused"
        )
    store = AuditStore(args.db)  # a file that is not a database: one line, refused
    hs = HostState(store)
    link = None
    try:
        hs.open(strict=False)  # a second host process: refused here (store_locked)
        # the shoe, without storing or acknowledging anything: its HELLO says where it is
        link = ShoeLink(
            args.port,
            k["shoe"],
            supervisor_key=k.get("supervisor"),
            endpoint_options={"auto_ack": False},
            rtscts=args.rtscts,
        )
        link.open(timeout=args.timeout)
        hello = link.ep.peer or {}
        shoe = link.shoe_id or "?"
        rep = hs.inspect(shoe, k["shoe"])
        problems = [str(p) for p in rep["problems"]]
        ctr, eseq = hello.get("ctr"), hello.get("eseq")
        if isinstance(ctr, int) and ctr < rep["floor"]:
            problems.append(
                "the shoe's command counter %d is below the floor %d: its journal "
                "went back (restored, replaced), so it would accept commands it "
                "already executed [counter_reset]" % (ctr, rep["floor"])
            )
        behind = isinstance(eseq, int) and eseq < rep["store_last"]
        if behind:
            problems.append(
                "the shoe's last event %d is below the store's %d: its events "
                "cannot go into this store (give another --db) [sequence_reset]"
                % (eseq, rep["store_last"])
            )
        report = {
            "shoe": shoe,
            "store": str(store.path),
            "floor_file": str(hs.path),
            "problems": problems,
            "store_last": rep["store_last"],
            "floor": rep["floor"],
            "shoe_now": {"ctr": ctr, "eseq": eseq, "boot": hello.get("boot")},
            "accepted": None,
            "acceptances": [
                {"at": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(at)), "mac_ok": ok, **d}
                for at, d, ok in hs.acceptances(shoe, k.get("supervisor"))
            ][-5:],
        }
        if not args.json:
            _show(report, rep)
        if args.accept and problems:
            _accept(args, k, link, hs, rep, report, behind)
        elif args.accept and not args.json:
            print("nothing to accept: the host state of shoe %s is intact" % shoe)
        if args.json:
            print(json.dumps(report, sort_keys=True, default=str))
        if problems and not report["accepted"]:
            raise ShoeError(
                "shoe %s is refused by this host (%d problem(s)); a supervisor can "
                "accept it: shoectl trust --accept" % (shoe, len(problems))
            )
    finally:
        if link is not None:
            link.close()
        hs.close()
        store.close()
    return 0


def _show(report, rep):
    print(
        "shoe %s: audit store %s, counter floor file %s"
        % (report["shoe"], report["store"], report["floor_file"])
    )
    print("  the store's record:  %s" % _rec(rep["record"]))
    print("  the floor file's:    %s" % _rec(rep["entry"]))
    print("  the store ends at event %d; counter floor %d" % (rep["store_last"], rep["floor"]))
    now = report["shoe_now"]
    print(
        "  the shoe now:        counter %s, event %s, boot %s"
        % (now["ctr"], now["eseq"], now["boot"])
    )
    for a in report["acceptances"]:
        print(
            "  accepted before:     %s by %s@%s (%s)%s"
            % (
                a.get("at"),
                a.get("user"),
                a.get("host"),
                a.get("note") or "no note",
                "" if a.get("mac_ok") else "  [MAC does NOT verify]",
            )
        )
    for p in report["problems"]:
        print("  REFUSED: %s" % p)
    if not report["problems"]:
        print("  intact: the shoe is accepted")


def _accept(args, k, link, hs, rep, report, behind):
    shoe = report["shoe"]
    if behind and not args.new_db:
        raise ShoeError(
            "cannot accept shoe %s into %s: its event sequence went back; accept it "
            "into a new audit store: --new-db PATH" % (shoe, report["store"])
        )
    damaged = [p for p in rep["problems"] if p.reason == "store_damaged"]
    if damaged and not behind:
        raise ShoeError("cannot accept shoe %s: %s" % (shoe, damaged[0]))
    if behind:
        return _accept_into_new_store(args, k, link, rep, report)
    ctr = _raise_counter(
        args, link, rep, report, "take the audit store as it is (event %d)" % rep["store_last"]
    )
    rec = hs.accept(shoe, k["shoe"], ctr, k["supervisor"], _details(args, report, rep, ctr))
    report["accepted"] = {"gen": rec["gen"], "ctr": rec["ctr"], "eseq": rec["eseq"]}
    if not args.json:
        print(
            "accepted: shoe %s, counter floor %d (the shoe's counter is now %d), store at "
            "event %d, generation %d; recorded in %s"
            % (shoe, rec["ctr"], ctr, rec["eseq"], rec["gen"], report["store"])
        )


def _accept_into_new_store(args, k, link, rep, report):
    """The shoe's log starts again in a new store; its counter still goes above the old one's
    floor, so nothing captured under the old store can replay."""
    from pathlib import Path

    from host_tools.audit import AuditStore
    from host_tools.hoststate import HostState

    shoe = report["shoe"]
    if Path(args.new_db).exists():
        raise ShoeError("--new-db %s exists: give a new file" % args.new_db)
    store = AuditStore(args.new_db)
    hs = HostState(store)
    try:
        hs.open()
        ctr = _raise_counter(
            args, link, rep, report, "start the new audit store %s for it" % store.path
        )
        details = dict(_details(args, report, rep, ctr), moved_from=report["store"])
        rec = hs.accept(shoe, k["shoe"], ctr, k["supervisor"], details)
    finally:
        hs.close()
        store.close()
    report["accepted"] = {
        "gen": rec["gen"],
        "ctr": rec["ctr"],
        "eseq": rec["eseq"],
        "store": str(store.path),
    }
    if not args.json:
        print(
            "accepted: shoe %s into the new audit store %s, counter floor %d; use --db %s "
            "from now on" % (shoe, store.path, rec["ctr"], store.path)
        )


def _raise_counter(args, link, rep, report, what):
    """Ask, then send the supervised no-op at a counter above every old one -> its counter."""
    shoe = report["shoe"]
    target = max(rep["floor"], report["shoe_now"]["ctr"] or 0)
    print(
        "accepting will: %s, raise the shoe's command counter from %s to %d (above every "
        "counter it was seen to accept: %d) with a supervised command that changes nothing, "
        "and record the acceptance." % (what, report["shoe_now"]["ctr"], target + 1, rep["floor"]),
        file=sys.stderr if args.json else None,
    )
    if not args.yes and not _ask(shoe):
        raise ShoeError("not accepted")
    link.counter_at_least(target)  # the next counter is above the old floor
    try:
        # ack_error with no ids: a supervised command that clears nothing; the shoe checks
        # the supervisor's MAC and journals the counter before it answers
        rep_ = link.command("ack_error", {"ids": []}, timeout=args.timeout, supervisor=True)
    except ShoeError as e:
        why = {
            "bad_mac": "the supervisor key is not this shoe's",
            "no_key": "the shoe has no supervisor key provisioned",
        }.get(e.reason, str(e))
        raise ShoeError(
            "not accepted: the shoe refused the supervised command: %s [%s]" % (why, e.reason)
        ) from None
    return rep_["re"]  # the counter the shoe journalled: above every one it accepted before


def _details(args, report, rep, ctr):
    """Who accepted what and when (kept in the store, MAC'd with the supervisor key)."""

    def short(r):
        return r and {x: r[x] for x in ("gen", "ctr", "eseq")}

    return {
        "at": time.strftime("%Y-%m-%d %H:%M:%S"),
        "user": getpass.getuser(),
        "host": socket.gethostname(),
        "note": args.note,
        "problems": report["problems"],
        "shoe_now": report["shoe_now"],
        "counter": ctr,
        "old": {"record": short(rep["record"]), "file": short(rep["entry"])},
    }
