# Two commands: `make demo` and `make test`. Both create the virtual environment when missing.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint typecheck unit venv clean

venv: $(STAMP)

# npm ci installs the pinned npm tools (package-lock.json) into node_modules/: TypeScript code
# copies are extracted and `codegen --target typescript` runs with them (node and npm come from
# the machine).
$(STAMP): pyproject.toml requirements-nodeps.txt package-lock.json
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[codegen,dev,serve]'
	$(BIN)/python -m pip install --quiet --no-deps -r requirements-nodeps.txt
	npm ci --no-audit --no-fund --loglevel=error
	touch $(STAMP)

demo: $(STAMP)
	@echo "--- wiregate check: contract and fixtures, generated code, breaking changes, drift:"
	$(BIN)/wiregate check
	@echo "--- the bundled rollouts hold one producer quirk and one broken record (exit 1 expected):"
	-$(BIN)/wiregate validate --record auto contracts/examples/rollouts.jsonl
	@echo "--- datafactory repairs the quirk, rejects the broken record, gates on G3 and exports:"
	rm -rf build/demo && mkdir -p build/demo
	$(BIN)/python -m datafactory --input contracts/examples/rollouts.jsonl \
		--eval-items contracts/examples/eval-items.jsonl \
		--output-dpo build/demo/dpo.jsonl --output-ppo build/demo/ppo.jsonl \
		--rejects build/demo/rejects.jsonl --manifest build/demo/manifest.json

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy

# pytest exits 5 when it collects no test; make treats that as a failure like any other.
unit: $(STAMP)
	$(BIN)/python -m pytest

test: lint typecheck unit

clean:
	rm -rf $(VENV) node_modules build *.egg-info .mypy_cache .pytest_cache .ruff_cache
