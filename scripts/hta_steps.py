#!/usr/bin/env python3
"""hta_steps.py TRACE...: the steps HolisticTraceAnalysis (PyPI
holistictraceanalysis) finds in each profiler trace, as JSON on stdout:
a peer reading the same files gcjitter import reads (runner's
TestHTAAgrees, in make matrix-stack; docs/trace.md has the table).

HTA reads a directory of rank traces; each trace is read alone, from a
directory holding only (a link to) it, so that one trace's rank does not
depend on the others'. Its steps are the host-side ProfilerStep#N spans
(stream -1: on the CPU; the gpu_user_annotation copies sit on device
streams) of the trace's first rank, counted as the iterations HTA assigns
the host's events, with the spans' durations in µs; read with and without
the last step (HTA's default leaves it out). A trace HTA cannot read is
reported with its error, not dropped.""" 
import contextlib, io, json, logging, os, re, sys, tempfile


def steps_of(path, include_last):
    from hta.trace_analysis import TraceAnalysis
    with tempfile.TemporaryDirectory() as d:
        name = os.path.basename(path)
        # HTA takes the rank from distributedInfo, else from nothing: a
        # name without one reads as rank 0 either way.
        os.symlink(os.path.abspath(path), os.path.join(d, name))
        # HTA prints its progress on stdout, which carries the JSON here.
        with contextlib.redirect_stdout(io.StringIO()):
            t = TraceAnalysis(trace_dir=d, include_last_profiler_step=include_last).t
        ranks = t.get_ranks()
        df = t.get_trace(ranks[0])
        sym = t.symbol_table.get_sym_table()
        names = df["name"].map(lambda i: sym[i])
        cats = df["cat"].map(lambda i: sym[i])
        # HTA's own steps: the iterations it assigned the host's events
        # (an event is in ProfilerStep#N when it starts within its span).
        host = df[~cats.str.startswith("gpu_") & (df["stream"] < 0)]
        iterations = sorted({int(i) for i in host["iteration"] if i >= 0})
        spans = host[names.map(lambda n: re.fullmatch(r"ProfilerStep#\d+", n) is not None)].sort_values("ts")
        return {"rank": int(ranks[0]), "steps": len(iterations),
                "steps_us": [round(float(x), 3) for x in spans["dur"]]}


def main(paths):
    logging.disable(logging.CRITICAL)
    out = []
    for p in paths:
        row = {"file": p}
        # HTA leaves out the last ProfilerStep by default (it may be cut
        # short): both readings, so the difference is seen as that.
        for key, last in (("all", True), ("default", False)):
            try:
                row[key] = steps_of(p, last)
            except Exception as e:  # a file HTA cannot read is a finding
                row[key] = {"error": "%s: %s" % (type(e).__name__, e)}
        out.append(row)
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main(sys.argv[1:])
