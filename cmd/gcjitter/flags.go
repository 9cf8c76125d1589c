package main

import (
	"flag"
	"io"
	"os"

	"github.com/gcjitter/gcjitter/cases"
	"github.com/gcjitter/gcjitter/internal/cli"
	"github.com/gcjitter/gcjitter/internal/progress"
	"github.com/gcjitter/gcjitter/runner"
)

// commonFlags are the flags every measuring command shares (DESIGN.md's
// contract).
type commonFlags struct {
	out, python, hostClass string
	sel                    cases.Selection
	seed                   int64
}

// measuringFlags is the flag set of a command that runs cases, with the
// common flags registered.
func measuringFlags(name string, stderr io.Writer) (*flag.FlagSet, *commonFlags) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	f := &commonFlags{}
	fs.StringVar(&f.out, "o", "", "results directory (default gcjitter-results/<suite-or-case>-<time>)")
	f.sel.Warmup = -1
	fs.Var(&cli.SizeFlag{V: &f.sel.Runs, Min: 1}, "runs", "runs per variant: `N` >= 1 (default: the case's, or its baseline's)")
	fs.Var(&cli.SizeFlag{V: &f.sel.Steps, Min: 1}, "steps", "measured steps per run: `N` >= 1 (default: the case's, or its baseline's)")
	fs.Var(&cli.SizeFlag{V: &f.sel.Warmup, Min: 0}, "warmup", "warm-up steps per run: `N` >= 0 (default: the case's, or its baseline's)")
	fs.StringVar(&f.python, "python", "", "interpreter with torch (default: $GCJITTER_PYTHON, the case's python:, python3, /usr/bin/python3)")
	fs.StringVar(&f.sel.Device, "device", "", "device for every case: auto, cpu, cuda[:i], npu[:i] (overrides the case)")
	fs.Int64Var(&f.seed, "seed", 1, "seed of the interleaved run order")
	fs.StringVar(&f.hostClass, "host-class", "", "host class recorded with the results (baselines are kept per host class)")
	fs.StringVar(&f.sel.Filter, "filter", "", "run only variants whose name matches this regular expression")
	fs.StringVar(&f.sel.Suite, "suite", "quick", "built-in suite to run when no case is named")
	fs.BoolVar(&f.sel.Reduced, "reduced", false, "run each case at the reduced size it declares for CI (then -runs, -steps, -warmup apply)")
	fs.Float64Var(&f.sel.ComputeScale, "compute-scale", 1, "multiply every case's compute per step (batch, or work for model none) by this: a host made slower or faster, on which signatures must still hold")
	return fs, f
}

// loadCases resolves the case arguments (or the suite) with the flags'
// overrides; its errors are bad input.
func (f *commonFlags) loadCases(args []string) ([]*cases.Case, error) {
	cs, err := f.sel.Load(args)
	if err != nil {
		return nil, &cli.Error{Code: cli.Usage, Err: err}
	}
	return cs, nil
}

// launch runs the cases as the flags say, with progress and messages on
// stderr.
func (f *commonFlags) launch(stderr io.Writer) *runner.Launch {
	return &runner.Launch{Out: f.out, Label: f.sel.Suite, Python: f.python, Seed: f.seed, HostClass: f.hostClass,
		Tool: cli.Version(), Command: os.Args, Progress: progress.New(stderr), Log: stderr}
}
