package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/gcjitter/gcjitter/cases"
	"github.com/gcjitter/gcjitter/gate"
	"github.com/gcjitter/gcjitter/golden"
	"github.com/gcjitter/gcjitter/history"
	"github.com/gcjitter/gcjitter/internal/cli"
	"github.com/gcjitter/gcjitter/report"
	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/runner"
	"github.com/gcjitter/gcjitter/stats"
)

func cmdGate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, f := measuringFlags("gcjitter gate", stderr)
	f.censusFlag(fs)
	dir := fs.String("golden", "golden", "baselines directory (holds <host-class>/<case>.json)")
	unknown, allowBusy := busyFlags(fs)
	timing := fs.String("timing", gate.TimingAuto, "timing layer: gate (a regression fails), report (shown, never fails: for noisy shared hosts) or auto (gate against baselines of this host's CPU model, report against another's)")
	check := fs.Bool("check", false, "also evaluate the cases' expect: assertions")
	from := fs.String("from", "", "judge the runs kept in this results directory (an interrupted gate's, say) instead of running")
	baseline := fs.String("baseline", "golden", "what to judge against: golden (the files in -golden) or history:N (the last N nights of this host class in -history, with the night-to-night drift they measured)")
	lim := adaptiveFlags(fs)
	detect := detectFlag(fs, "refuse to run (exit 2) unless the runs can detect this change `F` (e.g. 20%) of p50 and p99 with 95% power against the baselines, naming the runs that can (default: a doubling); every report states what its size detected")
	var drift *float64
	fs.Func("drift", fmt.Sprintf("session drift `F` of the timing metrics, e.g. 2%% (default: each case's gate.drift, else the catalogue's per metric, its largest bound measured on shared VMs: p50 %.1f%%, p99 %.1f%%, pauses %.1f%%, gc-cost %.1f%%; 0: as if the baseline were made in this session)", 100*stats.P50Drift, 100*stats.P99Drift, 100*stats.PauseDrift, 100*stats.GCCostDrift), func(s string) error {
		v, err := cases.ParseFraction(s)
		drift = &v
		return err
	})
	format := report.MeasuringFormatFlag(fs)
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: gcjitter gate [flags] [case ...]

Runs the cases (default: the quick suite) at their baselines' size and checks
them against golden/<host-class>/: the GC schedule exactly, timings with
verdicts. Exit status: 0 pass, 1 regression (or a changed GC schedule in an
unchanged environment), 2 bad input or missing baseline, 3 infrastructure.

