#!/usr/bin/env python3
# The table of scripts/busy-gate-trials.sh OUT: one Markdown row a trial
# (exit codes, lock-held time, the session's speed against smoke's and
# ascend's baselines, the load the gate measured, rows regressed and
# undecided, the schedule check unchanged and planted).
# A session judged again against the planted copy by a later build, into
# OUT/tI.planted-fixed.out, adds its exit in brackets.
# usage: scripts/busy-gate-table.py OUT
import re,sys,glob,os
out=sys.argv[1]
log=open(f"{out}/trials.log").read()
rcs={int(a):(b,c) for a,b,c in re.findall(r"^trial (\d+) .*?unchanged exit (\d+) .*planted gen-0 \+1 exit (\d+)",log,re.M)}
i=1
while os.path.exists(f"{out}/t{i}.out"):
    t=f"{out}/t{i}"
    if not os.path.exists(t+".wall"): break
    o=open(t+".out").read(); e=open(t+".err").read()
    po=open(t+".planted.out").read() if os.path.exists(t+".planted.out") else ""
    wall=open(t+".wall").read().strip()
    m=re.search(r"timing undecided: host busy: other processes kept up to ([0-9.]+) of the host's 2 CPUs busy \(over 0.50\) during (\d+) of (\d+) runs(; the host's speed moved (\d+)%)?",e)
    spd=re.findall(r"runs the calibration at ([0-9.]+x) the baseline's speed \[([0-9.]+x), ([0-9.]+x)\]",e)
    und=len(re.findall(r"^unknown: .*undecided: host busy",o,re.M))
    was=len(re.findall(r"^unknown: .*undecided: host busy.*\(was regressed\)",o,re.M))
    reg=len(re.findall(r"^regressed:",o,re.M))
    sched="unchanged" if o.count("GC schedule: unchanged")>=2 else "?"
    pl="changed" if "GC schedule changed in the same environment" in po else "?"
    rc,prc=rcs.get(i,("?","?"))
    if os.path.exists(t+".planted-fixed.out"):
        fixed=open(t+".planted-fixed.out").read()
        prc+=" [%s]"%("1" if "GC schedule changed in the same environment" in fixed else "0?")
    print(f"| {i} | {rc} | {prc} | {wall} s | {'rerun' if os.path.exists(t+'-rerun1') else 'no rerun'} | {spd[-2][0] if len(spd)>=2 else '?'}/{spd[-1][0] if spd else '?'} | {m.group(1) if m else '-'} CPUs, {m.group(2) if m else '-'} of {m.group(3) if m else '-'} runs, speed moved {m.group(5) if m and m.group(5) else '-'}% | {reg} | {und} ({was} read regressed) | {sched} | {pl} |")
    i+=1
