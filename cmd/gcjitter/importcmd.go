package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/gcjitter/gcjitter/internal/cli"
	"github.com/gcjitter/gcjitter/runner"
	"github.com/gcjitter/gcjitter/stats"
)

func cmdImport(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("gcjitter import", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "results directory to add the runs to (created if needed)")
	caseName := fs.String("case", "", "case name of the runs (default: the first trace's file name)")
	warmup := fs.Int("warmup", runner.ImportWarmup, "leading steps of each trace marked warm-up (left out of the figures); a profiler's schedule already left out its own")
	spikeRule := spikeFactorFlag(fs)
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: gcjitter import -o DIR [flags] TRACE ...

Adds profiler traces to a results directory as runs of variant "imported":
Chrome-trace JSON (gzipped or not) from torch.profiler (Kineto, or the
legacy profiler's export_chrome_trace) or torch_npu's profiler
(ASCEND_PROFILER_OUTPUT/trace_view.json). Steps are the host-side
ProfilerStep#N spans, else the time between host-side Optimizer.step ends;
collections are torch_npu's GC events (gc_detect_threshold) or Kineto's
"Python GC" events, without generations: those whose pauses stand 40x or
more above all the others' count as full (gen 2), the rest as young (gen 0:
never a young collection called full), all marked gen_inferred.
Traces that name distinct ranks of one job (Kineto's distributedInfo, or
rank-N / workerN in the file name) make one multi-rank run; any other trace
is a run of its own, the processes of a merged trace its ranks. All or
nothing: when one trace fails, the results directory is left as it was.

`)
		fs.PrintDefaults()
	}
	if done, err := cli.ParseFlags(fs, args); done {
		return err
	}
	switch {
	case *out == "" || fs.NArg() == 0:
		fs.Usage()
		return cli.Silent(cli.Usage)
	case *warmup < 0:
		return cli.Usagef("-warmup must be >= 0")
	}
	rule, err := spikeRule()
	if err != nil {
		return err
	}
	if *caseName == "" {
		base := filepath.Base(fs.Arg(0))
		*caseName = strings.NewReplacer(".json", "", ".gz", "", ".pt.trace", "").Replace(base)
	}
	runs, err := runner.ImportTraces(*out, *caseName, fs.Args(), *warmup, rule, cli.Version())
	if err != nil {
		return err
	}
	for _, r := range runs {
		var names []string
		collections, between := 0, 0
		for _, t := range r.Traces {
			names = append(names, t.Path)
			collections += t.Collections
			between += t.Between()
		}
		fmt.Fprintf(stdout, "%s: %s: %s%s (%s), %s, p50 %s, p99 %s\n", strings.Join(names, ", "), r.Run.ID, ranksOf(r),
			plural(r.Summary.Steps, "step"), r.Traces[0].Format, collectionsOf(r, collections, between), stats.MS(r.Summary.P50), stats.MS(r.Summary.P99))
	}
	return nil
}

// ranksOf says where a multi-rank run's ranks came from ("" for one rank).
func ranksOf(r *runner.ImportedRun) string {
	t := r.Traces[0]
	switch {
	case r.Run.Ranks <= 1:
		return ""
	case len(r.Traces) == 1:
		return fmt.Sprintf("%d processes as ranks, ", len(t.Procs))
	case t.WorldSize > 0:
		return fmt.Sprintf("%d ranks of %d (%s), ", r.Run.Ranks, t.WorldSize, t.RankFrom)
	}
	return fmt.Sprintf("%d ranks (%s), ", r.Run.Ranks, t.RankFrom)
}

// collectionsOf counts the trace's collections and says where those not
// inside a step went.
func collectionsOf(r *runner.ImportedRun, all, between int) string {
	s := plural(all, "collection")
	var where []string
	if between > 0 {
		where = append(where, fmt.Sprintf("%d between steps, kept", between))
	}
	outside := 0
	for _, t := range r.Traces {
		outside += t.Outside
	}
	if outside > 0 {
		where = append(where, fmt.Sprintf("%d before the first step or after the last, left out", outside))
	}
	if len(where) > 0 {
		s += " (" + strings.Join(where, "; ") + ")"
	}
	return s
}

// plural is "1 step", "2 steps".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
