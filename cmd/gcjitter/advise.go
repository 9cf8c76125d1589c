package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/gcjitter/gcjitter/advise"
	"github.com/gcjitter/gcjitter/gate"
	"github.com/gcjitter/gcjitter/internal/cli"
	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/stats"
)

// Sizes advise -run starts at when the flags give none: runs long enough
// to class memory (a few collection periods past stats.MinStepsGrowth),
// and enough of them for the tail's tests.
const (
	adviseRunSteps = 800
	adviseRunRuns  = 4
	adviseBudget   = 30 * time.Minute
)

func cmdAdvise(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, f := measuringFlags("gcjitter advise", stderr)
	duration := fs.Duration("duration", advise.DefaultDuration, "the job's length, e.g. 8h: memory must last it")
	var limit results.MemLimitFlag
	fs.Var(&limit, "mem-limit", results.MemLimitUsage)
	format := fs.String("format", "text", "output `format`: text or json")
	caseName := fs.String("case", "", "the `case` to advise on when the results hold several")
	runCase := fs.String("run", "", "gather the evidence: run this `case` (a built-in name or a case file) with its policies interleaved, adding rounds until the recommendation is settled or -budget ends (default size: 4 runs of 800 steps)")
	lim := adaptiveFlags(fs)
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: gcjitter advise [-duration D] [-mem-limit SIZE] [-format text|json] DIR...
       gcjitter advise -run CASE [-budget 30m] [-duration D] [-mem-limit SIZE] [run flags]

Recommends one GC policy from results with several (a run of a case with
variants, a fitted case, or several trace runs of one job): the calmest
tail whose median is not worse than default's and whose memory lasts the
job within the limit; says which constraint binds when a calmer tail is
ruled out, and how to set the policy (Python, Megatron-LM, NeMo,
torchtitan). Memory is judged with its interval and class (grows, bounded,
undecided); where a calmer tail or its memory is undecided, so is the
recommendation, with what would settle it. With -run it gathers its own
evidence: the case's policies interleaved, rounds added (as gate's
adaptive rounds) while the tail that decides is unknown. docs/policy.md.
Exit status: 0 a policy recommended, 1 none qualifies or undecided,
2 bad input, 3 infrastructure.

`)
		fs.PrintDefaults()
	}
	if done, err := cli.ParseFlags(fs, args); done {
		return err
	}
	switch {
	case *runCase == "" && fs.NArg() == 0:
		return cli.Usagef("advise needs one or more results directories, or -run CASE")
	case *runCase != "" && fs.NArg() > 0:
		return cli.Usagef("advise -run %s runs its own results: give no directories (%v)", *runCase, fs.Args())
	case *format != "text" && *format != "json":
		return cli.Usagef("-format %s: advise writes text or json", *format)
	case *duration <= 0:
		return cli.Usagef("-duration must be > 0, got %v", *duration)
	}
	opt := advise.Options{Case: *caseName, Constraints: advise.Constraints{Duration: *duration}, LimitOf: limit.Limit}
	var a *advise.Advice
	var err error
	if *runCase != "" {
		a, err = adviseRun(ctx, f, lim, *runCase, opt, stderr)
	} else {
		a, err = advise.FromResults(fs.Args(), opt)
	}
	if a == nil {
		return err
	}
	var werr error
	if *format == "json" {
		werr = a.JSON(stdout)
	} else {
		werr = a.Text(stdout)
	}
	switch {
	case err != nil:
		return err
	case werr != nil:
		return cli.InfraError(werr)
	case a.Pick == nil:
		return cli.Silent(cli.Regression)
	}
	return nil
}

// adviseRun runs the case's policies interleaved and adds rounds while
// the tail the recommendation waits on is unknown (gate.Grow: one home
// for adaptive rounds), then advises on every run it made. An interrupted
// or failed round is advised on with the runs that completed, and its
// error returned.
func adviseRun(ctx context.Context, f *commonFlags, lim *gate.Limits, name string, opt advise.Options, stderr io.Writer) (*advise.Advice, error) {
	cs, err := f.loadCases([]string{name})
	if err != nil {
		return nil, err
	}
	c := cs[0]
	if len(c.Variants) < 2 {
		return nil, cli.Usagef("advise -run %s: the case has one policy: advise compares several (add variants to the case)", c.Name)
	}
	if f.sel.Steps == 0 {
		c.Steps = max(c.Steps, adviseRunSteps)
	}
	if f.sel.Runs == 0 {
		c.Runs = max(c.Runs, adviseRunRuns)
	}
	if !lim.On() {
		lim.Budget = adviseBudget
	}
	lim.Start = time.Now()
	m, dir, runErr := f.launch(stderr).Run(ctx, cs)
	if m == nil {
		return nil, launchError(runErr)
	}
	if runErr != nil {
		a, err := advise.FromResults([]string{dir}, opt)
		if err != nil {
			return nil, launchError(runErr)
		}
		return a, launchError(runErr)
	}
	var a *advise.Advice
	judge := func() (*results.Comparison, error) {
		next, err := advise.FromResults([]string{dir}, opt)
		if err != nil {
			return nil, err
		}
		a = next
		return a.Pending(), nil
	}
	_, g, growErr := gate.Grow(ctx, *lim, judge, gate.ManifestRounds(m, func(ctx context.Context, rounds map[string]int) error {
		return f.launch(stderr).More(ctx, m, dir, cs, rounds)
	}))
	if a == nil {
		return nil, growErr
	}
	runs := 0
	for _, j := range a.Candidates {
		runs = max(runs, j.Runs)
	}
	state := "settled"
	if a.Undecided {
		state = "still undecided"
	}
	note := fmt.Sprintf("advise -run: %s after %s (%d runs a policy of %d steps; results in %s)", state, g.Elapsed.Round(time.Second), runs, c.Steps, dir)
	if a.Undecided && a.Open != nil && a.Open.Fate == advise.MemUnsure {
		note += fmt.Sprintf("; memory needs longer runs: -steps %d", max(a.Open.StepsNeeded, stats.MinStepsGrowth))
	}
	a.Notes = append(a.Notes, note)
	fmt.Fprintf(stderr, "gcjitter: %s\n", note)
	if growErr != nil {
		return a, launchError(growErr)
	}
	return a, nil
}
