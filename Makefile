# gcjitter: the two commands that matter are `make run` and `make test`;
# both do their own set-up (scripts/setup.sh finds or installs torch).

GO      ?= go
BIN     := bin/gcjitter
# The interpreter with torch, found (or installed) once per make invocation.
PYTHON   = $(shell scripts/setup.sh)

.PHONY: all build setup run test fuzz bench matrix matrix-stack clean

# Each fuzzer's budget in make test is a count of inputs, about 10 s each on
# a 2-core VM: a duration -fuzztime races the fuzzing coordinator's deadline
# in Go 1.26 (golang/go#75804, fixed in 1.27) and fails now and then with a
# bare "context deadline exceeded" and no failing input. FUZZTIME (1m, or
# 1000000x) sets one budget for all, e.g. make fuzz FUZZTIME=5m.
FUZZTIME ?=

all: build

build:
	$(GO) build -buildvcs=auto -o $(BIN) ./cmd/gcjitter

setup:
	@scripts/setup.sh >/dev/null

# The main job: the built-in quick suite on this host, summary printed and
# each case's expected signature checked. RUN_FLAGS adds gcjitter run flags
# (e.g. RUN_FLAGS="-runs 5", or RUN_FLAGS="-suite nightly" on an accelerator host).
run: build
	@py="$(PYTHON)"; ./$(BIN) run -python "$$py" -check -o bin/results-$$(date +%Y%m%d-%H%M%S) $(RUN_FLAGS)

# cmd/gcjitter alone, after the rest: its end-to-end checks run real torch
# workers and read this host's speed, so no other package's tests compete
# with them for a 2-core machine. The other packages run two at a time
# (207 s -> 133 s here): their checks are on synthetic data, or exact on
# real workers (schedules, counts), or as wide as fit's reproduced pause
# (1/3x-3x of the traced one); they passed so beside a busy loop too.
# The longest start first (fit, stats, bench, runner, history), so that
# none runs alone at the end (runner last left one core idle for 45 s);
# the worker's Python tests (no timings) run beside them.
# -timeout: cmd/gcjitter starts ~70 torch workers; go test's 10-minute
# default per package is too close on a loaded host.
test: build
	@py="$(PYTHON)"; set -e; \
	echo "interpreter with torch: $$py"; \
	$(GO) vet ./...; \
	unformatted=$$("$$($(GO) env GOROOT)/bin/gofmt" -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi; \
	ut=$$(mktemp); trap 'rm -f "$$ut"' EXIT; (cd bench && "$$py" -m unittest worker_test) >"$$ut" 2>&1 & utpid=$$!; \
	GCJITTER_PYTHON="$$py" $(GO) test -count=1 -p 2 -timeout 30m ./fit ./stats ./bench ./runner ./history $$($(GO) list ./... | grep -vE '/(cmd/gcjitter|fit|stats|bench|runner|history)$$'); \
	if wait $$utpid; then tail -n 3 "$$ut"; else cat "$$ut"; exit 1; fi; \
	GCJITTER_PYTHON="$$py" $(GO) test -count=1 -p 1 -timeout 30m ./cmd/gcjitter
	@$(MAKE) --no-print-directory fuzz

# The fuzzers of every reader of outside input: record streams, case files,
# benchfmt files, baselines. Seed corpora: f.Add in the tests and
# testdata/fuzz/. A failing input is saved there by go test.
# -fuzzminimizetime: Go spends up to a minute shrinking each new input
# that widens coverage, with no execs meanwhile (3-6 s stalls, a third of
# a budget here); a count bounds it, and a crasher is still saved whole.
FUZZMIN = -fuzzminimizetime $(or $(FUZZMINTIME),2000x)
fuzz:
	$(GO) test $(FUZZMIN) -run '^$$' -fuzz '^FuzzReader$$' -fuzztime $(or $(FUZZTIME),75000x) ./bench
	$(GO) test $(FUZZMIN) -run '^$$' -fuzz '^FuzzFastStepAgreesWithJSON$$' -fuzztime $(or $(FUZZTIME),120000x) ./bench
	$(GO) test $(FUZZMIN) -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(or $(FUZZTIME),50000x) ./cases
	$(GO) test $(FUZZMIN) -run '^$$' -fuzz '^FuzzBenchfmtCompare$$' -fuzztime $(or $(FUZZTIME),15000x) ./results
	$(GO) test $(FUZZMIN) -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(or $(FUZZTIME),100000x) ./golden

# Harness overhead and other speed figures (see BENCHMARKS.md).
bench: build
	@py="$(PYTHON)"; GCJITTER_PYTHON="$$py" $(GO) test -run '^$$' -bench . -benchtime 1x ./...

# The host-speed matrix: the quick suite's expectations with the workload's
# compute x0.5, x1 and x2, each with and without a CPU-burning process
# beside the runs, REPS times each (make test runs one hard cell).
REPS ?= 5
matrix: build
	@py="$(PYTHON)"; GCJITTER_PYTHON="$$py" GCJITTER_MATRIX_REPS=$(REPS) $(GO) test -count=1 -run '^TestHostSpeedMatrix$$' -timeout 6h -v ./cmd/gcjitter

# The stack users run (scripts/stack.sh frameworks: torch 2.15 from PyPI
# on CPython 3.11, transformers, lightning; 85 s and 5.6 GB on a fresh
# machine, wheels cached): Hugging Face and Lightning Trainer loops traced
# unchanged (cmd/gcjitter/testdata/stack); and HolisticTraceAnalysis
# (scripts/stack.sh hta: 23 s, 0.5 GB) reading every trace gcjitter
# imports (runner's TestHTAAgrees). Not part of make test.
matrix-stack: build
	@py="$$(scripts/stack.sh frameworks)"; hta="$$(scripts/stack.sh hta)"; set -e; \
	GCJITTER_HTA_PYTHON="$$hta" $(GO) test -count=1 -run '^TestHTAAgrees$$' -v ./runner; \
	GCJITTER_PYTHON="$(PYTHON)" GCJITTER_STACK_PYTHON="$$py" $(GO) test -count=1 -run '^TestStackScripts$$' -timeout 30m -v ./cmd/gcjitter

clean:
	rm -rf bin
