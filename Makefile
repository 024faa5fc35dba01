# Two commands do everything on a fresh machine: `make plan` (the main job) and `make test`.
# Both create the virtualenv from requirements.txt when it is missing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STACK ?= dev
OUT ?= build/plan

.PHONY: plan test lint schema docs up preview bench clean

$(BIN)/activate: requirements.txt requirements-analyzer.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements.txt
	$(BIN)/pip install --quiet --no-deps -r requirements-analyzer.txt
	touch $(BIN)/activate

## plan: the offline plan of STACK (default dev) under mocks; writes manifests to OUT
plan: $(BIN)/activate
	$(BIN)/python -m tools.plan --stack $(STACK) --out $(OUT)/$(STACK)

## test: lint, type-check and the test suite
test: $(BIN)/activate
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/python -m pytest -q

## schema: regenerate schemas/tenant.schema.json from the tenant model
schema: $(BIN)/activate
	$(BIN)/python -m tools.schema --write

## docs: regenerate the generated parts of docs/ (reference tables, layout) from the code
docs: $(BIN)/activate
	$(BIN)/python -m tools.docs --write

## preview / up: the real thing, where the Pulumi CLI and a cluster exist (see docs/getting-started.md)
preview: $(BIN)/activate
	pulumi preview --stack $(STACK)

up: $(BIN)/activate
	pulumi up --stack $(STACK)

## bench: tools.plan end to end beside the typed, inputs and SDK floors (docs/scale.md)
bench: $(BIN)/activate
	$(BIN)/python -m tools.bench --sizes 10,100,1000,3000 --markdown --figures tools/scale_figures.json

clean:
	rm -rf build .pytest_cache .mypy_cache .ruff_cache
