"""shoectl floor-retention: archive the floor's old event partitions to files, then drop them."""

NAME = "floor-retention"
HELP = "archive event partitions older than N days (COPY + SHA-256), verify, detach and drop"
DESCRIPTION = (
    "The floor's events are partitioned by day (UTC) on the collector's commit time. For each "
    "partition that ended at least --days days ago: write it to DIR/<partition>.copy (PostgreSQL "
    "COPY text) with a manifest DIR/<partition>.json (range, rows, SHA-256), verify that the file "
    "on disk hashes to the manifest and that the partition, copied again from the database, "
    "hashes to the same, and only then detach and drop the partition (one transaction, recorded "
    "in table `archives`). A partition whose archive does not verify is refused and kept; exit "
    "code 1. An archive already in DIR is verified, not rewritten. Run it as the tables' owner "
    "(the collector and reader roles cannot drop partitions), e.g. daily from cron."
)


def configure(p):
    p.add_argument("--db", required=True, help="PostgreSQL URL of the tables' owner")
    p.add_argument("--days", type=int, required=True, help="keep this many days of events")
    p.add_argument(
        "--archive-dir",
        required=True,
        metavar="DIR",
        help="where the archives and manifests go (then to backup storage)",
    )
    p.add_argument(
        "--archive-only", action="store_true", help="write and verify the archives, drop nothing"
    )
    p.add_argument("--dry-run", action="store_true", help="list what would be archived")
    p.add_argument("--json", action="store_true")


def run(args):
    import json

    from host_tools.errors import ShoeError
    from host_tools.floor import pg, retention

    conn = pg.connect(args.db)
    try:
        out = retention.retire(
            conn, args.archive_dir, args.days, archive_only=args.archive_only, dry_run=args.dry_run
        )
    finally:
        conn.close()
    if args.json:
        print(json.dumps(out, sort_keys=True))
    else:
        for r in out:
            print(
                "%s (to %s): %s%s%s"
                % (
                    r["partition"],
                    r["to"],
                    r["action"],
                    ""
                    if r.get("rows") is None
                    else ", %d rows, sha256 %s" % (r["rows"], r["sha256"][:16]),
                    "".join("\n  " + p for p in r["problems"]),
                )
            )
        if not out:
            print("no partition older than %d days" % args.days)
    refused = [r["partition"] for r in out if r["action"] == "refused"]
    if refused:
        raise ShoeError("archive did not verify, not dropped: %s" % ", ".join(refused))
    return 0
