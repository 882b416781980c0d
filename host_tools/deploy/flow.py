"""The deploy flow: what to send (the manifest's files compiled, the board's wiring), in what
order, how it is verified and switched to; the board is reached through transport.Device.

    deploy(board="pico", port="/dev/ttyACM0")      # compile, stage, verify, switch, clean up
    provision(port, shoe_id, keys)                   # write <state>/shoe.json (keys never shown)

Works with anything that speaks the MicroPython raw REPL on a pyserial URL: a Pico or an ESP32
on USB, or the unix port behind a pseudo-terminal (how the tests run it). The device is never
soft-reset (mpremote "resume"): a running app is interrupted with Ctrl-C, which on a board with a
started watchdog means a reset within seconds, so boards are deployed in service mode (jumper).

Device layout (relative to the boot directory "/"):

    main.py                  board/main.py, shared by every board (main.py.new, then renamed)
    shoe_fw/v-<hash>/        this version: shoe/**/*.mpy, wiring.mpy, then DEPLOYED
    shoe_fw/active           the version main.py boots (fallback: shoe_fw/active.new)

Steps: check the device (MicroPython, platform of the board, .mpy version of our mpy-cross),
compile (host_tools/build.py, at the manifest's opt level), copy into a fresh version directory,
read back the SHA-256 of every file on the device and compare (any difference: stop, the old
version stays active), write the DEPLOYED marker, write main.py, then switch the pointer
(active.new, then active) and remove older versions. A file whose SHA-256 equals the active
version's (its DEPLOYED marker) is copied on the device instead of over the cable, and verified
like the others: a redeploy after a small change (a wiring edit, `--reader optical` for a shoe
refitted with the optical module) sends only what changed. An interruption at any point leaves
the old version or the new, verified one bootable, never a mix. Every failure is one ShoeError
line.
"""

import hashlib
import json
import re
import tempfile
from pathlib import Path

from host_tools import build
from host_tools.build import mpy_version
from host_tools.deploy.transport import Device
from host_tools.errors import ShoeError
from host_tools.runtime import BOARD
from shoe.config import KEY_NAMES

FW_DIR = "shoe_fw"
BOARDS = ("pico", "esp32")
READERS = ("rfid", "optical")


def wiring_source(board, reader=None):
    """board/<board>/wiring.py; reader: the fitted front end instead of the file's own."""
    if board not in BOARDS:
        raise ShoeError("unknown board %r: choose one of %s" % (board, ", ".join(BOARDS)))
    src = (BOARD / board / "wiring.py").read_text()
    if reader is not None:
        if reader not in READERS:
            raise ShoeError("unknown reader %r: choose one of %s" % (reader, ", ".join(READERS)))
        src += '\nreader = {"kind": %r}  # shoectl deploy --reader\n' % reader
    return src


def board_wiring(board, reader=None):
    ns = {}
    exec(wiring_source(board, reader), ns)
    return ns


def compile_firmware(board, progress=None, reader=None):
    """-> {device path (relative to the version dir): bytes}: the files board/manifest_common.py
    lists (FIRMWARE, compiled by host_tools/build.py at the manifest's opt level, the same .mpy
    the virtual board imports, compiled for the board's chip) and the board's wiring,
    nothing else."""
    arch = build.board_arch(board)
    out = build.compile_shipped(arch=arch)
    files = {
        p[:-3] + ".mpy": (out / (p[:-3] + ".mpy")).read_bytes() for p in build.shipped_files()
    }
    with tempfile.TemporaryDirectory() as tmp:
        wiring = Path(tmp) / "wiring.py"
        wiring.write_text(wiring_source(board, reader))
        build.compile_source(wiring, "wiring.py", Path(tmp) / "wiring.mpy", arch=arch)
        files["wiring.mpy"] = (Path(tmp) / "wiring.mpy").read_bytes()
    if progress:
        progress("compiled %d files with mpy-cross %s" % (len(files), " ".join(build.flags(arch))))
    return files


def version_name(files):
    h = hashlib.sha256()
    for path in sorted(files):
        h.update(path.encode() + b"\0" + hashlib.sha256(files[path]).digest())
    return "v-" + h.hexdigest()[:10]


def _check_compat(info, board, wiring, any_platform, tool_mpy):
    if not any_platform and info["platform"] != wiring["platform"]:
        raise ShoeError(
            "the device is a %r board, not %s (%s): wrong --board?"
            % (info["platform"], board, wiring["platform"])
        )
    mpy = info["mpy"]
    dev = (mpy & 0xFF, (mpy >> 8) & 3)
    if dev != tool_mpy:
        raise ShoeError(
            "the device loads .mpy v%d.%d but mpy-cross emits v%d.%d: use the "
            "mpy-cross of the board's MicroPython version" % (dev + tool_mpy)
        )


