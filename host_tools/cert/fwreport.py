"""The firmware part of the certification material: build the .mpy sets (and the frozen image)
from a clean clone and describe them (hashes, attestation manifests, how a lab checks a running
shoe) as JSON and Markdown. Used by `shoectl certify firmware` and the submission pack."""

import subprocess
import time
from pathlib import Path


def firmware_report(
    root, workdir, worktree=False, pico=False, pico_sources=None, progress=print, variants=None
):
    """Build the firmware from a clean clone (or copy) of `root` in `workdir`; variants: a
    subset of host_tools.cert.firmware.VARIANTS (default all). -> (report, trees)"""
    from host_tools.cert import firmware as fw

    variants = variants or fw.VARIANTS

    src = Path(workdir) / "src" / "shoe"
    if worktree:
        fw.copy_sources(root, src)
        commit = None
    else:
        src, commit = fw.clean_copy(root, src)
    progress("building the .mpy sets in %s (%s)" % (src, commit or "working tree"))
    t0 = time.monotonic()
    trees = fw.build_trees(src, variants)
    rep = {
        "commit": commit,
        "worktree": worktree,
        "mpy_seconds": round(time.monotonic() - t0, 1),
        "variants": fw.describe(trees, variants),
    }
    from host_tools import build

    tool = build.mpy_cross()
    rep["mpy_cross"] = {
        "path": tool,
        "mpy_version": "%d.%d" % build.mpy_version(),
        "flags": build.flags(),
        "version": subprocess.run(
            [tool, "--version"], capture_output=True, text=True
        ).stdout.strip(),
    }
    if pico:
        why = fw.pico_toolchain()
        if why:
            rep["pico"] = {"built": False, "why": why}
        else:
            progress("building the frozen Pico image (make pico-firmware: minutes)")
            rep["pico"] = dict(fw.pico_image(src, pico_sources), built=True)
    else:
        rep["pico"] = {"built": False, "why": "not asked for (--pico)"}
    return rep, trees


def firmware_markdown(rep):
    out = [
        "# Firmware hashes and attestation",
        "",
        "Built from %s with %s (.mpy v%s, flags %s) by `shoectl certify firmware`: "
        "each variant is exactly what `shoectl deploy` copies into the shoe's version "
        "directory `shoe_fw/v-<hash>/`, plus the DEPLOYED marker deploy writes last."
        % (
            "commit %s (a clean clone)" % rep["commit"] if rep["commit"] else "the working tree",
            rep["mpy_cross"]["version"] or "mpy-cross",
            rep["mpy_cross"]["mpy_version"],
            " ".join(rep["mpy_cross"]["flags"]),
        ),
        "",
        "| variant | deploy command | version directory | files | bytes | attestation manifest |",
        "|---|---|---|---|---|---|",
    ]
    for label, v in rep["variants"].items():
        out.append(
            "| %s | `%s` | `%s` | %d | %d | `%s` |"
            % (label, v["deploy"], v["version"], v["files"], v["bytes"], v["attest_manifest"])
        )
    out += [
        "",
        "## Checking a running shoe from the laptop",
        "",
        "The shoe answers a fresh random nonce with HMAC-SHA256(shoe key, `SHOE1attest` + "
        "nonce + manifest)[:16], the manifest being SHA-256 over every file of its version "
        "directory (`name` + 0x00 + sha256(file), names in sorted order; docs/protocol.md "
        '"Attestation"). `shoectl verify` sends the nonce, checks the MAC with the shoe key '
        "and compares the manifest with the one it computes over a local tree:",
        "",
        "    shoectl verify --port /dev/ttyACM0 --keys shoe.json --no-chain \\",
        "        --firmware expected/pico/v-<hash>",
        "",
        "`expected/<variant>/v-<hash>/` (written beside this file) is the version directory "
        "as the shoe holds it. `firmware: VERIFIED` means the shoe runs these bytes; "
        "`MISMATCH` names both manifests. A nonce is never reused, so a recorded answer "
        "cannot be replayed.",
        "",
        "Not covered by the attestation: `main.py` (board/main.py, the boot selector, outside "
        "the version directory; deploy verifies its SHA-256 when it writes it), the "
        "MicroPython firmware itself (the UF2 flashed first), and the frozen image (a shoe "
        "running it has no firmware root and attests no files: its identity is the UF2's "
        "SHA-256 when it is flashed).",
        "",
    ]
    p = rep["pico"]
    out += ["## The frozen Pico image (`make pico-firmware`)", ""]
    if p.get("built"):
        out += ["| file | SHA-256 | bytes |", "|---|---|---|"]
        for name in ("firmware.uf2", "firmware.elf"):
            if name in p:
                out.append("| %s | `%s` | %d |" % (name, p[name]["sha256"], p[name]["bytes"]))
        out += [
            "",
            "Built in %.0f s." % p["seconds"]
            if "seconds" in p
            else "Not built by this run: %s." % p.get("source", "given"),
            "",
        ]
    else:
        out += ["Not built: %s." % p["why"], ""]
    out += ["## Files", ""]
    for label, v in rep["variants"].items():
        out += ["### %s (`%s`)" % (label, v["version"]), "", "| file | SHA-256 |", "|---|---|"]
        out += ["| %s | `%s` |" % (f, h) for f, h in v["sha256"].items()]
        out.append("")
    return "\n".join(out) + "\n"
