"""Wheels of an installed distribution set, offline: what tests/host_tools/test_wheel.py installs
the project's wheel with (`pip install --no-index --find-links DIR 'wheel[floor]'`).

The dependencies come from this checkout's .venv (the versions requirements.txt pins), repacked
from their installed files (RECORD) into wheels with their original tags: no registry is asked,
and only what pyproject.toml names (and what that pulls in, per the installed metadata) is
offered, so a package missing from a dependency group is missing in the fresh environment too.
"""

import base64
import hashlib
import re
import sys
import zipfile
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10 (tomli is pinned for it in requirements.txt)
    import tomli as tomllib


def project_requirements(pyproject, extras):
    """The requirement strings of pyproject.toml's dependencies and of the optional groups
    `extras` (a group may name the project itself with other groups: followed)."""
    project = tomllib.loads(Path(pyproject).read_text())["project"]
    name = canonicalize_name(project["name"])
    groups = project.get("optional-dependencies", {})
    out, todo, seen = list(project.get("dependencies", [])), list(extras), set()
    while todo:
        group = todo.pop()
        if group in seen:
            continue
        seen.add(group)
        for r in groups[group]:
            req = Requirement(r)
            if canonicalize_name(req.name) == name:
                todo += sorted(req.extras)
            else:
                out.append(r)
    return out


def group_names(pyproject):
    """The optional dependency groups of pyproject.toml."""
    project = tomllib.loads(Path(pyproject).read_text())["project"]
    return sorted(project.get("optional-dependencies", {}))


def pinned(requirements_txt):
    """{canonical name: version} of the `name==version` lines of requirements.txt whose
    environment marker holds here."""
    out = {}
    for line in Path(requirements_txt).read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            req = Requirement(line)
            if req.marker is None or req.marker.evaluate():
                (spec,) = req.specifier
                out[canonicalize_name(req.name)] = spec.version
    return out


def closure(requirements):
    """-> {canonical name: Distribution} of the installed distributions `requirements` need,
    following each one's own requirements (markers evaluated here, extras followed).
    KeyError names a requirement that is not installed (not pinned in requirements.txt)."""
    dists, done = {}, set()
    todo = [(Requirement(r), "") for r in requirements]  # (requirement, the extra naming it)
    while todo:
        req, via = todo.pop()
        if req.marker is not None and not req.marker.evaluate({"extra": via}):
            continue
        key = canonicalize_name(req.name)
        if key not in dists:
            try:
                dists[key] = metadata.distribution(req.name)
            except metadata.PackageNotFoundError:
                raise KeyError(req.name) from None
        for extra in ("", *sorted(req.extras)):
            if (key, extra) not in done:
                done.add((key, extra))
                todo += [(Requirement(r), extra) for r in dists[key].requires or ()]
    return dists


def _digest(data):
    return (
        "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    )


def repack(dist, out_dir):
    """Write `dist` (installed from a wheel) as a wheel into out_dir; -> its path. Only the files
    under site-packages (scripts are made again from entry_points.txt by the installer)."""
    files = [f for f in dist.files or () if not str(f).startswith("..")]
    info = next(f.parent for f in files if f.name == "METADATA")
    wheel_meta = Path(dist.locate_file(info / "WHEEL")).read_text()
    tags = [t.split("-") for t in re.findall(r"^Tag: (\S+)", wheel_meta, re.M)]
    tag = "-".join(".".join(sorted({t[i] for t in tags})) for i in range(3))  # py2.py3-none-any
    base = str(info)[: -len(".dist-info")]
    path = Path(out_dir) / ("%s-%s.whl" % (base, tag))
    record = []
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        for f in files:
            name = str(f).replace("\\", "/")
            if "__pycache__" in name or name.endswith(".pyc") or f.name in ("RECORD", "INSTALLER"):
                continue
            if name.endswith(".dist-info/direct_url.json"):
                continue
            src = Path(dist.locate_file(f))
            if not src.is_file():
                continue
            data = src.read_bytes()
            z.writestr(name, data)
            record.append("%s,%s,%d" % (name, _digest(data), len(data)))
        record.append("%s/RECORD,," % info)
        z.writestr("%s/RECORD" % info, "\n".join(record) + "\n")
    return path
