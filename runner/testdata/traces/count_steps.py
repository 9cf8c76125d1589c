#!/usr/bin/env python3
"""Counts the steps of the corpus traces without gcjitter, for
expected.json: python3 count_steps.py > expected.json (run in this
directory; standard library only).

A step is a host-side ProfilerStep#N span (category not gpu_*, which are
the device-side copies), per process (pid); a trace without them steps
from one host-side Optimizer.step#... span's end to the next one's end.
Times are the trace's own (µs, numbers or strings)."""
import glob, gzip, json, os, re, sys

def load(path):
    raw = open(path, "rb").read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    d = json.loads(raw)
    return (d, d["traceEvents"]) if isinstance(d, dict) else ({}, d)

def host_spans(events, test):
    by_pid = {}
    for e in events:
        if not isinstance(e, dict) or e.get("ph") != "X" or str(e.get("cat", "")).startswith("gpu_"):
            continue
        if test(e.get("name", "")):
            ts, dur = float(e["ts"]), float(e.get("dur", 0))
            by_pid.setdefault(str(e.get("pid")), set()).add((ts, ts + dur))
    return {pid: sorted(s) for pid, s in by_pid.items()}

def count(path):
    top, events = load(path)
    info = top.get("distributedInfo") or {}
    rank = info.get("rank")
    if rank is None:
        m = re.search(r"(?:rank|worker)[-_]?(\d+)", os.path.basename(path))
        rank = int(m.group(1)) if m else None
    procs = host_spans(events, lambda n: re.fullmatch(r"ProfilerStep#\d+", n))
    fmt = "ProfilerStep"
    if not procs:
        fmt = "Optimizer.step"
        opt = host_spans(events, lambda n: n.startswith("Optimizer.step#"))
        procs = {pid: [(a[1], b[1]) for a, b in zip(s, s[1:])] for pid, s in opt.items()}
    gc = sum(1 for e in events if isinstance(e, dict) and e.get("ph") == "X" and
             ((e.get("name") == "GC" and e.get("cat") == "GC") or e.get("name") == "Python GC"))
    return {"file": path, "format": fmt, "rank": rank, "world_size": info.get("world_size"),
            "processes": [{"pid": pid, "steps_us": [round(b - a, 3) for a, b in s]} for pid, s in sorted(procs.items())],
            "gc": gc}

files = sorted(glob.glob("*/*.json") + glob.glob("*/*.json.gz"))
json.dump([count(p) for p in files], sys.stdout, indent=1)
print()
