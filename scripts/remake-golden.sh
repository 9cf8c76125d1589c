#!/bin/sh
# remake-golden.sh [gcjitter flags...]: remakes golden/ci-cpu, the shipped
# CPU CI baselines, on this host: the quick suite at its reduced size, each
# case with the runs its spread needs for a gate against it to be able to
# fail (gate's TestShippedBaselinesCanGate): smoke 14 (50-step runs spread
# 15-26% between processes), gc-policy-matrix 11 (sub-millisecond p50s),
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
remake() {
  runs=$1
  shift
  bin/gcjitter golden update -host-class ci-cpu -reduced -runs "$runs" -o "bin/golden-ci-cpu-$stamp-$runs" "$@"
}
remake 14 "$@" smoke
remake 11 "$@" gc-policy-matrix
remake 8 "$@" resnet-gc-collect-every-step
remake 10 "$@" ascend-gpt-periodic-gc
remake 5 "$@" device-bound-periodic-gc device-overlap-gc straggler-gc
