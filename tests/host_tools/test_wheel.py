"""The wheel works outside the checkout: it holds every subpackage and its data files, and an
unpacked copy imports and settles a round (pyproject.toml, package discovery)."""

import json
import os
import shutil
import subprocess
import sys
import zipfile

from host_tools.runtime import ROOT

ROUND = {
    "game": "four-card-frenzy",
    "paytable": "fcf-public-1",
    "dealer": ["Ah", "Kd", "7c", "7s", "2h"],
    "all_six_card": None,
    "seats": {
        "1": {
            "cards": ["As", "Ks", "Qs", "Js", "2d"],
            "wagers": {"ante": 10, "odds": 10},
            "raise": 30,
        }
    },
}


def test_wheel_has_the_subpackages_and_runs_unpacked(tmp_path):
    # built from a copy of what the wheel is made of: no build/ left in the checkout, and no
    # stale file of an earlier build (setuptools reuses build/lib) can hide a missing package
    src = tmp_path / "src"
    junk = shutil.ignore_patterns("node_modules", "__pycache__", "*.pyc")
    for d in ("host_tools", "firmware"):
        shutil.copytree(ROOT / d, src / d, ignore=junk)
    for f in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / f, src / f)
    out = tmp_path / "dist"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--quiet",
            "--disable-pip-version-check",
            "-w",
            str(out),
            str(src),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    (whl,) = out.glob("*.whl")
    with zipfile.ZipFile(whl) as z:
        names = set(z.namelist())
        z.extractall(tmp_path / "site")
    dirs = {n.rsplit("/", 1)[0] for n in names if n.endswith("/__init__.py")}
    for pkg in (
        "host_tools",
        "host_tools/commands",
        "host_tools/sim",
        "host_tools/floor",
        "host_tools/sim/emu",
        "shoe",
        "shoe/games",
        "shoe/link",
        "shoe/journal",
    ):
        assert pkg in dirs, pkg
    for data in (
        "host_tools/sim/emu/rig.js",
        "host_tools/sim/emu/package.json",
        "host_tools/floor/static/floor.html",
    ):
        assert data in names, data
    assert not any("node_modules" in n or n.startswith("tests/") for n in names)

    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(tmp_path / "site")
    # PYTHONPATH comes before the editable install's finder: the unpacked copy is what imports.
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "import host_tools.cli, sys\n"
            "print(host_tools.cli.__file__)\n"
            "sys.argv = ['shoectl', 'eval', '--runtime', 'cpython']\n"
            "host_tools.cli.main()",
        ],
        input=json.dumps(ROUND) + "\n",
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=60,
    )
    lines = proc.stdout.splitlines()
    assert lines and lines[0].startswith(str(tmp_path / "site")), proc.stdout + proc.stderr
    assert len(lines) == 2, proc.stdout + proc.stderr
    result = json.loads(lines[1])
    assert result["type"] == "round_result", result
    from host_tools.engine.evaluate import Evaluator

    with Evaluator("cpython") as ev:  # the checkout's engine: the same bytes
        (here,) = list(ev.results([json.dumps(ROUND)]))
    assert lines[1] == here
