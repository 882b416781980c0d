"""A module of this project as it was at a git revision, for benches that run the old code and
the new in turns in one run (bench_store_path.py, bench_table_idle.py: `--impl git:REF,head`)."""

import subprocess
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def module_at(ref, rel, name):
    """The file `rel` (relative to the project) at `ref`, executed as a new module `name`."""
    src = subprocess.run(
        ["git", "show", "%s:%s" % (ref, rel)],
        cwd=str(ROOT),
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    mod = types.ModuleType(name)
    mod.__file__ = "%s@%s" % (rel, ref)
    exec(compile(src, mod.__file__, "exec"), mod.__dict__)  # noqa: S102  (our own file at REF)
    return mod
