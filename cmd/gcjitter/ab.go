package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/gcjitter/gcjitter/cases"
	"github.com/gcjitter/gcjitter/gate"
	"github.com/gcjitter/gcjitter/internal/cli"
	"github.com/gcjitter/gcjitter/report"
	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/runner"
	"github.com/gcjitter/gcjitter/stats"
)

func cmdAB(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, f := measuringFlags("gcjitter ab", stderr)
	a := fs.String("a", "", "environment A (the baseline): python=PATH,env.NAME=VALUE,...")
	b := fs.String("b", "", "environment B (the candidate), same form")
	f.censusFlag(fs)
	unknown, allowBusy := busyFlags(fs)
	lim := adaptiveFlags(fs)
	from := fs.String("from", "", "judge the A/B runs kept in this results directory (an interrupted ab's, say) instead of running; writes the reports there")
	format := report.MeasuringFormatFlag(fs)
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: gcjitter ab -a SPEC -b SPEC [flags] case ...

Runs each case in two environments, interleaved on this host, and compares B
against A. SPEC: python=PATH,env.NAME=VALUE,... (e.g. the interpreters of two
virtualenvs, before and after a torch upgrade). Exit 1 when B regresses.
Runs the host disturbed (other load, a moving speed) are made once more;
still disturbed, every timing verdict is unknown ("undecided: host busy",
exit 0 with a warning; 1 under -unknown fail): the GC schedule, the heap
census and memory still decide.

`)
		fs.PrintDefaults()
	}
	if done, err := cli.ParseFlags(fs, args); done {
		return err
	}
	if err := checkUnknown(*unknown); err != nil {
		return err
	}
	pol := gate.ABPolicy{AllowBusy: *allowBusy, UnknownFails: *unknown == "fail"}
	var (
		specs       [2]gate.Spec
		m           *results.Manifest
		cs          []*cases.Case
		outDir      string
		runErr, err error
	)
	switch {
	case *from != "":
		if *a != "" || *b != "" {
			return cli.Usagef("-from judges kept runs: their sides are the ones they ran with; drop -a and -b")
		}
		if m, cs, err = gate.Kept(*from, fs.Args()); err != nil {
			return err
		}
		specs, outDir = gate.ABSpecsOf(m), *from
	case fs.NArg() == 0:
		return cli.Usagef("name at least one case")
	default:
		if specs, err = abSpecs(ctx, *a, *b); err != nil {
			return err
		}
		if cs, err = f.loadCases(fs.Args()); err != nil {
			return err
		}
		if err := gate.PlanAB(cs, lim.MaxRuns); err != nil {
			return cli.Usagef("%v; nothing was run", err)
		}
		gate.ABCases(cs, specs)
		// Interrupted: the runs that completed are judged and every report
		// written, marked partial; the exit status stays the interruption's.
		if m, outDir, runErr = f.launch(stderr).Run(ctx, cs); m == nil {
			return launchError(runErr)
		}
		// A brief disturbance costs one more session, as in a gate.
		if runErr == nil && !pol.AllowBusy {
			m, outDir = f.undisturbed(ctx, cs, m, outDir, "gcjitter ab", stderr)
		}
	}
	cache := &results.Cache{KeepSteps: true} // the judgements and the charts read each stream once
	var o *gate.ABOutcome
	judge := func() (*results.Comparison, error) {
		d, err := cache.Load(outDir, stats.SpikeRule{})
		if err != nil {
			return nil, cli.InfraError(err)
		}
		// The census runs are in the manifest on disk (adaptive rounds add
		// runs to it); without one the census and gc-cost are left out.
		km, _ := results.ReadManifest(outDir)
		o = gate.JudgeAB(d, km, specs, cs, pol)
		return o.Comparison, nil
	}
	var cmp *results.Comparison
	if lim.On() && runErr == nil && *from == "" {
		if cmp, runErr = f.grow(ctx, lim, m, outDir, cs, stderr, judge); cmp == nil {
			return runErr
		}
	} else if cmp, err = judge(); err != nil {
		return err
	}
	out := report.HumanOut(*format, stdout, stderr)
	report.TextColor(out, cmp, report.ColorFor(out))
	for _, w := range o.Warnings(pol) {
		fmt.Fprintf(stderr, "gcjitter ab: warning: %s\n", w)
	}
	doc := &report.Doc{Kind: "ab", Title: "gcjitter ab: B against A", Generated: time.Now(), Comparison: cmp, Manifest: m}
	if steps, err := cache.LoadSteps(outDir); err == nil {
		doc.Steps = gate.ABSteps(steps)
	}
	if _, err := report.WriteFiles(outDir, "ab", doc, "text", "markdown", "json", "junit", "html"); err != nil {
		return cli.InfraError(err)
	}
	if err := report.PrintFormat(stdout, *format, doc); err != nil {
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

// abSpecs parses and checks both sides' SPECs.
func abSpecs(ctx context.Context, a, b string) ([2]gate.Spec, error) {
	var specs [2]gate.Spec
	for i, s := range []string{a, b} {
		spec, err := gate.ParseSpec(s)
		if err != nil {
			return specs, cli.Usagef("-%c: %v", "ab"[i], err)
		}
		if s == "" {
			// A side left out would run an A/A test and pass: never what
			// was meant (an A/A check names the same spec twice).
			return specs, cli.Usagef("-%c missing: give both sides, -a SPEC and -b SPEC (e.g. -a python=/old/bin/python3 -b python=/new/bin/python3)", "ab"[i])
		}
		if spec.Python != "" {
			if spec.Python, _, err = runner.ChoosePython(ctx, spec.Python, "", true); err != nil {
				return specs, cli.InfraError(fmt.Errorf("environment %c: %w", "AB"[i], err))
			}
		}
		specs[i] = spec
	}
	return specs, nil
}
