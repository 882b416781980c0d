#!/usr/bin/env bash
# Apply what ruff fixes by itself, then show what is left for a hand (make lint's findings).
# Run from the checkout after merging the refactoring branches (issue 22): it sorts imports,
# removes unused ones, rewrites the few pyupgrade aliases (ruff's safe fixes only) and formats
# host_tools, tests, bench and tools with ruff (pyproject.toml [tool.ruff]). What it cannot fix
# (lines over 99 characters in strings and comments, bugbear findings) is listed at the end.
# Formatting changes no behaviour; run the suite (make test) after it all the same.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin
PATHS=(host_tools tests bench tools)
test -x "$BIN/ruff" || { echo "tools/lint_fix.sh: no $BIN/ruff (run make venv)" >&2; exit 1; }
"$BIN/ruff" check --fix --quiet "${PATHS[@]}" >/dev/null || true  # safe fixes; the rest: below
"$BIN/ruff" format --quiet "${PATHS[@]}"
"$BIN/ruff" check --fix --quiet "${PATHS[@]}" >/dev/null || true  # after the formatter
echo "tools/lint_fix.sh: what is left for a hand (then make lint):"
status=0
"$BIN/ruff" check --output-format concise "${PATHS[@]}" || status=1
"$BIN/mypy" host_tools || status=1
exit $status
