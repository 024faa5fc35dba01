# Two commands do everything on a fresh machine: `make plan` (the main job) and `make test`.
# Both create the virtualenv when it is missing: uv alone with pip (requirements-uv.txt), then with
# uv requirements-dev.txt (the runtime set plus the `ops` group's Kubernetes client for `tenancy
# status` and the test tools), both exported with hashes from uv.lock and checked against them; uv
# installs the set in about 4 s where pip took 21 s. Then this checkout in editable mode for the
# `tenancy` command (docs/cli.md): no dependencies and no build isolation, so nothing beyond the
# hashed files is fetched (the build backend, setuptools, is in the runtime set). requirements.txt
# alone is what `pulumi up` and the policy pack need. Nothing is compiled at install: the cloud SDKs
# are hundreds of MB of generated modules of which a run imports a few, compiled on first import.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Every Python process of these targets caches its byte-code in one git-ignored folder of the
# virtualenv, whatever the shell says: with PYTHONDONTWRITEBYTECODE set (to keep `__pycache__` out of
# source trees) and no cache, each process compiles the cloud SDKs it imports again, about 1.6 s of
# CPU per process, about 100 s of CPU in `make test` (issue 35). The few tests that start a process
# with an environment of their own leave it out and may write `__pycache__` (git-ignored).
export PYTHONDONTWRITEBYTECODE :=
export PYTHONPYCACHEPREFIX := $(abspath $(VENV))/pycache
STACK ?= dev
OUT ?= build/plan


.PHONY: realrun realrun-tools plan plan-all test lint schema docs up preview destroy cluster cluster-delete e2e e2e-manifests bench engine-bench bootstrap clean

$(BIN)/activate: requirements.txt requirements-ops.txt requirements-dev.txt requirements-uv.txt requirements-analyzer.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --no-compile --no-deps --require-hashes -r requirements-uv.txt
	$(BIN)/uv pip install --quiet --python $(BIN)/python --require-hashes -r requirements-dev.txt
	$(BIN)/uv pip install --quiet --python $(BIN)/python --no-deps -r requirements-analyzer.txt
	$(BIN)/uv pip install --quiet --python $(BIN)/python --no-deps --no-build-isolation -e .
	touch $(BIN)/activate

## plan: the offline plan of STACK (default dev) under mocks; writes manifests to OUT. FORGET=TENANT
## drops a tenant that was only ever planned, never deployed, from the baseline (`tenancy plan --forget`)
plan: $(BIN)/activate
	$(BIN)/tenancy plan --stack $(STACK) --out $(OUT)/$(STACK)$(foreach tenant,$(FORGET), --forget $(tenant))

## plan-all: the offline plan of every stack (Pulumi.*.yaml), all of them even after a failure;
## exits non-zero if any fails, so a tenant valid for dev but not for prod-aws fails here, not in CI
plan-all: $(BIN)/activate
	$(BIN)/tenancy plan-all --out $(OUT)

## test: lint, type-check and the test suite, a pytest-xdist worker per core; a test file stays on one
## worker (module fixtures planned once), the example stacks' plans are shared (tests/shared.py), and
## plans of equal inputs are computed once per run by either worker (tools/plan/run_cache.py).
## mypy (one core, about 40 s without its cache) runs beside the suite and its report follows the
## suite's; the target fails if either does, and Ctrl-C stops both. The byte-code of temporary trees
## (`tenancy affected` plans copies of the checkout) is dropped first: nothing would read it again.
test: $(BIN)/activate
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	rm -rf $(VENV)/pycache/tmp
	types_log=$$(mktemp); $(BIN)/mypy > "$$types_log" 2>&1 & types_pid=$$!; \
	trap 'kill $$types_pid 2>/dev/null; rm -f "$$types_log"' EXIT; trap 'exit 130' INT TERM; \
	$(BIN)/python -m pytest -q -n auto --dist loadfile; tests=$$?; \
	wait $$types_pid; types=$$?; cat "$$types_log"; [ $$tests -eq 0 ] && [ $$types -eq 0 ]

## schema: regenerate schemas/tenant.schema.json from the tenant model
schema: $(BIN)/activate
	$(BIN)/tenancy schema --write

## docs: regenerate the generated parts of docs/ (reference tables, layout) from the code
docs: $(BIN)/activate
	$(BIN)/tenancy docs --write

## cluster: a kind cluster with the dev stack's node pools and Kubernetes version (kind/cluster.yaml);
## needs docker, kind and kubectl, and says how to install what is missing
cluster: $(BIN)/activate
	scripts/cluster.sh create

cluster-delete:
	scripts/cluster.sh delete

## preview / up / destroy: the real thing with the Pulumi CLI (the version requirements.txt pins);
## STACK=dev keeps its state in .pulumi-state under a passphrase (docs/runbooks/kind.md)
preview: $(BIN)/activate
	STACK=$(STACK) scripts/pulumi.sh preview

up: $(BIN)/activate
	STACK=$(STACK) scripts/pulumi.sh up

destroy: $(BIN)/activate
	STACK=$(STACK) scripts/pulumi.sh destroy

## bootstrap: backend, secrets provider, `pulumi stack init` of STACK and its shards with the committed
## provider URL, CI identities (ARGS="--github-repo OWNER/REPO") and the system pool (docs/bootstrap.md)
bootstrap: $(BIN)/activate
	scripts/bootstrap.sh --stack $(STACK) $(ARGS)

## realrun-tools: build (or find on PATH) the Pulumi CLI, the Kubernetes provider, etcd, the Kubernetes
## control plane and kwok from the Go modules under realrun/ into .realrun/bin; rebuilds only what a
## changed pin needs (docs/real-run.md). Needs Go 1.26+ and the Go module proxy.
realrun-tools: $(BIN)/activate
	$(BIN)/tenancy realrun-tools

## realrun: the dev stack's real `pulumi up` against a real control plane on loopback, and the checks
## of docs/real-run.md, one line each; exits non-zero when any fails
realrun: $(BIN)/activate
	$(BIN)/tenancy realrun

## e2e: what .github/workflows/e2e.yml runs, on the kind cluster (after `make cluster`)
e2e: $(BIN)/activate
	scripts/e2e/up.sh
	scripts/e2e/wait-tenants.sh
	scripts/e2e/wait-flux.sh
	scripts/e2e/vcluster-dns.sh
	scripts/e2e/can-i.sh
	scripts/e2e/admission.sh
	scripts/e2e/network.sh
	scripts/e2e/no-changes.sh
	scripts/e2e/decommission.sh

## e2e-manifests: regenerate scripts/e2e/cases/ from tools/generators/admission_cases.py
e2e-manifests: $(BIN)/activate
	$(BIN)/tenancy e2e-manifests --write

## bench: `tenancy plan` end to end beside the typed, inputs and SDK floors (docs/scale.md)
bench: $(BIN)/activate
	$(BIN)/tenancy bench --sizes 10,100,1000,3000 --markdown --figures tools/scale/scale_figures.json

## engine-bench: the real engine at COUNTS tenants (default 100,300), as users run it (docs/scale.md)
COUNTS ?= 100,300
engine-bench: $(BIN)/activate
	$(BIN)/tenancy realrun --bench $(COUNTS) --first-up-without-checkpoints --json build/engine_bench.json

clean:
	rm -rf build .pytest_cache .mypy_cache .ruff_cache
