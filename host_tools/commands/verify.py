"""shoectl verify: prove the program on the shoe, and the integrity of the stored event log."""

import json
import os

from host_tools.errors import ShoeError

NAME = "verify"
HELP = "verify the shoe's firmware (challenge) and/or the audit store's MACs and hash chain"
DESCRIPTION = (
    "Firmware (--port): send a fresh random nonce; the shoe answers with a MAC over the nonce "
    "and the SHA-256 of every deployed firmware file; compare with the same computation over the "
    "local firmware tree (--firmware, default: this checkout's firmware/shoe); then (unless "
    "--no-chain) compare the audit store (--db) with the shoe's live chain: its last event "
    "number, chain head and the events it has seen acknowledged, so rows removed at the end of "
    "the store are caught. Event log (--shoe, or the shoe met on --port): re-check every "
    "stored event's MAC with the shoe key and id (another shoe's events relabelled as this "
    "one's fail; events stored under protocol 2, whose MAC names no shoe, are listed), that "
    "the stored body is the signed one, the hash chain, every round's secrecy (each card's "
    "commitment recomputed from the round's reveal, no position missing, every result's cards "
    "the revealed ones) and the whole SQLite file (integrity_check). Exit code 1 on any "
    "mismatch."
)


def configure(p):
    from host_tools import keys as keyfile
    from host_tools.commands._linkopts import add_rtscts

    p.add_argument("--port", help="the shoe to challenge (pyserial URL or device)")
    add_rtscts(p)
    p.add_argument(
        "--firmware",
        action="append",
        metavar="PATH",
        help="local firmware root(s) to compare with (repeatable; default: firmware/shoe)",
    )
    p.add_argument(
        "--firmware-image",
        metavar="UF2",
        help="the frozen image the shoe should run (e.g. build/pico-firmware/"
        "firmware.uf2): the shoe hashes that much of its firmware flash; with no "
        "--firmware, no deployed files are expected beside it",
    )
    p.add_argument("--shoe", help="verify the audit store's events of this shoe id")
    p.add_argument("--db", help="audit store (SQLite); default under the user's data dir")
    p.add_argument(
        "--no-chain",
        action="store_true",
        help="with --port: only the firmware challenge, not the store's chain",
    )
    p.add_argument("--timeout", type=float, default=10.0)
    p.add_argument("--json", action="store_true")
    keyfile.add_arguments(p)


def run(args):
    from host_tools import keys as keyfile

    if not args.port and not args.shoe:
        raise ShoeError("give --port (firmware challenge) and/or --shoe (audit store)")
    k = keyfile.load(args)
    failed = []
    report = {}
    if args.port:
        failed += _live(args, k, report)
    shoe = args.shoe or report.get("shoe_id")
    if shoe:
        from host_tools.audit import AuditStore

        store = AuditStore(args.db)
        try:
            damaged = store.integrity(full=True)  # every page, every index against its table
            rep = store.verify(shoe, k["shoe"])
        finally:
            store.close()
        if damaged:
            failed.append("store: %s is damaged (SQLite: %s)" % (store.path, damaged))
        report["store_damaged"] = damaged
        report["events"] = rep
        if not rep["events"] and "chain" not in report:
            failed.append("events: none stored for shoe %s" % shoe)
        for what in ("bad_mac", "body_mismatch", "broken", "gaps"):
            if rep[what]:
                failed.append("events: %s at eseq %s" % (what, rep[what][:10]))
        for p in rep["reveal"][:10]:
            failed.append("events: reveal_mismatch at eseq %s: %s" % (p["eseq"], p["detail"]))
    if args.json:
        print(json.dumps(report, sort_keys=True))
    else:
        if "firmware" in report:
            f = report["firmware"]
            print(
                "firmware: %s (%s files, manifest %s)"
                % ("VERIFIED" if f["ok"] else "MISMATCH", f["files"], f["shoe_manifest"][:16])
            )
        if "events" in report:
            e = report["events"]
            print(
                "events: %d stored, chain head %s, bad MACs %d, edited bodies %d, broken "
                "links %d, gaps %d, reveal mismatches %d"
                % (
                    e["events"],
                    (e["head"] or "")[:16],
                    len(e["bad_mac"]),
                    len(e["body_mismatch"]),
                    len(e["broken"]),
                    len(e["gaps"]),
                    len(e["reveal"]),
                )
            )
            if e.get("unbound"):
                print(
                    "events: %d recorded under protocol 2 (eseq %d..%d): their MAC does not "
                    "name the shoe id" % (len(e["unbound"]), e["unbound"][0], e["unbound"][-1])
                )
        if "chain" in report:
            c = report["chain"]
            print(
                "live chain: shoe at event %s (acknowledged %s), store at %s: %s"
                % (
                    c["shoe_eseq"],
                    c["shoe_acked"],
                    c["store_last"],
                    "MATCHES" if c["ok"] else "MISMATCH",
                )
            )
    if failed:
        raise ShoeError("; ".join(failed))
    return 0


