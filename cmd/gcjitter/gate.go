package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/gcjitter/gcjitter/gate"
	"github.com/gcjitter/gcjitter/golden"
	"github.com/gcjitter/gcjitter/internal/cli"
	"github.com/gcjitter/gcjitter/report"
	"github.com/gcjitter/gcjitter/runner"
)

func cmdGate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, f := measuringFlags("gcjitter gate", stderr)
	dir := fs.String("golden", "golden", "baselines directory (holds <host-class>/<case>.json)")
	unknown := fs.String("unknown", "pass", "how an unknown verdict counts: pass (with a warning) or fail")
	timing := fs.String("timing", "gate", "timing layer: gate (a regression fails) or report (shown, never fails: for noisy shared hosts)")
	check := fs.Bool("check", false, "also evaluate the cases' expect: assertions")
	format := measuringFormat(fs)
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
	switch {
	case *unknown != "pass" && *unknown != "fail":
		return cli.Usagef("-unknown must be pass or fail, got %q", *unknown)
	case *timing != "gate" && *timing != "report":
		return cli.Usagef("-timing must be gate or report, got %q", *timing)
	}
	cs, err := f.loadCases(fs.Args())
	if err != nil {
		return err
	}
	host := runner.ProbeHost(ctx)
	if f.hostClass, err = golden.HostClass(f.hostClass, host); err != nil {
		return cli.Usagef("%v", err)
	}
	plan, err := gate.New(cs, gate.Options{Dir: *dir, Class: f.hostClass, Host: host, Runs: f.sel.Runs, Steps: f.sel.Steps, Warmup: f.sel.Warmup})
	var missing *gate.MissingError
	if errors.As(err, &missing) {
		var caseArgs []string
		for _, i := range missing.Missing {
			caseArgs = append(caseArgs, cs[i].Name)
			if fs.NArg() > 0 {
				caseArgs[len(caseArgs)-1] = fs.Arg(i) // a file path stays a path
			}
		}
		return cli.Usagef("%s\n  %s", strings.Join(missing.Lines, "\ngcjitter gate: "), gate.UpdateCommand(*dir, f.hostClass, runFlags(fs), caseArgs))
	}
	if err != nil {
		return err
	}
	pw := plan.PlanPower()
	if pw.Refused != nil {
		if *timing == "gate" {
			return cli.Usagef("%v; nothing was run", pw.Refused)
		}
		pw.Warnings = append([]string{pw.Refused.Error() + " (timing is reported only: running)"}, pw.Warnings...)
	}
	for i, w := range pw.Warnings {
		if i == 5 {
			fmt.Fprintf(stderr, "gcjitter gate: warning: and %d more metrics this size cannot decide\n", len(pw.Warnings)-i)
			break
		}
		fmt.Fprintf(stderr, "gcjitter gate: warning: %s\n", w)
	}
	m, outDir, runErr := f.launch(stderr).Run(ctx, cs)
	if m == nil || errors.Is(runErr, runner.ErrInterrupted) {
		return launchError(runErr)
	}
	out := humanOut(*format, stdout, stderr)
	report.RunSummaryText(out, m)
	o, err := plan.Judge(m, outDir, gate.Policy{Timing: *timing, UnknownFails: *unknown == "fail", Check: *check})
	if err != nil {
		return err
	}
	o.WriteText(out, report.ColorFor(out)) // the terminal gets colour, gate.txt never does
	for _, w := range o.Warnings() {
		fmt.Fprintf(stderr, "gcjitter gate: warning: %s\n", w)
	}
	d, err := o.WriteReports(outDir)
	if err != nil {
		return cli.InfraError(fmt.Errorf("writing the reports: %w", err))
	}
	fmt.Fprintf(stderr, "gcjitter gate: reports in %s (gate.txt, .md, .json, .junit.xml, .html)\n", outDir)
	if err := printFormat(stdout, *format, d); err != nil {
		return cli.InfraError(err)
	}
	switch {
	case runErr != nil:
		return launchError(runErr)
	case o.Failed:
		return cli.Silent(cli.Regression)
	}
	return nil
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
