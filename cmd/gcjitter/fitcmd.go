package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gcjitter/gcjitter/bench"
	"github.com/gcjitter/gcjitter/cases"
	"github.com/gcjitter/gcjitter/fit"
	"github.com/gcjitter/gcjitter/internal/atomicfile"
	"github.com/gcjitter/gcjitter/internal/cli"
	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/runner"
)

func cmdFit(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("gcjitter fit", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "write the fitted case to this file (default: CASE-fit.yaml)")
	caseName := fs.String("case", "", "the traced case to fit (default: the directory's only one)")
	python := fs.String("python", "", "interpreter for the trials (default: the traced job's, else as gcjitter run finds one)")
	check := fs.Bool("check", false, "then run the fitted case at the traced size and print traced vs reproduced; exit 1 when a figure is beyond its tolerance, 2 when the trace has no collection to judge")
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: gcjitter fit [-o case.yaml] [-check] DIR

Estimates from a traced or imported run (gcjitter trace, gcjitter import)
what the workload does to the collector (young-garbage rate, survivors,
long-lived heap, the full collections' period and pause, the step's own
time) by running the worker on this host, and writes a case whose default
variant reproduces the traced GC schedule, with the policy variants the
trace supports trying, a story of where each number came from, and how
much of the traced tail (p99) GC explains.

`)
		fs.PrintDefaults()
	}
	if done, err := cli.ParseFlags(fs, args); done {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return cli.Silent(cli.Usage)
	}
	dir := fs.Arg(0)
	name, streams, err := tracedStreams(dir, *caseName)
	if err != nil {
		return cli.Usagef("%v", err)
	}
	target := fit.ScheduleOf(streams...)
	py := *python
	if py == "" {
		if _, err := os.Stat(target.Python); err == nil {
			py = target.Python
		} else if py, err = runner.FindPython(ctx, "", false); err != nil {
			return cli.InfraError(err)
		}
	}
	trials := filepath.Join(dir, "trace", "fit-"+time.Now().UTC().Format("20060102-150405"))
	logf := func(format string, a ...any) { fmt.Fprintf(stderr, format+"\n", a...) }
	res, err := fit.Fit(ctx, target, fit.WorkerRunner(py, trials), logf)
	if err != nil {
		return cli.InfraError(err)
	}
	if *out == "" {
		*out = name + "-fit.yaml"
	}
	caseText := res.CaseYAML(name+"-fit", fmt.Sprintf("%s (case %s)", dir, name))
	if err := atomicfile.Write(*out, caseText, 0o644); err != nil {
		return cli.InfraError(err)
	}
	fmt.Fprintf(stdout, "%s: fitted from %s (%d trials, streams in %s)\n", *out, dir, len(res.Trials), trials)
	for _, s := range res.Story {
		fmt.Fprintf(stdout, "  %s\n", s)
	}
	fmt.Fprintf(stdout, "  %s\n", target.Tail)
	if !target.Tail.Explained() {
		fmt.Fprintln(stdout, "  the case reproduces the job's GC schedule, not its tail")
	}
	for _, v := range res.Variants() {
		fmt.Fprintf(stdout, "  variant %s: %s\n", v.Policy, v.Why)
	}
	if !*check {
		return nil
	}
	if !target.Judgeable() {
		// Bad input, as a gate that cannot fail is: every figure would be
		// 0 against 0, and an exit 0 would read as a reproduction.
		return cli.Usagef("-check: nothing to judge: %s holds no collection in its %d measured steps; trace a longer run of the job", dir, target.Steps)
	}
	got, err := fit.Check(ctx, fit.WorkerRunner(py, trials), res.Best.Params, res.Steps)
	if err != nil {
		return cli.InfraError(err)
	}
	rows := fit.Compare(target, got)
	fmt.Fprintf(stdout, "\ncheck: %s's default variant (%d runs of %d steps, the traced run's size) against the trace\n", *out, fit.CheckRuns, res.Steps)
	fmt.Fprintf(stdout, "%s\n", target.Tail)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "figure\ttraced\treproduced\tchange\ttolerance\t")
	failed := 0
	for _, r := range rows {
		tol, verdict := "-", ""
		if r.Undecided != "" {
			tol = r.Undecided
		}
		if r.Judged {
			tol = fmt.Sprintf("±%.0f%%", 100*r.Tolerance)
			if r.Slack > 0 {
				tol += " or 1 per run"
			}
			if !r.Within {
				verdict, failed = " beyond", failed+1
			}
		}
		fmt.Fprintf(tw, "%s\t%.3f %s\t%.3f %s\t%+.1f%%%s\t%s\t\n", r.Name, r.Traced, r.Unit, r.Got, r.Unit, 100*r.RelativeChange, verdict, tol)
	}
	tw.Flush()
	if !target.Tail.Explained() {
		fmt.Fprintln(stdout, "p99 is not reproduced: the traced tail is not GC's")
	}
	if failed > 0 {
		fmt.Fprintf(stdout, "%d figures beyond their tolerance\n", failed)
		return cli.Silent(cli.Regression)
	}
	return nil
}

// tracedStreams are the record streams of a results directory's traced or
// imported runs of one case.
func tracedStreams(dir, caseName string) (string, []*bench.Stream, error) {
	m, err := results.ReadManifest(dir)
	if err != nil {
		return "", nil, err
	}
	var names []string
	for _, r := range m.Runs {
		if cases.Observed(r.Variant) && r.Status == results.StatusOK && !contains(names, r.Case) {
			names = append(names, r.Case)
		}
	}
	switch {
	case caseName == "" && len(names) == 1:
		caseName = names[0]
	case caseName == "" && len(names) == 0:
		return "", nil, fmt.Errorf("%s has no traced or imported run (gcjitter trace -o %s -- python train.py, or gcjitter import -o %s TRACE)", dir, dir, dir)
	case caseName == "":
		return "", nil, fmt.Errorf("%s has traced runs of several cases (%s): name one with -case", dir, strings.Join(names, ", "))
	}
	var streams []*bench.Stream
	for _, r := range m.Runs {
		if r.Case != caseName || r.Status != results.StatusOK || !cases.Observed(r.Variant) {
			continue
		}
		for k := range max(r.Ranks, 1) {
			path := filepath.Join(dir, r.RankRecords(k))
			f, err := os.Open(path)
			if err != nil {
				return "", nil, err
			}
			s, err := bench.ReadStream(f, path)
			f.Close()
			if err != nil {
				return "", nil, fmt.Errorf("%s: %v", path, err)
			}
			streams = append(streams, s)
		}
	}
	if len(streams) == 0 {
		return "", nil, fmt.Errorf("%s: no traced or imported run of case %q", dir, caseName)
	}
	return caseName, streams, nil
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}