def _live(args, k, report):
    """Challenge the shoe's firmware and (unless --no-chain) compare the audit store with the
    shoe's live chain. Fills `report`; returns the failures (text)."""
    import time

    from host_tools.audit import AuditStore
    from host_tools.link import ShoeLink, verify_attestation
    from host_tools.runtime import FIRMWARE

    failed = []
    image = None
    if args.firmware_image:
        from host_tools import uf2

        image = uf2.read(args.firmware_image, uf2.board_layout("pico")).flash()
        roots = args.firmware or []
    else:
        roots = args.firmware or [str(FIRMWARE / "shoe")]
    nonce = os.urandom(16)
    store = None if args.no_chain else AuditStore(args.db)
    try:
        with ShoeLink(args.port, k["shoe"], audit=store, rtscts=args.rtscts) as link:
            link.open(timeout=args.timeout)
            ask = (
                {"nonce": nonce} if image is None else {"nonce": nonce, "image_bytes": len(image)}
            )
            ans = link.command("attest", ask, timeout=args.timeout)
            if ans.get("ok") is False:
                raise ShoeError(
                    "the shoe refused the firmware challenge: %s (%s)"
                    % (ans.get("reason"), ans.get("message"))
                )
            if store is not None:
                asked = time.time()
                st = link.command("status", {}, timeout=args.timeout)
                shoe, chain = link.shoe_id or st.get("shoe_id"), st.get("chain")
                report["shoe_id"] = shoe
                if not isinstance(chain, dict):
                    raise ShoeError("the shoe's status carries no chain (older firmware?)")
                # what the shoe still holds unacknowledged arrives now: wait for it
                deadline = time.monotonic() + args.timeout
                while (
                    chain["acked"] <= store.last_eseq(shoe) < chain["eseq"]
                    and time.monotonic() < deadline
                ):
                    time.sleep(0.05)
                problems = store.compare_live(
                    shoe, chain["eseq"], chain["head"], chain["acked"], before=asked
                )
                report["chain"] = {
                    "ok": not problems,
                    "problems": problems,
                    "shoe_eseq": chain["eseq"],
                    "shoe_acked": chain["acked"],
                    "shoe_head": bytes(chain["head"]).hex(),
                    "store_last": store.last_eseq(shoe),
                }
                failed += ["chain: %s" % p for p in problems]
    finally:
        if store is not None:
            store.close()
    ok, local = verify_attestation(ans, k["shoe"], nonce, roots, image)
    report["firmware"] = {
        "ok": ok,
        "files": ans.get("files"),
        "shoe_manifest": ans.get("manifest", b"").hex(),
        "local_manifest": local.hex(),
    }
    if not ok:
        failed.append(
            "firmware: the shoe's answer does not match %s%s"
            % (
                ", ".join(roots + ([args.firmware_image] if image else [])),
                ""
                if ans.get("files") or image
                else " (the shoe attests no files: a frozen image or no deployed version; "
                "its identity is the UF2's SHA-256 at flashing, docs/certification.md)",
            )
        )
        if roots and not any(os.path.exists(r) for r in roots):
            failed.append("firmware: no local tree at %s" % ", ".join(roots))
    return failed
