"""Run every benchmark: imports each bench/bench_*.py and calls its main() (`make bench`)."""

import importlib.util
import sys
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def main():
    failed = 0
    for path in sorted(HERE.glob("bench_*.py")):
        spec = importlib.util.spec_from_file_location("bench_" + path.stem, path)
        mod = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(mod)
            mod.main()
        except Exception:
            failed += 1
            print("bench: %s failed" % path.name, file=sys.stderr)
            traceback.print_exc()
        print()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
