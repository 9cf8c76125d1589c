package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/gcjitter/gcjitter/advise"
	"io"
	"time"

	"github.com/gcjitter/gcjitter/gate"
	"github.com/gcjitter/gcjitter/internal/cli"
	"github.com/gcjitter/gcjitter/report"
	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/runner"
)

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, f := measuringFlags("gcjitter run", stderr)
	check := fs.Bool("check", false, "evaluate the cases' expect: assertions; exit 1 when one fails")
	format := report.MeasuringFormatFlag(fs)
	var memLimit results.MemLimitFlag
	fs.Var(&memLimit, "mem-limit", results.MemLimitUsage)
	fs.Usage = func() {
		fmt.Fprint(stderr, "usage: gcjitter run [flags] [case|file ...]\n\nRuns cases (default: the quick suite) and writes a results directory.\n\n")
		fs.PrintDefaults()
	}
	if done, err := cli.ParseFlags(fs, args); done {
		return err
	}
	cs, err := f.loadCases(fs.Args())
	if err != nil {
		return err
	}
	m, dir, runErr := f.launch(stderr).Run(ctx, cs)
	if m == nil {
		return launchError(runErr)
	}
	out := report.HumanOut(*format, stdout, stderr)
	m.Host.MemLimit, m.Host.MemLimitFrom = memLimit.Limit(m.Host)
	d := &report.Doc{Kind: "run", Title: "gcjitter run: " + dir, Generated: time.Now(), Manifest: m}
	var page *report.Doc
	if err := report.AttachSteps(d, dir); err == nil {
		// The page also puts the policies side by side, each against the
		// default variant where a case has one (as gcjitter report DIR).
		p := *d
		if report.CompareVariants(&p, dir, report.DefaultReference, results.CompareOptions{}) == nil {
			p.Answers = advise.Answers(dir, m, advise.Options{LimitOf: memLimit.Limit})
		}
		page = &p
	}
	// The summary opens with what to set, as the page does.
	if page != nil {
		report.AnswersText(out, page.Answers)
	}
	report.RunSummaryText(out, m)
	if page != nil {
		if _, err := report.WriteFiles(dir, "report", page, "html"); err != nil {
			fmt.Fprintf(stderr, "gcjitter run: writing report.html: %v\n", err)
		}
	}
	checkFailed := *check && !gate.CheckExpectations(out, cs, m)
	if err := report.PrintFormat(stdout, *format, d); err != nil && runErr == nil {
		return cli.InfraError(err)
	}
	recordErr := f.record(ctx, m, dir, stderr)
	if runErr != nil {
		return launchError(runErr)
	}
	if checkFailed {
		return cli.Silent(cli.Regression)
	}
	return recordErr
}

// launchError is a launch's error as the command returns it: the runner
// has logged it already, so only its exit code is left to give.
func launchError(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, runner.ErrInterrupted) {
		return cli.Silent(cli.Interrupted)
	}
	return cli.Silent(cli.Code(err))
}
