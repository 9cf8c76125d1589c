// gcjitter's interactive charts: drawn with uPlot from the JSON the page
// carries (id gcjitter-data). Nothing is fetched. Without scripts the
// page's static SVG figures stay; with them, these charts replace them.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("gcjitter-data").textContent);
  document.documentElement.classList.add("js");
  var GEN_COLORS = ["#777777", "#9a3cbe", "#c81414"];
  var NINES = [[0, "min"], [Math.log10(2), "p50"], [1, "p90"], [2, "p99"], [3, "p99.9"], [4, "p99.99"], [5, "p99.999"], [6, "p99.9999"], [7, "p99.99999"]];
  var charts = {};
  window.gcjitter = { data: data, charts: charts };

  function fmtMs(v) {
    if (v == null || isNaN(v)) return "-";
    var a = Math.abs(v);
    return (a >= 100 ? v.toFixed(0) : a >= 10 ? v.toFixed(1) : a >= 1 ? v.toFixed(2) : v.toFixed(3)) + " ms";
  }
  function fmtStep(v) { return Math.round(v).toLocaleString("en-US"); }
  function gens(bits) {
    var out = [];
    for (var g = 0; g < 3; g++) if (bits & (1 << g)) out.push(g);
    return out.length ? "gen-" + out.join("+") : "";
  }
  // A chart fills its box; in a .pair (the timeline beside memory, its
  // price) each takes half where the page is wide enough for both.
  function chartWidth(el) {
    var w = el.clientWidth || 1100;
    if (el.classList && el.classList.contains("pair") && w >= 2 * 440 + 8) return Math.floor((w - 8) / 2) - 4;
    return Math.max(420, w - 8);
  }
  // A points-only series: GC markers.
  function markerSeries(label, color, size) {
    return { label: label, stroke: color, fill: color, width: 0, paths: function () { return null; },
      points: { show: true, size: size, stroke: color, fill: color } };
  }
  // A time axis: its labels ("12.5 ms") need room, horizontally most.
  // A time scale: logarithmic when the group's range asks for it, with a
  // little room around the data rather than whole decades.
  function timeScale(g) {
    if (!g.logTime) return { time: false };
    return { time: false, distr: 3, range: function (u, min, max) { return [min / 1.15, max * 1.15]; } };
  }
  function timeAxis(label) {
    return { label: label, size: 84, space: 70, values: function (u, vals) { return vals.map(function (v) { return v == null ? "" : fmtMs(v); }); } };
  }

  // Wheel zooms the x range around the cursor, shift+wheel (or a
  // sideways wheel) pans it; drag selects a range; double-click resets.
  function wheelZoomPan(u, lo, hi) {
    u.over.addEventListener("wheel", function (e) {
      e.preventDefault();
      var min = u.scales.x.min, max = u.scales.x.max, range = max - min, nmin, nmax;
      var sideways = e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY);
      if (sideways) {
        var d = ((e.shiftKey ? e.deltaY : e.deltaX) > 0 ? 1 : -1) * range * 0.2;
        nmin = Math.max(lo, Math.min(hi - range, min + d));
        nmax = nmin + range;
      } else {
        var at = u.posToVal(e.clientX - u.over.getBoundingClientRect().left, "x");
        var f = e.deltaY < 0 ? 0.7 : 1 / 0.7;
        nmin = Math.max(lo, at - (at - min) * f);
        nmax = Math.min(hi, at + (max - at) * f);
      }
      if (nmax - nmin >= 2) u.setScale("x", { min: nmin, max: nmax });
    }, { passive: false });
  }

  function timeline(box, g) {
    var x = g.x, cols = [x], series = [{ label: "step", value: function (u, v) { return v == null ? "-" : fmtStep(v); } }], info = [null];
    g.sides.forEach(function (side, si) {
      side.runs.forEach(function (run, ri) {
        series.push({ label: side.label + " run " + (ri + 1), stroke: side.color, width: 1, spanGaps: false,
          value: function (u, v) { return fmtMs(v); }, points: { show: false } });
        cols.push(run.y);
        var gc = {};
        (run.gc || []).forEach(function (r) { gc[r[0]] = r; });
        info.push({ side: side.label, run: ri + 1, steps: run.s, gc: gc });
      });
    });
    for (var gen = 2; gen >= 0; gen--) {
      var m = g.marks[gen];
      if (!m) continue;
      series.push(markerSeries("gen-" + gen + " collection", GEN_COLORS[gen], [5, 7, 9][gen]));
      cols.push(m.y);
      var det = {};
      m.d.forEach(function (r) { det[r[0]] = r; });
      info.push({ marker: gen, det: det });
    }
    var drawn = g.sides.filter(function (s) { return s.runs.length; }).map(function (s) { return s.label; });
    var fig = document.createElement("figure");
    fig.className = "timeline";
    var cap = document.createElement("figcaption");
    fig.appendChild(cap);
    box.appendChild(fig);
    var tip = document.createElement("div");
    tip.className = "tip";
    var range = document.createElement("div");
    range.className = "range";
    var lo = x[0], hi = x[x.length - 1] + g.bucket;
    function caption(u) {
      var a = Math.max(0, Math.round(u.scales.x.min)), b = Math.min(g.steps, Math.round(u.scales.x.max));
      range.textContent = "showing steps " + fmtStep(a) + " to " + fmtStep(b) + " of " + fmtStep(g.steps) +
        (g.bucket > 1 ? " (each bucket of " + fmtStep(g.bucket) + " steps drawn by its fastest and slowest step)" : "");
      fig.dataset.min = a;
      fig.dataset.max = b;
    }
    function describe(u, i, idx) {
      var s = info[i], v = u.data[i][idx];
      if (s.marker != null) {
        var r = s.det[idx];
        if (!r) return "";
        var side = g.sides[r[1]];
        return "gen-" + s.marker + " collection · " + side.label + " run " + (r[2] + 1) + " · step " + fmtStep(r[3]) +
          " · step time " + fmtMs(v) + " · pause " + fmtMs(r[4]) + " · collected " + fmtStep(r[5]);
      }
      // Bucketed: the slot's step is its bucket's start plus its offset.
      var step = s.steps ? Math.floor(idx / 2) * g.bucket + s.steps[idx] : u.data[0][idx];
      var text = s.side + " run " + s.run + " · step " + fmtStep(step) + " · step time " + fmtMs(v);
      var gc = s.gc[idx];
      text += gc ? " · " + gens(gc[1]) + " collection · pause " + fmtMs(gc[2]) + " · collected " + fmtStep(gc[3]) : " · no collection";
      return text;
    }
    var opts = {
      width: chartWidth(box), height: 300,
      title: "step time of every run" + (drawn.length > 2 ? ", every policy overlaid" : drawn.length > 1 ? ", " + drawn.join(" and ") + " overlaid" : " of " + drawn[0]),
      scales: { x: { time: false }, y: timeScale(g) },
      axes: [{ label: "step", values: function (u, vals) { return vals.map(fmtStep); } }, timeAxis("step time")],
      series: series,
      legend: { live: false },
      cursor: { drag: { x: true, y: false }, points: { show: false } },
      hooks: {
        ready: [function (u) { u.over.appendChild(tip); caption(u); }],
        setScale: [function (u, key) { if (key === "x") caption(u); }],
        setCursor: [function (u) {
          var left = u.cursor.left, top = u.cursor.top;
          if (u.cursor.idx == null || top == null || top < 0) { tip.style.display = "none"; return; }
          // The point nearest the pointer within a few pixels either side,
          // so a one-step spike is found without pixel-exact aim.
          var xs = u.data[0], from = u.posToIdx(Math.max(0, left - 6)), to = u.posToIdx(left + 6);
          var best = -1, idx = u.cursor.idx, bestDist = 1e9;
          for (var j = Math.max(0, from); j <= Math.min(xs.length - 1, to); j++) {
            var dx = u.valToPos(xs[j], "x") - left;
            for (var i = 1; i < u.series.length; i++) {
              var v = u.data[i][j];
              if (v == null || !u.series[i].show) continue;
              var dy = u.valToPos(v, "y") - top;
              var d = Math.sqrt(dx * dx + dy * dy);
              // A marker wins a tie with the line it sits on: it says more.
              if (info[i].marker != null) d -= 3;
              if (d < bestDist) { best = i; idx = j; bestDist = d; }
            }
          }
          var text = best > 0 ? describe(u, best, idx) : "";
          tip.textContent = text;
          tip.style.display = text ? "block" : "none";
          if (text) {
            // Right of the pointer, or left of it in the right half.
            tip.style.left = (left < u.over.clientWidth / 2 ? left + 12 : Math.max(0, left - 12 - tip.offsetWidth)) + "px";
            tip.style.top = Math.max(0, top - 44) + "px";
          }
        }]
      }
    };
    var u = new uPlot(opts, cols, fig);
    fig.appendChild(range);
    var hint = document.createElement("div");
    hint.className = "hint";
    hint.textContent = "drag to zoom · wheel zooms · shift+wheel pans · double-click resets · hover a step for its collections";
    fig.appendChild(hint);
    wheelZoomPan(u, lo, hi);
    return u;
  }

  function fmtMiB(v) {
    if (v == null || isNaN(v)) return "-";
    return v >= 1024 ? (v / 1024).toFixed(2) + " GiB" : v.toFixed(0) + " MiB";
  }

  // memory: every run's RSS on the timeline's steps, with its full
  // collections on it: default's sawtooth (each frees the cyclic garbage)
  // beside disabled's ramp (nothing ever does). Young collections, every
  // few steps, would only hide the lines.
  function memory(box, g) {
    var cols = [g.x], series = [{ label: "step", value: function (u, v) { return v == null ? "-" : fmtStep(v); } }];
    var marks = null, any = false;
    g.sides.forEach(function (side) {
      side.runs.forEach(function (run, ri) {
        if (!run.m) return;
        any = true;
        series.push({ label: side.label + " run " + (ri + 1), stroke: side.color, width: 1.4, spanGaps: true,
          value: function (u, v) { return fmtMiB(v); }, points: { show: false } });
        cols.push(run.m);
        (run.gc || []).forEach(function (r) {
          if (!(r[1] & 4) || run.m[r[0]] == null) return;
          if (!marks) marks = g.x.map(function () { return null; });
          if (marks[r[0]] == null) marks[r[0]] = run.m[r[0]];
        });
      });
    });
    if (!any) return null;
    if (marks) {
      series.push(markerSeries("gen-2 collection", GEN_COLORS[2], 8));
      cols.push(marks);
    }
    var fig = document.createElement("figure");
    fig.className = "memory";
    box.appendChild(fig);
    var u = new uPlot({
      width: chartWidth(box), height: 300, title: "memory: RSS of every run, with its full collections",
      scales: { x: { time: false }, y: { time: false } },
      axes: [{ label: "step", values: function (u, vals) { return vals.map(fmtStep); } },
        { label: "RSS", size: 84, values: function (u, vals) { return vals.map(function (v) { return v == null ? "" : fmtMiB(v); }); } }],
      series: series, cursor: { drag: { x: true, y: false }, points: { show: false } }
    }, cols, fig);
    wheelZoomPan(u, g.x[0], g.x[g.x.length - 1] + g.bucket);
    return u;
  }

  function ninesAxis() {
    return {
      label: "quantile (nines: p90, p99, p99.9, ...)",
      splits: function (u, ai, min, max) { return NINES.map(function (n) { return n[0]; }).filter(function (v) { return v >= min && v <= max; }); },
      values: function (u, vals) { return vals.map(function (v) { var n = NINES.find(function (t) { return Math.abs(t[0] - v) < 1e-9; }); return n ? n[1] : ""; }); }
    };
  }

  // tails: each side's quantile function to its slowest step, on the
  // nines axis; the same y scale for every side.
  function tails(box, g) {
    var tables = [], series = [{ label: "quantile", value: function (u, v) { return v == null ? "-" : "q = " + (1 - Math.pow(10, -v)).toPrecision(6); } }];
    g.sides.forEach(function (side) {
      tables.push([side.tailX, side.tailY]);
      series.push({ label: side.label + " (" + fmtStep(side.steps) + " steps" + (side.sketch ? ", from its sketch" : "") + ")", stroke: side.color, width: 1.6,
        dash: side.sketch ? [6, 4] : undefined, spanGaps: true, value: function (u, v) { return fmtMs(v); }, points: { show: false } });
    });
    var fig = document.createElement("figure");
    fig.className = "tails";
    box.appendChild(fig);
    return new uPlot({
      width: chartWidth(box), height: 280, title: "tail: step-time quantiles to the slowest step, all runs pooled",
      scales: { x: { time: false }, y: timeScale(g) },
      axes: [ninesAxis(), timeAxis("step time")], series: series,
      cursor: { drag: { x: true, y: false } }
    }, uPlot.join(tables), fig);
  }

  // ecdf: the share of steps at or below each time.
  function ecdf(box, g) {
    var tables = [], series = [{ label: "step time", value: function (u, v) { return fmtMs(v); } }];
    g.sides.forEach(function (side) {
      tables.push([side.tailY, side.tailX.map(function (n) { return 1 - Math.pow(10, -n); })]);
      series.push({ label: side.label, stroke: side.color, width: 1.6, dash: side.sketch ? [6, 4] : undefined, spanGaps: true,
        value: function (u, v) { return v == null ? "-" : (100 * v).toFixed(2) + "%"; }, points: { show: false } });
    });
    var fig = document.createElement("figure");
    fig.className = "ecdf";
    box.appendChild(fig);
    return new uPlot({
      width: chartWidth(box), height: 240, title: "ECDF: share of steps at or below a step time",
      scales: { x: timeScale(g), y: { range: [0, 1] } },
      axes: [timeAxis("step time"), { label: "share of steps", values: function (u, vals) { return vals.map(function (v) { return (100 * v).toFixed(0) + "%"; }); } }],
      series: series, cursor: { drag: { x: true, y: false } }
    }, uPlot.join(tables), fig);
  }

  // hist: share of steps per bin, on a log count axis so the rare slow
  // steps are as visible as the common ones.
  function hist(box, g) {
    var sides = g.sides.filter(function (s) { return s.hist; });
    if (!sides.length || !g.edges) return null;
    // An empty bin has no place on a log axis: it is drawn at the floor,
    // half the share of one step of the largest side.
    var floor = 0.5 / Math.max.apply(null, sides.map(function (s) { return s.steps; }));
    var cols = [g.edges], series = [{ label: "step time", value: function (u, v) { return fmtMs(v); } }];
    sides.forEach(function (side) {
      cols.push(side.hist.map(function (v) { return Math.max(v, floor); }).concat([floor]));
      series.push({ label: side.label, stroke: side.color, width: 1.4, paths: uPlot.paths.stepped({ align: 1 }),
        value: function (u, v) { return v == null || v <= floor ? "0" : (100 * v).toPrecision(3) + "%"; }, points: { show: false } });
    });
    var fig = document.createElement("figure");
    fig.className = "hist";
    box.appendChild(fig);
    return new uPlot({
      width: chartWidth(box), height: 240, title: "histogram to the slowest step (share of steps, log axis)",
      scales: { x: timeScale(g), y: { distr: 3, range: function (u, min, max) { return [floor, Math.max(max, 2 * floor)]; } } },
      axes: [timeAxis("step time"), { label: "share of steps", values: function (u, vals) { return vals.map(function (v) { return v == null ? "" : (100 * v).toPrecision(2) + "%"; }); } }],
      series: series, cursor: { drag: { x: true, y: false } }
    }, cols, fig);
  }

  data.groups.forEach(function (g) {
    var box = document.getElementById(g.id);
    if (!box) return;
    var made = { tails: tails(box, g), ecdf: ecdf(box, g), hist: hist(box, g) };
    if (g.x && g.x.length) {
      // The timeline reads first, memory, its price, beside it.
      var pair = document.createElement("div");
      var hasMemory = g.sides.some(function (s) { return s.runs.some(function (r) { return r.m; }); });
      pair.className = hasMemory ? "pair" : "";
      box.insertBefore(pair, box.firstChild);
      made.timeline = timeline(pair, g);
      made.memory = memory(pair, g);
    }
    charts[g.id] = made;
  });
  // Milliseconds from navigation to charts drawn and listening: what the
  // page benchmark reports.
  document.body.dataset.chartsMs = performance.now().toFixed(0);
  document.body.dataset.charts = "ready";
})();
