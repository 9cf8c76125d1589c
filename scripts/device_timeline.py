#!/usr/bin/env python3
"""Draws the host and device timelines of a worker run made with
--emu-timeline FILE as an SVG: the host above (its steps, launches, GC
pauses and final sync waits), the device below (busy spans; idle time,
red where it falls inside a collection). Standard library only.

    device_timeline.py TIMELINE OUT.svg FIRST:LAST [FIRST:LAST ...]

Each FIRST:LAST is a panel of consecutive steps (inclusive)."""

import json
import sys

W, LANE, GAP, LEFT, TOP = 900, 26, 10, 70, 28
COL = {"work": "#d9d9d9", "gc": "#c0392b", "gc2": "#7b1f16", "sync": "#9db7d5",
       "busy": "#2e6da4", "idle_gc": "#e58e84", "launch": "#333333"}


def panel(steps, y, title):
    t_start, t_end = steps[0]["t0"], steps[-1]["t1"]
    span = float(t_end - t_start)
    x = lambda t: LEFT + (W - LEFT - 10) * (t - t_start) / span
    out = ['<text x="%d" y="%d" font-size="13" font-weight="bold">%s</text>' % (LEFT, y - 8, title)]
    hy, dy = y, y + LANE + GAP
    out.append('<text x="4" y="%d" font-size="12">host</text>' % (hy + 17))
    out.append('<text x="4" y="%d" font-size="12">device</text>' % (dy + 17))
    for s in steps:
        out.append('<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"/>' % (x(s["t0"]), hy, x(s["sync"]) - x(s["t0"]), LANE, COL["work"]))
        out.append('<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"/>' % (x(s["sync"]), hy, max(x(s["t1"]) - x(s["sync"]), 0.5), LANE, COL["sync"]))
        out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="black" stroke-width="1.5"/>' % (x(s["t0"]), hy - 4, x(s["t0"]), dy + LANE + 4))
        for t in s["launch"]:
            out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s"/>' % (x(t), hy + LANE - 7, x(t), hy + LANE, COL["launch"]))
        gcs = [(g0, g0 + p, gen) for g0, p, gen in s["gc"] if g0 >= s["t0"]]
        for g0, g1, gen in gcs:
            out.append('<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"><title>gen %d: %.1f ms</title></rect>' % (
                x(g0), hy, max(x(g1) - x(g0), 0.8), LANE, COL["gc2"] if gen == 2 else COL["gc"], gen, (g1 - g0) / 1e6))
        # Device: idle inside a collection first, busy spans over it.
        for g0, g1, _ in gcs:
            out.append('<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"/>' % (x(g0), dy, max(x(g1) - x(g0), 0.8), LANE, COL["idle_gc"]))
        for a, b in s["spans"]:
            out.append('<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"/>' % (x(a), dy, x(b) - x(a), LANE, COL["busy"]))
        out.append('<text x="%.1f" y="%d" font-size="10">step %d</text>' % (x(s["t0"]) + 3, dy + LANE + 14, s["i"]))
    ms = span / 1e6
    tick = 20 if ms > 100 else 10
    for k in range(0, int(ms) + 1, tick):
        out.append('<text x="%.1f" y="%d" font-size="9" fill="#555">%d ms</text>' % (x(t_start + k * 1e6), dy + LANE + 26, k))
    return out, dy + LANE + 40


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    steps = {}
    with open(argv[0]) as f:
        for line in f:
            r = json.loads(line)
            steps[r["i"]] = r
    body, y = [], TOP + 14
    for rng in argv[2:]:
        a, b = (int(v) for v in rng.split(":"))
        part = [steps[i] for i in range(a, b + 1)]
        pauses = [p for s in part for g0, p, gen in s["gc"] if gen == 2 and g0 >= s["t0"]]
        title = "steps %d-%d%s" % (a, b, ": full collection of %.1f ms" % (max(pauses) / 1e6) if pauses else "")
        out, y = panel(part, y + 14, title)
        body += out
    legend = [("host work", "work"), ("host waits at sync", "sync"), ("GC pause", "gc2"), ("device busy", "busy"), ("device idle in a GC pause", "idle_gc")]
    lx = LEFT
    for text, key in legend:
        body.append('<rect x="%d" y="%d" width="12" height="12" fill="%s"/><text x="%d" y="%d" font-size="11">%s</text>' % (lx, y, COL[key], lx + 16, y + 10, text))
        lx += 40 + 7 * len(text)
    svg = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif">' % (W, y + 24),
           '<rect width="100%" height="100%" fill="white"/>'] + body + ["</svg>"]
    with open(argv[1], "w") as f:
        f.write("\n".join(svg) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
