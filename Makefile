# dnabird: `make test` and (later) `make demo` do all set-up on a fresh machine with only Python.
PYTHON ?= python3
VENV ?= .venv
# Choose your torch build. The default comes from the default package index: on Linux the CUDA build
# (it runs on CPU too, a download of several GB); the CPU build is much smaller:
# TORCH_SPEC='torch==2.13.0 --index-url <PyTorch's CPU wheel index>'.
TORCH_SPEC ?= torch==2.13.0
PYTEST_ARGS ?=
# Extra `key.sub=value` overrides for the demo pipeline, e.g. DEMO_ARGS='out_dir=runs/demo2'.
DEMO_ARGS ?=
# The results page and the finished run folders it is generated from (`make results`).
RESULTS_PAGE ?= docs/results.md
RESULT_RUNS ?= runs/demo

BIN := $(VENV)/bin

# Arguments of the GPU acceptance run (`make gpu-check`), e.g. GPU_CHECK_ARGS='--smoke' for its tiny CPU form.
GPU_CHECK_ARGS ?= --out gpu_check.md

.PHONY: install test test-slow lint demo results gpu-check

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed: $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet $(TORCH_SPEC)
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $@

install: $(VENV)/.installed

lint: install
	$(BIN)/ruff check dnabird tests benchmarks notebooks

test: lint
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# The slow tests: FlexAttention parity and kernel reuse (compiles kernels), killing and resuming pretraining,
# the short forms of the comparison pipelines (the 256-token long-range text task: 7.5-9 minutes).
test-slow: install
	$(BIN)/python -m pytest -m "slow and not gpu and not manual" $(PYTEST_ARGS)

# The GPU acceptance run on one CUDA GPU (benchmarks/README.md: parity of every backend, a bigbird-base step per
# backend beside transformers, GENA-LM's layout, text_longdoc in bf16 on three seeds): one table, under 8 minutes.
gpu-check: install
	$(BIN)/python -m pip install --quiet -e ".[dev,gpu]"
	$(BIN)/python benchmarks/gpu_check.py $(GPU_CHECK_ARGS)

# The embedded default end to end (fetch toy -> corpus -> tokenizer -> shards ...); outputs in runs/demo.
demo: install
	$(BIN)/dnabird run pipelines/demo.yaml $(DEMO_ARGS)

# The results page (docs/results.md) generated from finished run folders, e.g.
# RESULT_RUNS='runs/demo runs/demo_seed1 runs/demo_seed2' for the demo's spread over seeds.
results: install
	$(BIN)/dnabird report --results $(RESULTS_PAGE) $(RESULT_RUNS)