`)
		fs.PrintDefaults()
	}
	if done, err := cli.ParseFlags(fs, args); done {
		return err
	}
	if err := checkUnknown(*unknown); err != nil {
		return err
	}
	switch {
	case *timing != gate.TimingGate && *timing != gate.TimingReport && *timing != gate.TimingAuto:
		return cli.Usagef("-timing must be gate, report or auto, got %q", *timing)
	}
	nights, err := history.BaselineSpec(*baseline)
	if err != nil {
		return cli.Usagef("%v", err)
	}
	if nights > 0 && f.history == "" {
		return cli.Usagef("-baseline %s reads a history store: name it with -history or $%s", *baseline, history.DSNEnv)
	}
	plan, m, outDir, runErr := gateRuns(ctx, f, fs, *dir, *from, timing, drift, lim.MaxRuns, *detect, nights, *allowBusy, stderr)
	if m == nil {
		return runErr
	}
	noteBefore := plan.TimingNote
	if *from != "" {
		noteBefore = ""
	}
	var o *gate.Outcome
	judge := func() (*results.Comparison, error) {
		judged, err := plan.Judge(m, outDir, gate.Policy{Timing: *timing, UnknownFails: *unknown == "fail", Check: *check})
		if err != nil {
			return nil, err
		}
		o = judged
		return o.Comparison, nil
	}
	if lim.On() && *from == "" && runErr == nil {
		cmp, err := f.grow(ctx, lim, m, outDir, plan.Cases, stderr, judge)
		if cmp == nil {
			return err
		}
		runErr = err
	} else if _, err := judge(); err != nil {
		return err
	}
	// The session's own calibration can settle -timing auto otherwise
	// than the measurement before the runs did: say what was decided.
	if plan.TimingNote != noteBefore && plan.TimingNote != "" {
		fmt.Fprintf(stderr, "gcjitter gate: %s\n", plan.TimingNote)
	}
	out := report.HumanOut(*format, stdout, stderr)
	report.RunSummaryText(out, m)
	judged := o.Report()
	judged.WriteText(out, report.ColorFor(out)) // the terminal gets colour, gate.txt never does
	for _, w := range o.Warnings() {
		fmt.Fprintf(stderr, "gcjitter gate: warning: %s\n", w)
	}
	d, err := judged.WriteReports(outDir)
	if err != nil {
		return cli.InfraError(fmt.Errorf("writing the reports: %w", err))
	}
	fmt.Fprintf(stderr, "gcjitter gate: reports in %s (gate.txt, .md, .json, .junit.xml, .html)\n", outDir)
	if err := report.PrintFormat(stdout, *format, d); err != nil {
		return cli.InfraError(err)
	}
	recordErr := f.record(ctx, m, outDir, stderr)
	switch {
	case runErr != nil:
		return launchError(runErr)
	case o.Failed:
		return cli.Silent(cli.Regression)
	}
	return recordErr
}

// gateRuns plans the gate against its baselines (everything checked before
// anything runs) and makes its runs, or reads them -from a results
// directory. A nil manifest means stop with the error.
func gateRuns(ctx context.Context, f *commonFlags, fs *flag.FlagSet, dir, from string, timing *string, drift *float64, maxRuns int, detect float64, nights int, allowBusy bool, stderr io.Writer) (*gate.Plan, *results.Manifest, string, error) {
	var m *results.Manifest
	cs, err := f.loadCases(fs.Args())
	if from != "" {
		m, cs, err = gate.Kept(from, fs.Args())
	}
	if err != nil {
		return nil, nil, "", err
	}
	host := runner.ProbeHost(ctx)
	if m != nil && m.Host.CPUModel != "" {
		host = m.Host // kept runs are judged as on the host that made them, wherever this runs
	}
	if f.hostClass, err = golden.HostClass(f.hostClass, host); err != nil {
		return nil, nil, "", cli.Usagef("%v", err)
	}
	var fromHistory map[string]*history.Baseline
	if nights > 0 {
		names := make([]string, len(cs))
		for i, c := range cs {
			names[i] = c.Name
		}
		var none *history.NoBaselineError
		fromHistory, err = history.Baselines(ctx, f.history, f.hostClass, names, nights)
		switch {
		case errors.As(err, &none):
			return nil, nil, "", cli.Usagef("%v; nothing was run", err)
		case err != nil:
			return nil, nil, "", cli.InfraError(err)
		}
	}
	plan, err := gate.New(cs, gate.Options{Dir: dir, Class: f.hostClass, Host: host,
		Runs: f.sel.Runs, Steps: f.sel.Steps, Warmup: f.sel.Warmup, KeepSizes: m != nil, Drift: drift, MaxRuns: maxRuns, Detect: detect, History: fromHistory, AllowBusy: allowBusy})
	var missing *gate.MissingError
	if errors.As(err, &missing) {
		var caseArgs []string
		for _, i := range missing.Missing {
			caseArgs = append(caseArgs, cs[i].Name)
			if fs.NArg() > 0 {
				caseArgs[len(caseArgs)-1] = fs.Arg(i) // a file path stays a path
			}
		}
		return nil, nil, "", cli.Usagef("%s\n  %s", strings.Join(missing.Lines, "\ngcjitter gate: "), gate.UpdateCommand(dir, f.hostClass, runFlags(fs), caseArgs))
	}
	if err != nil {
		return nil, nil, "", err
	}
	plan.Speed = &results.Calibration{Points: []results.SpeedPoint{runner.Calibrate()}}
	if m != nil {
		plan.Speed = m.Calibration
	}
	*timing, plan.TimingNote = plan.ResolveTiming(*timing)
	if m != nil {
		return plan, m, from, nil
	}
	for _, d := range append(plan.HostCheck(), plan.Contamination()...) {
		fmt.Fprintf(stderr, "gcjitter gate: warning: %s\n", d)
	}
	if plan.TimingNote != "" {
		fmt.Fprintf(stderr, "gcjitter gate: %s\n", plan.TimingNote)
	}
	if err := plan.CheckPower(stderr, *timing == gate.TimingGate || plan.MayGate()); err != nil {
		return nil, nil, "", cli.Usagef("%v; nothing was run", err)
	}
	// Interrupted (Ctrl-C, CI's timeout): the runs that completed are
	// judged and every report written, marked partial.
	m, outDir, runErr := f.launch(stderr).Run(ctx, cs)
	if m == nil {
		return nil, nil, "", launchError(runErr)
	}
	// A disturbance is usually brief (a package install, a backup): the
	// runs are made once more, as golden update does, and the quiet
	// session is judged; still disturbed, the timing layer is undecided
	// (gate.Plan.Judge). Only where timings gate: reported ones decide
	// nothing.
	if runErr == nil && !allowBusy && *timing != gate.TimingReport {
		m, outDir = f.undisturbed(ctx, cs, m, outDir, "gcjitter gate", stderr)
	}
	return plan, m, outDir, runErr
}

// runFlags are the gate's flags that shaped its runs, as set: what the
// golden update command it suggests must repeat.
func runFlags(fs *flag.FlagSet) [][2]string {
	var out [][2]string
	for _, name := range []string{"python", "device", "reduced", "runs", "steps", "warmup", "filter", "compute-scale", "suite"} {
		fs.Visit(func(fl *flag.Flag) {
			if fl.Name == name && (name != "suite" || fs.NArg() == 0) && fl.Value.String() != "false" {
				out = append(out, [2]string{name, fl.Value.String()})
			}
		})
	}
	return out
}
