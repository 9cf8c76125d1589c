#!/bin/bash
# The README's gate beside two busy loops, N trials (issue #46's known
# truth): each trial holds the shared heavy lock for itself alone (others
# get turns between trials), starts two busy loops, runs
#   BIN gate -host-class ci-cpu [FLAGS] -o OUT/tI smoke ascend-gpt-periodic-gc
# and kills the loops. Then, outside the lock, the session it judged (its
# rerun's where it reran) is judged again against a planted schedule change:
# a copy of golden/ci-cpu with ascend-gpt-periodic-gc's default gen-0
# count +1 (gate -golden COPY -from DIR), which must fail.
# One line a trial in OUT/trials.log: exit codes, wall time, whether it
# reran, the rows read regressed and undecided, and the warnings.
#
# usage: scripts/busy-gate-trials.sh N OUT [BIN [gate flags...]]
# (run from the repository root; GCJITTER_PYTHON as for any gate).
# BUDGET_S: stop before a trial that would take the lock-held time of all
# trials past this many seconds (judging by the last trial's).
# TIMEOUT_S: a trial's gate is killed after this many seconds (default
# 900; at 540 a slower host's gate beside the loops was killed at its
# 67th and last run, exit 124).
set -u
n=$1 out=$2 bin=${3:-bin/gcjitter}
shift $(( $# < 3 ? $# : 3 ))
mkdir -p "$out"
planted=$out/golden-planted
if [ ! -d "$planted/ci-cpu" ]; then
	mkdir -p "$planted" && cp -r golden/ci-cpu "$planted/"
	python3 - "$planted/ci-cpu/ascend-gpt-periodic-gc.json" <<'EOF'
import json, sys
p = sys.argv[1]
g = json.load(open(p))
v = next(v for v in g["variants"] if v["name"] == "default")
v["schedule"]["collections"][0] += 1
json.dump(g, open(p, "w"), indent=1)
EOF
fi
log=$out/trials.log
held=0 wall=0
for i in $(seq 1 "$n"); do
	if [ -n "${BUDGET_S:-}" ] && [ $((held + wall)) -gt "$BUDGET_S" ]; then
		echo "stopped before trial $i: $held s of lock held, the budget is $BUDGET_S s" >>"$log"
		break
	fi
	t=$out/t$i
	rm -rf "$t" "$t-rerun1"
	T=$t flock /tmp/gcjitter-heavy.lock bash -c '
		sh -c "while :; do :; done" & b1=$!
		sh -c "while :; do :; done" & b2=$!
		s=$(date +%s); timeout "${TIMEOUT_S:-900}" "$@"; rc=$?
		kill $b1 $b2
		echo $(( $(date +%s) - s )) >"$T.wall"
		exit $rc' _ "$bin" gate -host-class ci-cpu "$@" -o "$t" smoke ascend-gpt-periodic-gc >"$t.out" 2>"$t.err"
	rc=$?
	wall=$(cat "$t.wall")
	held=$((held + wall))
	judged=$t; [ -d "$t-rerun1" ] && judged=$t-rerun1
	"$bin" gate -golden "$planted" -host-class ci-cpu "$@" -from "$judged" smoke ascend-gpt-periodic-gc >"$t.planted.out" 2>"$t.planted.err"
	prc=$?
	printf 'trial %d %s: unchanged exit %d in %d s (lock held), reran %s, rows regressed %d, undecided host busy %d; planted gen-0 +1 exit %d (%s)\n' \
		"$i" "$(date -u +%H:%M)" "$rc" "$wall" "$([ "$judged" != "$t" ] && echo yes || echo no)" \
		"$(grep -c '^regressed:' "$t.out")" "$(grep -c 'undecided: host busy' "$t.out")" "$prc" \
		"$(grep -h -m1 -o 'GC schedule changed in the same environment' "$t.planted.out")" >>"$log"
	grep -h 'timing reported only\|timing undecided\|disturbed' "$t.err" | cut -c1-400 | sed 's/^/    /' >>"$log"
done
