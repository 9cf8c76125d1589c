#!/bin/bash
# tail-trials.sh N OUT [KINDS]: issue #43's same-session trials of the tail,
# N rounds of `gcjitter ab` at 5+5 runs of 200 steps (RUNS a side: 5), one trial of each kind
# a round (so a cut leaves the kinds even), each under the shared heavy lock
# and timed inside it:
#   slower  ascend-gpt-periodic-gc default, every full collection 20% longer
#           (slower-collector.sh 0.2) against the same wrapper at 0;
#   stall   ascend-gpt-periodic-gc threshold:700,10,1000 (no full collection
#           in 200 steps), a busy wait of STALL_MS (6) ms after the backward
#           pass in 3% of the steps (stall.sh) against the same wrapper at 0
#           (recorded as stall-MSms);
#   aa      the default against itself (the slower wrapper at 0 both sides).
# Appends one line a trial to OUT/trials.tsv: the kind, the trial, ab's exit,
# the seconds the trial held the lock, p99's, p99-no-gen2's and p99-rel's
# verdict and change, and every regressed metric. GCJITTER (bin/gcjitter), GCJITTER_LOCK
# (/tmp/gcjitter-heavy.lock; none: the caller holds it, e.g. one flock around
# a round: `flock L env GCJITTER_LOCK=none FIRST=T tail-trials.sh T OUT`),
# PYTHON (/usr/bin/python3), FIRST (1: the first trial's number, to go on
# after a cut; trial T runs ab -seed T).
set -eu
n=${1:?usage: tail-trials.sh N OUT [KINDS]}
out=${2:?usage: tail-trials.sh N OUT [KINDS]}
kinds=${3:-slower stall aa}
here=$(cd "$(dirname "$0")" && pwd)
gcj=$(cd "$(dirname "${GCJITTER:-bin/gcjitter}")" && pwd)/$(basename "${GCJITTER:-bin/gcjitter}")
lock=${GCJITTER_LOCK:-/tmp/gcjitter-heavy.lock}
py=${PYTHON:-/usr/bin/python3}
mkdir -p "$out"
out=$(cd "$out" && pwd)
"$here/slower-collector.sh" 0 "$out/f0" "$py" >/dev/null
"$here/slower-collector.sh" 0.2 "$out/f20" "$py" >/dev/null
"$here/stall.sh" 0.03 0 "$out/s0" "$py" >/dev/null
stall=${STALL_MS:-6}
runs=${RUNS:-5}
"$here/stall.sh" 0.03 "$stall" "$out/s$stall" "$py" >/dev/null
[ -f "$out/trials.tsv" ] || printf 'kind\ttrial\texit\tseconds\tp99\tp99-no-gen2\tp99-rel\tregressed\n' >"$out/trials.tsv"
for t in $(seq "${FIRST:-1}" "$n"); do
	for k in $kinds; do
		case $k in
		slower) a=f0 b=f20 filter='^default$' ;;
		stall) a=s0 b=s$stall filter='^threshold' ;;
		aa) a=f0 b=f0 filter='^default$' ;;
		*) echo "tail-trials.sh: unknown kind $k (slower, stall, aa)" >&2; exit 2 ;;
		esac
		d=$out/$k-$t
		rm -rf "$d"
		mkdir -p "$d"
		# shellcheck disable=SC2016
		locked="flock $lock"
		[ "$lock" = none ] && locked=
		$locked sh -c 's=$(date +%s.%N); "$1" ab -a python="$2" -b python="$3" -runs "$7" -steps 200 -seed "$4" -census=false -filter "$5" -o "$6/res" ascend-gpt-periodic-gc >"$6/ab.out" 2>&1; echo $? >"$6/rc"; e=$(date +%s.%N); echo "$e - $s" | bc >"$6/seconds"' \
			sh "$gcj" "$out/$a/python" "$out/$b/python" "$t" "$filter" "$d" "$runs"
		label=$k
		[ "$k" = stall ] && label=stall-${stall}ms
		# ab reruns a disturbed session into res-rerunN: its verdicts are the last one's.
		res=$d/res
		for r in "$d"/res-rerun*; do [ -e "$r/ab.json" ] && res=$r; done
		"$py" - "$label" "$t" "$(cat "$d/rc")" "$(cat "$d/seconds")" "$res/ab.json" >>"$out/trials.tsv" <<'PY'
import json, sys
kind, trial, rc, secs, path = sys.argv[1:]
try:
    rows = json.load(open(path))["rows"]
except (OSError, ValueError, KeyError):
    rows = []
def cell(metric):
    for r in rows:
        if r["metric"] == metric:
            return "%s %+.1f%%" % (r["verdict"], 100 * r["change"])
    return "-"
bad = ",".join(r["metric"] for r in rows if r["verdict"] == "regressed")
print("\t".join([kind, trial, rc, "%.1f" % float(secs), cell("p99"), cell("p99-no-gen2"), cell("p99-rel"), bad or "-"]))
PY
		tail -1 "$out/trials.tsv"
	done
done
