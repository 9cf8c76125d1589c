package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/gcjitter/gcjitter/advise"
	"github.com/gcjitter/gcjitter/cases"

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
	budget := fs.Duration("advise-budget", runAdviseBudget, "advise rounds: where a case's answer waits on one policy's tail alone, add interleaved runs of it and default until the answer is decided, within this wall time for all cases (0: none)")
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
	if runErr == nil {
		if err := settleAnswers(ctx, f, *budget, m, dir, cs, advise.Options{LimitOf: memLimit.Limit}, stderr); err != nil {
			runErr = err
		}
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

// runAdviseBudget is run's default -advise-budget: about what the quick
// suite saved by running device-bound-periodic-gc once (79 s on a 2-core
// host), so make run is no slower for its rounds (docs/suite.md).
const runAdviseBudget = 80 * time.Second

// settleAnswers adds interleaved rounds of each case's contenders (the
// policy its answer waits on and the reference) while that tail alone
// keeps the answer undecided: cheapest rounds first, within budget for all
// cases (gate.Grow: one home for adaptive rounds). It says what each case
// got; an error is a round's.
func settleAnswers(ctx context.Context, f *commonFlags, budget time.Duration, m *results.Manifest, dir string, cs []*cases.Case, opt advise.Options, stderr io.Writer) error {
	contests := advise.Contests(dir, m, opt)
	if budget <= 0 || len(contests) == 0 {
		return nil
	}
	contenders := map[string][]string{}
	for _, c := range contests {
		contenders[c.Case] = []string{c.Candidate, c.Reference}
	}
	launch := f.launch(stderr)
	var sub []*cases.Case
	rounds := gate.ContestRounds(m, contenders, func(ctx context.Context, n map[string]int) error {
		return launch.More(ctx, m, dir, sub, n)
	})
	slices.SortStableFunc(contests, func(a, b advise.Contest) int {
		return cmp.Compare(rounds.RoundTime(a.Case), rounds.RoundTime(b.Case))
	})
	lim := gate.Limits{Budget: budget, Start: time.Now()}
	logf := func(format string, args ...any) {
		fmt.Fprintf(stderr, "gcjitter: advise rounds: "+format+"\n", args...)
	}
	logf("%d answers wait on a tail alone; adding interleaved runs of each one's policy and %s within -advise-budget %s", len(contests), contests[0].Reference, budget)
	for _, ct := range contests {
		sub = nil
		for _, c := range cs {
			if c.Name == ct.Case {
				one := *c
				one.Variants = slices.DeleteFunc(slices.Clone(c.Variants), func(v cases.Variant) bool {
					return !slices.Contains(contenders[ct.Case], v.Name)
				})
				sub = []*cases.Case{&one}
			}
		}
		if sub == nil {
			continue
		}
		o := opt
		o.Case = ct.Case
		var a *advise.Advice
		judge := func() (*results.Comparison, error) {
			next, err := advise.FromResults([]string{dir}, o)
			if err != nil {
				return nil, err
			}
			a = next
			if !a.TailOnly() || a.Open.Variant != ct.Candidate {
				return &results.Comparison{}, nil // decided, or waiting on what these rounds cannot settle
			}
			return a.Pending(), nil
		}
		start, before := time.Now(), rounds.Runs(ct.Case)
		_, g, err := gate.Grow(ctx, lim, judge, rounds)
		state := "still undecided (" + g.Stopped + ")"
		switch {
		case a != nil && a.Pick != nil:
			state = "decided: " + a.Pick.Variant
		case a != nil && !a.Undecided:
			state = "decided: none qualifies"
		}
		logf("%d runs added to %s (%s and %s) in %s; %s", (rounds.Runs(ct.Case)-before)*len(contenders[ct.Case]), ct.Case, ct.Candidate, ct.Reference, time.Since(start).Round(time.Second), state)
		if err != nil {
			return err
		}
	}
	return nil
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
