#!/bin/bash
# warm-cold-suite.sh OUT: issue #47's check of what the warm worker saves,
# the quick suite's cases one `gcjitter run` each, warm and -cold, the
# order alternating case by case (a host whose speed moves through the
# day weighs on both), without advise rounds (what they add depends on
# what the runs measured). Each case's command under the shared heavy
# lock, timed inside it. Prints per case and in all: runs, the command's
# wall time, the step records' time (timed + warm-up; a multi-rank run's
# slowest rank), and the rest (interpreter and torch start-up, the
# reset, the harness, the report). GCJITTER (bin/gcjitter), PYTHON
# (/usr/bin/python3), GCJITTER_LOCK (/tmp/gcjitter-heavy.lock).
set -eu
out=${1:?usage: warm-cold-suite.sh OUT}
gcjitter=${GCJITTER:-bin/gcjitter}
python=${PYTHON:-/usr/bin/python3}
lock=${GCJITTER_LOCK:-/tmp/gcjitter-heavy.lock}
mkdir -p "$out"
: >"$out/times"
i=0
for c in $("$gcjitter" cases list | awk 'NR > 1 && $2 ~ /quick/ {print $1}'); do
  order="warm cold"
  [ $((i % 2)) = 0 ] || order="cold warm"
  for m in $order; do
    flag=""
    [ "$m" = warm ] || flag=-cold
    flock "$lock" sh -c '
      s=$(date +%s%N)
      "$1" run -python "$2" $3 -advise-budget 0 -o "$4/$5/$6" "$6" >"$4/$5-$6.out" 2>&1 && rc=0 || rc=$?
      echo "$6 $5 $rc $(( $(date +%s%N) - s ))" >>"$4/times"' \
      sh "$gcjitter" "$python" "$flag" "$out" "$m" "$c"
  done
  i=$((i + 1))
done
"$python" - "$out" <<'EOF'
import glob, json, os, re, sys

out = sys.argv[1]
wall = {}
for line in open(os.path.join(out, "times")):
    case, mode, rc, ns = line.split()
    if rc != "0":
        print(f"{case} {mode}: exit {rc}, see {out}/{mode}-{case}.out")
    wall[case, mode] = int(ns) / 1e9
for mode in ("warm", "cold"):
    total = [0, 0.0, 0.0]
    for case in sorted(c for c, m in wall if m == mode):
        runs = {}  # a run: its slowest rank's step time
        for f in glob.glob(f"{out}/{mode}/{case}/runs/*/*/*.jsonl"):
            if ".global." in f:
                continue
            ns = sum(json.loads(l)["ns"] for l in open(f) if '"type":"step"' in l)
            key = re.sub(r"\.rank\d+", "", f)
            runs[key] = max(runs.get(key, 0), ns)
        steps = sum(runs.values()) / 1e9
        w = wall[case, mode]
        print(f"{mode} {case}: {len(runs)} runs, {w:.1f} s, steps {steps:.1f} s, rest {w - steps:.1f} s")
        total = [total[0] + len(runs), total[1] + w, total[2] + steps]
    print(f"{mode}, all: {total[0]} runs, {total[1]:.1f} s, steps {total[2]:.1f} s, rest {total[1] - total[2]:.1f} s")
EOF
