# gcjitter: the two commands that matter are `make run` and `make test`;
# both do their own set-up (scripts/setup.sh finds or installs torch).

GO      ?= go
BIN     := bin/gcjitter
# The interpreter with torch, found (or installed) once per make invocation.
PYTHON   = $(shell scripts/setup.sh)

.PHONY: all build setup run test test-go test-python bench clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/gcjitter

setup:
	@scripts/setup.sh >/dev/null

# The main job: a small workload under three GC policies on this host.
run: build
	@py="$(PYTHON)"; set -e; for p in default disabled threshold:700,10,1000; do \
	  echo "== policy $$p"; \
	  ./$(BIN) worker -python "$$py" -model gpt -steps 100 -warmup 5 -garbage ring+traceback \
	    -cycles 200 -long-lived 200000 -retain 8 -policy $$p -o bin/records-$$(echo $$p | tr ':,' '__').jsonl; \
	done

test: build
	@py="$(PYTHON)"; set -e; \
	echo "interpreter with torch: $$py"; \
	$(GO) vet ./...; \
	GCJITTER_PYTHON="$$py" $(GO) test -count=1 ./...; \
	cd bench && "$$py" -m unittest worker_test

# Harness overhead and other speed figures (see BENCHMARKS.md).
bench: build
	@py="$(PYTHON)"; GCJITTER_PYTHON="$$py" $(GO) test -run '^$$' -bench . -benchtime 1x ./...

clean:
	rm -rf bin
