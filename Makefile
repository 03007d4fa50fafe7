# The two commands: `make run` (set up everything, start Neo4j, run the service's
# main job) and `make test` (set up everything, run the whole suite).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# An editable install of a package whose service.cypher lives in cypher/ makes setuptools
# print a box saying how it maps the folders; it is information only, not a warning.
EDITABLE := PYTHONWARNINGS='ignore:Editable installation' $(BIN)/pip install --quiet -e

.PHONY: setup run test check schema client docs docs-serve demo neo4j-up neo4j-down \
	neo4j-status clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(EDITABLE) '.[test,bench]'
	touch $(STAMP)

# Arize Phoenix, which the telemetry tests export to (tests/phoenix.py), in a virtualenv
# of its own: it pins many packages, strawberry-graphql among them.
PHOENIX_VENV := .venv-phoenix
PHOENIX_STAMP := $(PHOENIX_VENV)/.installed

$(PHOENIX_STAMP):
	$(PYTHON) -m venv $(PHOENIX_VENV)
	$(PHOENIX_VENV)/bin/pip install --quiet --upgrade pip
	$(PHOENIX_VENV)/bin/pip install --quiet 'arize-phoenix>=12,<21'
	touch $(PHOENIX_STAMP)

# ariadne-codegen, which writes ctxdag/client/generated/, pins graphql-core below the 3.3
# the service needs: it lives in a virtualenv of its own.
CODEGEN_STAMP := $(VENV)/codegen/.installed

$(CODEGEN_STAMP): Makefile
	$(PYTHON) -m venv $(VENV)/codegen
	$(VENV)/codegen/bin/pip install --quiet 'ariadne-codegen==0.19.0'
	touch $(CODEGEN_STAMP)

setup: $(STAMP) $(PHOENIX_STAMP) $(CODEGEN_STAMP)

run: $(STAMP)
	$(BIN)/ctxdag serve

demo: $(STAMP)
	$(BIN)/ctxdag demo

schema: $(STAMP)
	$(BIN)/strawberry export-schema service.api.schema:schema -o schema.graphql

# The typed Python client's generated layer, from schema.graphql (docs/client.md).
client: $(STAMP) $(CODEGEN_STAMP)
	$(BIN)/python -m ctxdag.client.regenerate

# `make docs`: the site (mkdocs.yml) into site/, failing on any broken link or anchor;
# `make docs-serve` serves it at http://127.0.0.1:8001 and rebuilds on every change.
docs: $(STAMP)
	$(BIN)/mkdocs build --strict --site-dir site

docs-serve: $(STAMP)
	$(BIN)/mkdocs serve --dev-addr 127.0.0.1:8001

test: $(STAMP) $(PHOENIX_STAMP) $(CODEGEN_STAMP)
	.ci/browser
	$(BIN)/python -m pytest

# The fast tier for a developer's loop: unit tests and one integration test per area
# (tests/fast_tier.py); the whole suite stays `make test`, which CI runs.
check: $(STAMP) $(CODEGEN_STAMP)
	$(BIN)/python -m pytest -m fast -q

neo4j-up: $(STAMP)
	$(BIN)/ctxdag neo4j up

neo4j-down: $(STAMP)
	$(BIN)/ctxdag neo4j down

neo4j-status: $(STAMP)
	$(BIN)/ctxdag neo4j status

clean:
	rm -rf $(VENV) $(PHOENIX_VENV) .pytest_cache build site *.egg-info

# `make bench`: the benchmark harness (bench/, docs/benchmarks.md). It starts its own
# Neo4j in a temporary directory, prints a table and writes bench/results/latest.json.
# `make bench BENCH_ARGS=--quick` is the short smoke run.
BENCH_STAMP := $(VENV)/.bench-installed
BENCH_ARGS ?=

.PHONY: bench

$(BENCH_STAMP): pyproject.toml $(STAMP)
	$(EDITABLE) '.[bench]'
	touch $(BENCH_STAMP)

bench: $(BENCH_STAMP)
	$(BIN)/python -m bench $(BENCH_ARGS)
