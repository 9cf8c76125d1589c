package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/gcjitter/gcjitter/cases"
	"github.com/gcjitter/gcjitter/gate"
	"github.com/gcjitter/gcjitter/history"
	"github.com/gcjitter/gcjitter/internal/cli"
	"github.com/gcjitter/gcjitter/internal/progress"
	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/runner"
	"github.com/gcjitter/gcjitter/stats"
)

// commonFlags are the flags every measuring command shares (DESIGN.md's
// contract).
type commonFlags struct {
	out, python, hostClass string
	history, label         string
	sel                    cases.Selection
	seed                   int64
	census                 bool // census runs after the timed ones (censusFlag)
	cold                   bool // every run in a fresh interpreter
}

// censusFlag registers -census, for the commands whose baselines and
// gates carry the exact heap layer (gate, golden update).
func (f *commonFlags) censusFlag(fs *flag.FlagSet) {
	fs.BoolVar(&f.census, "census", true, "after the timed runs, one census run per single-rank variant: the objects every collection walks, gated exactly on any host (one more run per variant; -census=false skips it)")
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
	fs.StringVar(&f.history, "history", os.Getenv(history.DSNEnv), "also record the results in this history store when done (partial ones marked): "+history.DSNHelp+" (default $"+history.DSNEnv+")")
	fs.BoolVar(&f.cold, "cold", false, "start every run in a fresh interpreter that imports torch itself, instead of forking single-rank runs from a warm process that imported it once (docs/worker.md, \"Warm starts\")")
	fs.StringVar(&f.label, "label", "", "CI's commit or build label, recorded with the night in -history")
	return fs, f
}

// record adds the results in dir to the -history store, if one is named,
// and says so; a store that cannot take them is an infrastructure failure
// (the results directory itself is complete: history add can retry).
func (f *commonFlags) record(ctx context.Context, m *results.Manifest, dir string, stderr io.Writer) error {
	if f.history == "" || m == nil {
		return nil
	}
	a, err := history.Record(ctx, f.history, dir, m, history.AddOptions{Label: f.label, HostClass: f.hostClass})
	if err != nil {
		fmt.Fprintf(stderr, "gcjitter: recording in the history failed (retry with gcjitter history add %s -history %s): %v\n", dir, f.history, err)
		return cli.Silent(cli.Infra)
	}
	printAdded(stderr, history.Redact(f.history), dir, a)
	return nil
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
		Tool: cli.Version(), Command: os.Args, Progress: progress.New(stderr), Log: stderr, Census: f.census, Cold: f.cold}
}

// adaptiveFlags registers the limits of adaptive rounds (gate, ab).
func adaptiveFlags(fs *flag.FlagSet) *gate.Limits {
	lim := &gate.Limits{Start: time.Now()}
	fs.Var(&cli.SizeFlag{V: &lim.MaxRuns, Min: 2}, "max-runs", "adaptive rounds: while a tested metric is unknown and more runs would likely decide it, add interleaved rounds, up to `N` runs per variant")
	fs.DurationVar(&lim.Budget, "budget", 0, "adaptive rounds within this wall time from the start, e.g. 20m (alone or with -max-runs)")
	return lim
}

// grow adds adaptive rounds to the runs in dir (gate.Grow) and returns the
// last comparison judge made, with the growth's note among its notes.
func (f *commonFlags) grow(ctx context.Context, lim *gate.Limits, m *results.Manifest, dir string, cs []*cases.Case, stderr io.Writer,
	judge func() (*results.Comparison, error)) (*results.Comparison, error) {
	launch := f.launch(stderr)
	cmp, g, err := gate.Grow(ctx, *lim, judge, gate.ManifestRounds(m, func(ctx context.Context, rounds map[string]int) error {
		return launch.More(ctx, m, dir, cs, rounds)
	}))
	if cmp != nil {
		cmp.Notes = append(cmp.Notes, g.Note())
		fmt.Fprintf(stderr, "gcjitter: %s\n", g.Note())
	}
	return cmp, err
}

// busyFlags are -unknown and -allow-busy, for the commands that judge
// timings from runs they make (gate, ab); -unknown is pass or fail.
func busyFlags(fs *flag.FlagSet) (unknown *string, allowBusy *bool) {
	unknown = fs.String("unknown", "pass", "how an unknown verdict counts: pass (with a warning) or fail")
	allowBusy = fs.Bool("allow-busy", false, fmt.Sprintf("judge timings from runs the host disturbed (other processes keeping over %.0f%% of its CPUs, at least %.1f, busy, or its speed moving over %.0f%% within the session); by default such runs are rerun once, and if the host stays busy every timing verdict is unknown (undecided: host busy)", 100*results.BusyShare, results.BusyMinCPUs, 100*results.SpeedMovedLimit))
	return unknown, allowBusy
}

// checkUnknown checks -unknown (busyFlags).
func checkUnknown(unknown string) error {
	if unknown != "pass" && unknown != "fail" {
		return cli.Usagef("-unknown must be pass or fail, got %q", unknown)
	}
	return nil
}

// undisturbed makes the runs of session m (in dir) again while the host
// disturbed them (gate.Undisturbed), each rerun with f's flags into its
// own directory; it returns the session to judge.
func (f *commonFlags) undisturbed(ctx context.Context, cs []*cases.Case, m *results.Manifest, dir, who string, stderr io.Writer) (*results.Manifest, string) {
	return gate.Undisturbed(m, dir, func(next string) (*results.Manifest, string, error) {
		again := *f
		again.out = next
		return again.launch(stderr).Run(ctx, cs)
	}, func(s string) { fmt.Fprintf(stderr, "%s: %s\n", who, s) })
}

// spikeFactorFlag is -spike-factor, the spike rule's override for the
// commands that summarise runs; the returned function checks it (> 1) and
// gives the rule (zero: the case's rule, else the noise rule).
func spikeFactorFlag(fs *flag.FlagSet) func() (stats.SpikeRule, error) {
	f := fs.Float64("spike-factor", 0, "a spike is a step above this many times its run's median, instead of the case's spike rule (default: the case's, else the noise rule, docs/compare.md)")
	return func() (stats.SpikeRule, error) {
		if *f != 0 && *f <= 1 {
			return stats.SpikeRule{}, cli.Usagef("-spike-factor must be > 1, got %v", *f)
		}
		return stats.SpikeRule{Factor: *f}, nil
	}
}

// noFlags is the flag set of a command without flags: -h answers with its
// usage, and any other flag, wherever it stands, is named as undefined.
func noFlags(name, usage string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprintln(stderr, usage) }
	return fs
}

// detectFlag is -detect F: a change above 0 (20%, 0.2) that a plan must see.
func detectFlag(fs *flag.FlagSet, usage string) *float64 {
	var detect float64
	fs.Func("detect", usage, func(s string) error {
		v, err := cases.ParseFraction(s)
		if err == nil && !(v > 0) {
			err = fmt.Errorf("want a change above 0, e.g. 20%%")
		}
		detect = v
		return err
	})
	return &detect
}
