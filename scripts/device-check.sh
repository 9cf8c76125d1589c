#!/bin/bash
# device-check.sh: what a session lent an accelerator host (one NVIDIA GPU,
# a newer CPython and torch) runs there, as one script, since device time is
# short: this host's speed against golden/ci-cpu's, the CPU path at the
# size a CI host runs (the worker's p50 beside the calibration's ratio), the
# heap census on that CPython (two hash seeds must agree exactly), the CUDA
# path, and torchrun with 4 ranks (gloo). Needs bin/gcjitter built for
# x86-64 (carry it). Writes a few files under $OUT.
set -u
OUT=${OUT:-/tmp/device-check}
mkdir -p "$OUT"
G=$PWD/bin/gcjitter
py=$(command -v python3)
work=$(mktemp -d)
sum=$OUT/summary.txt
say() { echo "== $*" >>"$sum"; }
keep() { cp "$work/$1/manifest.json" "$OUT/$1-manifest.json" 2>/dev/null; cp "$work/$1.log" "$OUT/" 2>/dev/null; }

say host
{ nproc; grep -m1 'model name' /proc/cpuinfo
  "$py" -c 'import sys, torch; print(sys.version.split()[0], torch.__version__, torch.cuda.is_available(), torch.cuda.get_device_name(0) if torch.cuda.is_available() else "")'
  command -v torchrun; } >>"$sum" 2>&1
say "system against golden/ci-cpu"
"$G" system -host-class ci-cpu 2>&1 | grep -E 'host speed|speed against|differs' >>"$sum"

say "cpu path: ascend-gpt-periodic-gc and smoke, 2 runs x 120 steps"
timeout 150 "$G" run -python "$py" -device cpu -runs 2 -steps 120 -o "$work/cpu" ascend-gpt-periodic-gc smoke >"$work/cpu.log" 2>&1
echo "exit $?" >>"$sum"; keep cpu

say "census on this CPython: two hash seeds"
for s in 1 2; do
  PYTHONHASHSEED=$s timeout 45 "$G" worker -python "$py" -device cpu -model gpt -hidden 128 -layers 2 -heads 4 -seq 64 -vocab 512 \
    -batch 4 -threads 1 -garbage ring+traceback -long-lived 200000 -retain 8 -steps 80 -warmup 10 -census -o "$work/census$s.jsonl" >/dev/null 2>&1
  "$py" -c '
import json, sys
n, w = [0, 0, 0], [0, 0, 0]
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("type") == "step" and not r["warmup"]:
        for e in r["gc"]:
            n[e["gen"]] += 1; w[e["gen"]] += e.get("objects", 0)
print("seed", sys.argv[2], "collections", n, "walked", w)' "$work/census$s.jsonl" $s >>"$sum" 2>&1
done

say "cuda path: ascend-gpt-periodic-gc, 2 runs x 100 steps"
timeout 110 "$G" run -python "$py" -device cuda -runs 2 -steps 100 -o "$work/cuda" ascend-gpt-periodic-gc >"$work/cuda.log" 2>&1
echo "exit $?" >>"$sum"; keep cuda

say "torchrun: 4 ranks (gloo), 60 steps"
cat >"$work/tr.yaml" <<'YAML'
name: torchrun-four
workload: {model: mlp, hidden: 256, threads: 1, device: cpu}
garbage: {pattern: ring, cycles: 50, objects: 4, long_lived: 20000, retain: 2}
ranks: 4
launcher: torchrun
steps: 60
warmup: 2
runs: 1
variants:
  - policy: default
  - policy: manual:20
YAML
(cd "$work" && timeout 90 "$G" run -python "$py" -o "$work/tr" tr.yaml >"$work/tr.log" 2>&1; echo "exit $?" >>"$sum")
keep tr
grep -hE 'ok, p50|failed' "$work"/*.log >>"$sum"
