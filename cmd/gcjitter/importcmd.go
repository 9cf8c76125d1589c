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
	warmup := fs.Int("warmup", 2, "leading steps of each trace marked warm-up (left out of the figures)")
	spikeRule := spikeFactorFlag(fs)
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: gcjitter import -o DIR [flags] TRACE ...

Adds profiler traces to a results directory, one run of variant "imported"
each: Chrome-trace JSON (gzipped or not) from torch.profiler (Kineto, or the
legacy profiler's export_chrome_trace) or torch_npu's profiler
(ASCEND_PROFILER_OUTPUT/trace_view.json). Steps are the ProfilerStep#N
spans, else the time between Optimizer.step ends; collections are
torch_npu's GC events (gc_detect_threshold) or Kineto's "Python GC" events,
without generations: counted as gen-2 and marked so.

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
	for _, path := range fs.Args() {
		c, t, err := runner.ImportTrace(*out, *caseName, path, *warmup, rule, cli.Version())
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s: %s: %d steps (%s), %d collections, p50 %s, p99 %s\n", path, c.Run.ID, c.Summary.Steps, t.Format,
			len(t.GC), stats.MS(c.Summary.P50), stats.MS(c.Summary.P99))
	}
	return nil
}
