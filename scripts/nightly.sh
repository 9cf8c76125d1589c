#!/usr/bin/env bash
# Nightly CI entry point for a CUDA or Ascend host: gates the nightly suite
# against golden/<host-class>/ and leaves the reports in one directory.
#
#   scripts/nightly.sh [extra gcjitter gate flags]
#
# Environment (all optional):
#   SUITE        built-in suite to gate (default: nightly)
#   HOST_CLASS   baselines to use (default: $GCJITTER_HOST_CLASS, else derived
#                from the device: cuda-<gpu>, npu-<chip>, cpu-<model>)
#   GOLDEN       baselines directory (default: golden)
#   OUT          results and reports directory (default: gcjitter-nightly/<time>)
#   GCJITTER_PYTHON  the interpreter with torch (and torch_npu) to measure
#
# Exit status is gcjitter gate's: 0 pass, 1 regression, 2 bad input or a
# missing baseline (the message gives the golden update command), 3 a run
# crashed or hung (its data is kept in $OUT), 130 cut short by a signal
# (SIGTERM from CI's timeout, Ctrl-C): the reports are still written,
# marked partial, with the verdicts on the runs that completed.
set -uo pipefail
cd "$(dirname "$0")/.."

SUITE=${SUITE:-nightly}
GOLDEN=${GOLDEN:-golden}
OUT=${OUT:-gcjitter-nightly/$(date +%Y%m%d-%H%M%S)}

go build -buildvcs=auto -o bin/gcjitter ./cmd/gcjitter || exit 3
args=(gate -suite "$SUITE" -golden "$GOLDEN" -o "$OUT")
[ -n "${HOST_CLASS:-}" ] && args+=(-host-class "$HOST_CLASS")
if [ -z "${GCJITTER_PYTHON:-}" ]; then
  GCJITTER_PYTHON=$(scripts/setup.sh) || exit 3
  export GCJITTER_PYTHON
fi

# CI's timeout signals this script, not its children: pass the signal on,
# so the gate judges the runs that completed and writes every report,
# marked partial, before it exits (130).
bin/gcjitter "${args[@]}" "$@" &
pid=$!
trap 'kill -INT "$pid" 2>/dev/null' TERM INT
wait "$pid"
code=$?
# A trapped signal ends the first wait early: wait for the reports.
while kill -0 "$pid" 2>/dev/null; do
  wait "$pid"
  code=$?
done
echo "nightly: exit $code; results and gate.txt in $OUT" >&2
exit $code
