# The README's two commands: `make run` and `make test`. Each sets everything up on a fresh
# machine that has only Python, make and apt, then does its job.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
HOST ?= 127.0.0.1
PORT ?= 8000
# PostgreSQL run of the suite: DATABASE_URL if set, else the local server when it answers.
PG_URL ?= postgres://postgres@127.0.0.1:5432/test
# make test runs the suite on every core (pytest-xdist; -n auto is 2 on a 2-core CI machine).
# A file's tests stay on one worker, in their order: module fixtures such as the deploy tests'
# production server are built once (--dist load built them on both workers and took longer).
# One test at a time: `make test XDIST="-n 0"`.
XDIST ?= -n auto --dist loadfile

.PHONY: run test bench lint load worker install browser clean api-schema

$(BIN)/activate:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed: $(BIN)/activate requirements.txt requirements-dev.txt
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements-dev.txt
	touch $@

install: $(VENV)/.installed

run: install
	$(PY) manage.py migrate --no-input -v 0
	@# serve: runserver, then the first administrator's sign-in framed, printed last.
	$(PY) manage.py serve $(HOST):$(PORT)

worker: install
	$(BIN)/celery -A contextevals worker --beat --queues celery,judges --loglevel=info

# Debian's chromium for the browser tests (pip's Playwright browser download does not work
# on machines without internet), nginx, the web process's front (scripts/web.py), which
# the deploy tests start, and libseccomp2, which the Python checks' sandbox loads.
browser:
	@{ command -v chromium && { command -v nginx || test -x /usr/sbin/nginx; } \
	  && /sbin/ldconfig -p | grep -q libseccomp.so.2; } >/dev/null 2>&1 || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium nginx libseccomp2; }

# Complexity by radon, which counts boolean conditions (ruff's C901 does not): no function
# above 15 (scripts/complexity.py). .pre-commit-config.yaml
# runs the same four checks before each commit (`.venv/bin/pre-commit install`).
lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(PY) scripts/complexity.py

# The checker and contextgrid are pure Python and never touch a database (test_pure holds the
# checker to it), so the PostgreSQL run leaves their tests out rather than repeat them.
test: install browser lint
	$(PY) manage.py makemigrations --check --dry-run
	$(BIN)/pytest $(XDIST)
	@if [ -n "$$DATABASE_URL" ] || $(PY) -c "import socket; socket.create_connection(('127.0.0.1', 5432), 1)" 2>/dev/null; then \
	  echo "--- The suite again, on PostgreSQL (browser tests, the checker and contextgrid ran once above) ---"; \
	  DATABASE_URL=$${DATABASE_URL:-$(PG_URL)} $(BIN)/pytest $(XDIST) -m "not browser" \
	    --ignore=tests/importing --ignore=tests/contextgrid; \
	else echo "--- PostgreSQL did not answer on 127.0.0.1:5432: skipped the PostgreSQL run ---"; fi

# Every figure is printed, then the exit status says whether any missed its goal (FAIL) or
# a script broke: one miss does not hide the figures after it.
bench: install
	@out=$$(mktemp); \
	for script in bench/bench_*.py; do \
	  { DJANGO_SETTINGS_MODULE=contextevals.settings $(PY) $$script 2>&1 \
	    || echo "bench $$script: exited with an error status FAIL"; } | tee -a $$out; \
	done; \
	if grep -q "FAIL" $$out; then rm -f $$out; echo "--- Some figures missed their goal (FAIL above) ---"; exit 1; fi; \
	rm -f $$out

# The HTTP API's OpenAPI schema, as tests/api/test_schema.py holds each version to it.
api-schema: install
	$(PY) manage.py export_openapi_schema --api datasets_app.api.api --indent 2 \
	  --output tests/api/schema/openapi-$$($(PY) manage.py shell -v 0 -c "from datasets_app.api.endpoints import API_VERSION; print(API_VERSION)").json

load: install
	$(PY) scripts/load.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
