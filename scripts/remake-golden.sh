#!/bin/sh
# remake-golden.sh [gcjitter flags...]: remakes golden/ci-cpu, the shipped
# CPU CI baselines, on this host: the quick suite at its reduced size, each
# case with the runs its spread needs for a gate against it to be able to
# fail (gate's TestShippedBaselinesCanGate): smoke 14 (50-step runs spread
# 15-26% between processes), gc-policy-matrix 14 (sub-millisecond p50s;
# at 11 on the AMD VM its threshold variant's p50 spread 22.6% and the
# whole-suite gate could not fail),
# resnet-gc-collect-every-step 8 (its 15-step empty-cache runs spread 17%),
# ascend-gpt-periodic-gc 10 (on the AMD VM of 2026-12-07 its per-run p50s
# moved 9.3-14.2 ms from run to run, every variant together: at 5 runs
# default's p50 spread 16.7% and the gate could not fail), the others 5.
# Run it on a quiet host: golden update refuses a busy session or one
# whose speed moved, and reruns it once. Extra flags (e.g. -python)
# go to every golden update.
set -eu
cd "$(dirname "$0")/.."
make --no-print-directory build >/dev/null
stamp=$(date +%Y%m%d-%H%M%S)
n=0
remake() {
  runs=$1
  shift
  # One results directory per call: two calls may ask the same runs.
  n=$((n + 1))
  bin/gcjitter golden update -host-class ci-cpu -reduced -runs "$runs" -o "bin/golden-ci-cpu-$stamp-$n-$runs" "$@"
}
remake 14 "$@" smoke
remake 14 "$@" gc-policy-matrix
remake 8 "$@" resnet-gc-collect-every-step
remake 10 "$@" ascend-gpt-periodic-gc
remake 5 "$@" device-bound-periodic-gc device-overlap-gc straggler-gc
