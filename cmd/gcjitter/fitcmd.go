package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/gcjitter/gcjitter/fit"
	"github.com/gcjitter/gcjitter/internal/atomicfile"
	"github.com/gcjitter/gcjitter/internal/cli"
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
	name, streams, err := fit.TracedStreams(dir, *caseName)
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
	res.WriteText(stdout, *out, dir, trials)
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
	if res.WriteCheck(stdout, *out, got) > 0 {
		return cli.Silent(cli.Regression)
	}
	return nil
}