def _compare(expected, got):
    missing = sorted(set(expected) - set(got))
    extra = sorted(set(got) - set(expected))
    bad = sorted(p for p in expected if p in got and got[p] != expected[p])
    if missing or extra or bad:
        first = (bad or missing or extra)[0]
        raise ShoeError(
            "verification failed: %d differ, %d missing, %d unexpected (first: %s); "
            "the previous version stays active" % (len(bad), len(missing), len(extra), first)
        )


def _active_files(dev, active):
    """{path: sha256} of the active version's verified files (its DEPLOYED marker), or {}."""
    if not active or not re.fullmatch(r"v-[0-9a-f]+", active):
        return {}
    raw = dev.value("_shoe_read(%r)" % (FW_DIR + "/" + active + "/DEPLOYED"))
    try:
        files = json.loads(raw).get("files") if raw else None
    except (ValueError, AttributeError):
        return {}
    return files if isinstance(files, dict) else {}


def deploy(
    board,
    port,
    any_platform=False,
    progress=print,
    timeout=5.0,
    on_file=None,
    op_timeout=60.0,
    reader=None,
):
    """Deploy; returns a summary dict. on_file(i, path) is called after each file is copied.
    reader: "rfid" or "optical" instead of the wiring file's fitted reader."""
    progress = progress or (lambda msg: None)
    wiring = board_wiring(board, reader)
    tool_mpy = mpy_version()
    files = compile_firmware(board, progress, reader)
    name = version_name(files)
    main_src = (BOARD / "main.py").read_bytes()
    expected = {p: hashlib.sha256(b).hexdigest() for p, b in files.items()}
    with Device(port, timeout, op_timeout) as dev:
        info = dev.identify()
        _check_compat(info, board, wiring, any_platform, tool_mpy)
        progress(
            "device: MicroPython on %s, .mpy v%d.%d"
            % (info["platform"], info["mpy"] & 0xFF, (info["mpy"] >> 8) & 3)
        )
        active = dev.value("_shoe_read(%r)" % (FW_DIR + "/active"))
        fallback = dev.value("_shoe_read(%r)" % (FW_DIR + "/active.new"))
        vdir = FW_DIR + "/" + name
        unchanged = 0
        if active == name:
            progress("version %s is already active: verifying it" % name)
        else:
            fb = dev.free_bytes()
            if fb is not None:
                free, block = fb
                need = (
                    sum(-(-len(b) // block) * block for b in files.values())
                    + (len(files) // 8 + 8) * block
                )
                if free < need:
                    raise ShoeError(
                        "not enough flash: the new version needs about %d kB, %d kB "
                        "free (the previous version stays active)" % (need // 1024, free // 1024)
                    )
            if fallback == name and active:
                dev.run("_shoe_rm(%r)" % (FW_DIR + "/active.new"))
            dev.run("_shoe_rm(%r)" % vdir, "clean-up")  # leftovers of an interrupted stage
            dirs = {FW_DIR, vdir}
            for p in files:
                parts = p.split("/")[:-1]
                for i in range(1, len(parts) + 1):
                    dirs.add(vdir + "/" + "/".join(parts[:i]))
            dev.mkdirs(dirs)
            same = _active_files(dev, active)
            for i, p in enumerate(sorted(files)):
                if same.get(p) == expected[p]:  # unchanged: copied on the device
                    dev.run(
                        "_shoe_copy(%r, %r)" % ("%s/%s/%s" % (FW_DIR, active, p), vdir + "/" + p),
                        "file copy",
                    )
                    unchanged += 1
                else:
                    dev.write_file(vdir + "/" + p, files[p])
                if on_file:
                    on_file(i, p)
                if (i + 1) % 10 == 0 or i + 1 == len(files):
                    progress(
                        "copied %d/%d files (%d unchanged, copied on the device)"
                        % (i + 1, len(files), unchanged)
                    )
        got = dev.hashes(vdir)
        got.pop("DEPLOYED", None)
        _compare(expected, got)
        progress("verified SHA-256 of %d files on the device" % len(got))
        marker = json.dumps(
            {"version": name, "board": board, "files": expected}, sort_keys=True
        ).encode()
        dev.write_file(vdir + "/DEPLOYED", marker)
        if dev.hashes(vdir).get("DEPLOYED") != hashlib.sha256(marker).hexdigest():
            raise ShoeError("verification of the DEPLOYED marker failed; previous version active")
        # main.py: staged, verified, then swapped in
        dev.write_file("main.py.new", main_src)
        h = dev.value(
            "__import__('binascii').hexlify(__import__('hashlib').sha256("
            "open('main.py.new','rb').read()).digest()).decode()"
        )
        if h != hashlib.sha256(main_src).hexdigest():
            raise ShoeError("verification of main.py failed; previous version active")
        dev.run("_shoe_replace('main.py.new', 'main.py')", "main.py switch")
        # switch: active.new first (a fallback main.py boots), then active
        if active != name:
            dev.write_file(FW_DIR + "/active.new", name.encode())
            dev.run(
                "_shoe_replace(%r, %r)" % (FW_DIR + "/active.new", FW_DIR + "/active"),
                "version switch",
            )
        dev.run("_shoe_rm(%r)" % (wiring.get("state_dir", "state") + "/crashes"))  # new code
        now = dev.value("_shoe_read(%r)" % (FW_DIR + "/active"))
        if now != name:
            raise ShoeError(
                "the version pointer reads %r after the switch, expected %s" % (now, name)
            )
        old = [
            e
            for e in dev.value("[e[0] for e in os.ilistdir(%r)]" % FW_DIR)
            if e.startswith("v-") and e != name
        ]
        # The new version is active: removing the old ones is tidying, not the deploy. A slow
        # chip can take longer than an operation's limit to remove a version's files (an
        # emulated Pico on a loaded machine did, and the deploy used to fail after its switch);
        # what is left is removed by the next deploy (every v-* but the active one).
        removed, kept = [], []
        for e in old:
            try:
                dev.run("_shoe_rm(%r)" % (FW_DIR + "/" + e), "clean-up")
            except ShoeError as ex:
                kept = old[len(removed) :]
                progress(
                    "could not remove the old version(s) %s: %s. The new version is active; "
                    "the next deploy removes them." % (", ".join(kept), ex)
                )
                break  # the link may be unusable after this: no more commands
            removed.append(e)
        progress(
            "active version %s on %s (%d files); removed %d old version(s). Reset the board "
            "(without the service jumper) to start it." % (name, board, len(files), len(removed))
        )
        return {
            "version": name,
            "previous": active,
            "files": len(files),
            "removed": removed,
            "kept": kept,
            "unchanged": unchanged,
        }


def provision(port, shoe_id, keys, state_dir="state", force=False, progress=print, timeout=5.0):
    """Write <state_dir>/shoe.json on the device (keys: host_tools.keys.for_provisioning);
    secrets are never printed or returned."""
    progress = progress or (lambda msg: None)
    if not isinstance(shoe_id, str) or not re.fullmatch(r"[A-Za-z0-9_.-]{1,32}", shoe_id):
        raise ShoeError("shoe id must be 1..32 characters of A-Z a-z 0-9 _ . -")
    doc = {"version": 1, "shoe_id": shoe_id, "keys": keys}
    from shoe import config as shoe_config

    try:
        shoe_config.parse(doc)
    except shoe_config.ConfigError as e:
        raise ShoeError("configuration rejected: %s" % e.reason) from None
    data = json.dumps(doc, sort_keys=True).encode()
    path = state_dir + "/" + shoe_config.FILE
    with Device(port, timeout) as dev:
        dev.identify()
        if dev.value("_shoe_read(%r) is not None" % path) and not force:
            raise ShoeError(
                "%s already exists on the device: --force replaces the shoe's keys" % path
            )
        dev.mkdirs([state_dir])
        dev.write_file(path + ".new", data)
        h = dev.value(
            "__import__('binascii').hexlify(__import__('hashlib').sha256("
            "open(%r,'rb').read()).digest()).decode()" % (path + ".new")
        )
        if h != hashlib.sha256(data).hexdigest():
            dev.run("_shoe_rm(%r)" % (path + ".new"))
            raise ShoeError("read-back of the configuration failed; nothing was changed")
        dev.run("_shoe_replace(%r, %r)" % (path + ".new", path), "config switch")
        progress(
            "provisioned shoe %s: keys %s written to %s and verified (values not shown)"
            % (shoe_id, ", ".join(KEY_NAMES), path)
        )
    return {"shoe_id": shoe_id, "path": path, "sha256": hashlib.sha256(data).hexdigest()}
