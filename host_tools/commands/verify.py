"""shoectl verify: prove the program on the shoe, and the integrity of the stored event log."""
import json
import os

from host_tools.errors import ShoeError

NAME = "verify"
HELP = "verify the shoe's firmware (challenge) and/or the audit store's MACs and hash chain"
DESCRIPTION = (
    "Firmware (--port): send a fresh random nonce; the shoe answers with a MAC over the nonce "
    "and the SHA-256 of every deployed firmware file; compare with the same computation over the "
    "local firmware tree (--firmware, default: this checkout's firmware/shoe). Event log "
    "(--shoe): re-check every stored event's MAC with the shoe key and the hash chain in the "
    "audit store (--db). Exit code 1 on any mismatch.")


def configure(p):
    from host_tools import keys as keyfile
    p.add_argument("--port", help="the shoe to challenge (pyserial URL or device)")
    p.add_argument("--firmware", action="append", metavar="PATH",
                   help="local firmware root(s) to compare with (repeatable; default: "
                   "firmware/shoe)")
    p.add_argument("--shoe", help="verify the audit store's events of this shoe id")
    p.add_argument("--db", help="audit store (SQLite); default under the user's data dir")
    p.add_argument("--timeout", type=float, default=10.0)
    p.add_argument("--json", action="store_true")
    keyfile.add_arguments(p)


def run(args):
    from host_tools import keys as keyfile
    from host_tools.runtime import FIRMWARE
    if not args.port and not args.shoe:
        raise ShoeError("give --port (firmware challenge) and/or --shoe (audit store)")
    k = keyfile.load(args)
    failed = []
    report = {}
    if args.port:
        from host_tools.link import ShoeLink, verify_attestation
        roots = args.firmware or [str(FIRMWARE / "shoe")]
        nonce = os.urandom(16)
        with ShoeLink(args.port, k["shoe"]) as link:
            link.open(timeout=args.timeout)
            ans = link.command("attest", {"nonce": nonce}, timeout=args.timeout)
        ok, local = verify_attestation(ans, k["shoe"], nonce, roots)
        report["firmware"] = {"ok": ok, "files": ans.get("files"),
                              "shoe_manifest": ans.get("manifest", b"").hex(),
                              "local_manifest": local.hex()}
        if not ok:
            failed.append("firmware: the shoe's answer does not match %s" % ", ".join(roots))
    if args.shoe:
        from host_tools.audit import AuditStore
        store = AuditStore(args.db)
        try:
            rep = store.verify(args.shoe, k["shoe"])
        finally:
            store.close()
        report["events"] = rep
        if not rep["events"]:
            failed.append("events: none stored for shoe %s" % args.shoe)
        for what in ("bad_mac", "broken", "gaps"):
            if rep[what]:
                failed.append("events: %s at eseq %s" % (what, rep[what][:10]))
    if args.json:
        print(json.dumps(report, sort_keys=True))
    else:
        if "firmware" in report:
            f = report["firmware"]
            print("firmware: %s (%s files, manifest %s)" % (
                "VERIFIED" if f["ok"] else "MISMATCH", f["files"], f["shoe_manifest"][:16]))
        if "events" in report:
            e = report["events"]
            print("events: %d stored, chain head %s, bad MACs %d, broken links %d, gaps %d" % (
                e["events"], (e["head"] or "")[:16], len(e["bad_mac"]), len(e["broken"]),
                len(e["gaps"])))
    if failed:
        raise ShoeError("; ".join(failed))
    return 0
