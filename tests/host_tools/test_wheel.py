"""The wheel works outside the checkout: it holds every subpackage and its data files, an
unpacked copy imports and settles a round (pyproject.toml, package discovery), and installed with
its dependencies ([floor]) into a fresh environment the floor's daemons start
(pyproject.toml's dependency groups). Offline: the dependencies are this .venv's, repacked
(tests/host_tools/wheelhouse.py)."""

import ast
import json
import os
import shutil
import subprocess
import sys
import zipfile

import pytest

import host_tools
from host_tools.runtime import ROOT
from tests.host_tools import wheelhouse

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


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """The project's wheel, built from a copy of what it is made of: no build/ left in the
    checkout, and no stale file of an earlier build (setuptools reuses build/lib) can hide a
    missing package."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    junk = shutil.ignore_patterns("node_modules", "__pycache__", "*.pyc")
    for d in ("host_tools", "firmware"):
        shutil.copytree(ROOT / d, src / d, ignore=junk)
    for f in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / f, src / f)
    out = tmp / "dist"
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
    return whl


def test_wheel_has_the_subpackages_and_runs_unpacked(tmp_path, wheel):
    whl = wheel
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
        "host_tools/sim/emu/fastcore.js",  # rig.js requires it
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


def _floor_imports():
    """Every third-party module the floor's product code imports (host_tools/floor/, at module
    level or inside a function: most are imported where they are first used)."""
    out = set()
    for path in sorted((ROOT / "host_tools" / "floor").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                out.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                out.add(node.module)
    top = {m.split(".")[0] for m in out}
    # amqtt: brokerauth's plugin classes for the embedded amqtt broker (a stand-in: floor-demo)
    ours = {"host_tools", "shoe", "amqtt"}
    return sorted(m for m in out if m.split(".")[0] in top - set(sys.stdlib_module_names) - ours)


def test_wheel_installed_with_floor_runs_the_daemons(tmp_path, wheel):
    pip = subprocess.run(
        [sys.executable, "-m", "pip", "--version"], capture_output=True, text=True
    )
    if tuple(int(x) for x in pip.stdout.split()[1].split(".")[:2]) < (22, 3):
        pytest.skip("pip before 22.3 has no --python (installing into another venv)")
    mods = _floor_imports()
    assert {"paho.mqtt.client", "psycopg", "argon2"} <= set(mods), mods
    floor = ["host_tools.floor." + p.stem for p in (ROOT / "host_tools" / "floor").glob("*.py")]
    house = tmp_path / "wheels"
    house.mkdir()
    need = wheelhouse.project_requirements(ROOT / "pyproject.toml", ["floor"])
    for dist in wheelhouse.closure(need).values():
        wheelhouse.repack(dist, house)
    venv = tmp_path / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=60
    )
    py = venv / "bin" / "python"
    inst = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(py),
            "install",
            "--quiet",
            "--no-index",
            "--no-compile",
            "--disable-pip-version-check",
            "--find-links",
            str(house),
            "%s[floor]" % wheel,
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert inst.returncode == 0, inst.stdout + inst.stderr
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}

    def run(*cmd, stdin=None):
        p = subprocess.run(
            [str(c) for c in cmd],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=60,
            input=stdin,
        )
        assert p.returncode == 0, "%s\n%s%s" % (cmd, p.stdout, p.stderr[-3000:])
        return p.stdout

    shoectl = venv / "bin" / "shoectl"
    assert "--broker" in run(shoectl, "gateway", "--help")
    assert "--broker" in run(shoectl, "collector", "--help")
    # the floor's modules and what they import when the daemons start (paho, psycopg with its
    # libpq, argon2), and the version written once (firmware/shoe/__init__.py) as the installed
    # metadata says
    probe = (
        "import importlib, importlib.metadata as md, host_tools\n"
        "for m in %r: importlib.import_module(m)\n"
        "print(host_tools.__file__, host_tools.__version__, md.version('smart-dealing-shoe'))"
        % (sorted(floor) + mods,)
    )
    where, version, meta = run(py, "-c", probe).split()
    assert where.startswith(str(venv)), where
    assert version == meta == host_tools.__version__
    out = run(shoectl, "eval", "--runtime", "cpython", stdin=json.dumps(ROUND) + "\n")
    assert json.loads(out.splitlines()[0])["type"] == "round_result"


def test_every_dependency_of_every_group_is_pinned_in_requirements_txt():
    # pyproject.toml names the packages, requirements.txt pins them (and `make venv` installs
    # exactly that list): each group's whole closure, as installed, is pinned there
    groups = wheelhouse.group_names(ROOT / "pyproject.toml")
    assert {"floor", "floor-demo", "diagnose", "par", "dev"} <= set(groups), groups
    pinned = wheelhouse.pinned(ROOT / "requirements.txt")
    need = wheelhouse.project_requirements(ROOT / "pyproject.toml", groups)
    for key, dist in wheelhouse.closure(need).items():
        assert pinned.get(key) == dist.version, (key, dist.version, pinned.get(key))
