package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/gcjitter/gcjitter/cases"
	"github.com/gcjitter/gcjitter/gate"
	"github.com/gcjitter/gcjitter/golden"
	"github.com/gcjitter/gcjitter/internal/cli"
	"github.com/gcjitter/gcjitter/report"
	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/runner"
	"github.com/gcjitter/gcjitter/stats"
)

var goldenCommands = map[string]command{"update": goldenUpdate, "show": goldenShow, "diff": goldenDiff}

func cmdGolden(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	const usage = "usage: gcjitter golden update|show|diff ... (gcjitter golden SUBCOMMAND -h for its flags)"
	switch {
	case len(args) == 0:
		fmt.Fprintln(stderr, usage)
		return cli.Silent(cli.Usage)
	case args[0] == "-h" || args[0] == "-help" || args[0] == "--help":
		fmt.Fprintln(stderr, usage)
		return nil
	}
	cmd, ok := goldenCommands[args[0]]
	if !ok {
		return cli.Usagef("unknown subcommand %q (want update, show or diff)", args[0])
	}
	if err := cmd(ctx, args[1:], stdout, stderr); err != nil {
		return &cli.SubcommandError{Name: "gcjitter golden " + args[0], Err: err}
	}
	return nil
}

func goldenUpdate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, f := measuringFlags("gcjitter golden update", stderr)
	f.censusFlag(fs)
	dir := fs.String("golden", "golden", "baselines directory")
	from := fs.String("from", "", "make the baselines from this results directory instead of running")
	detectP := detectFlag(fs, fmt.Sprintf("size each case's runs to detect this change `F` (e.g. 20%%) in a gate against the baseline: runs of at least %d steps (p99's interval), %d runs a variant first to measure the spreads, then as many more as the power plan asks (at most %d), with the session drift allowed; the metrics that cannot see F within that are named", stats.MinStepsP99, gate.DetectPilotRuns, gate.DetectMaxRuns))
	allowBusy := fs.Bool("allow-busy", false, fmt.Sprintf("write baselines from runs made beside other load (other processes keeping over %.0f%% of the host's CPUs, at least %.1f, busy); the baseline's provenance records it", 100*results.BusyShare, results.BusyMinCPUs))
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: gcjitter golden update [flags] [case ...]

Runs the cases (default: the quick suite) on this host, or reads -from a
results directory, and writes golden/<host-class>/<case>.json, printing what
changed against the baseline it replaces.

`)
		fs.PrintDefaults()
	}
	if done, err := cli.ParseFlags(fs, args); done {
		return err
	}
	host := runner.ProbeHost(ctx)
	class, err := golden.HostClass(f.hostClass, host)
	if err != nil {
		return cli.Usagef("%v", err)
	}
	f.hostClass = class
	detect := *detectP
	if detect > 0 && *from != "" {
		return cli.Usagef("-detect sizes the runs golden update makes: drop it with -from")
	}
	m, resDir, names, err := baselineRuns(ctx, f, *from, detect, fs.Args(), stderr)
	if err != nil {
		return err
	}
	opt := golden.UpdateOptions{AllowBusy: *allowBusy, Detect: detect}
	// caseArg is a case as the command line named it: a case file stays
	// its path.
	caseArg := func(name string) string {
		if i := slices.Index(names, name); fs.NArg() == len(names) && i >= 0 {
			return fs.Arg(i)
		}
		return name
	}
	written := func(err error) error {
		if err == nil {
			var args []string
			for _, name := range names {
				args = append(args, caseArg(name))
			}
			warnIfCannotGate(stderr, f, args, *dir, class, host, detect)
		}
		return err
	}
	err = golden.Update(stdout, *dir, class, m, resDir, names, opt)
	var disturbed *golden.ContaminatedError
	if *from != "" || !errors.As(err, &disturbed) {
		return written(err)
	}
	// A disturbance is usually brief: the cases it touched run once more,
	// into a directory of their own, and replace their first runs if the
	// host was quiet this time. Disturbed again: refused, both kept.
	fmt.Fprintf(stderr, "gcjitter golden update: %v\ngcjitter golden update: running %s once more\n", err, strings.Join(disturbed.Cases(), ", "))
	again := *f
	again.out = resDir + "-rerun"
	var rerun []string
	for _, name := range disturbed.Cases() {
		rerun = append(rerun, caseArg(name))
	}
	again.sel.Runs, again.sel.Steps = sizeOf(m, disturbed.Cases()) // the size the first session reached (-detect grows it)
	m2, resDir2, _, err := baselineRuns(ctx, &again, "", 0, rerun, stderr)
	if err != nil {
		return err
	}
	var clean []string
	for _, name := range names {
		if !slices.Contains(disturbed.Cases(), name) {
			clean = append(clean, name)
		}
	}
	return written(golden.UpdateFrom(stdout, *dir, class, []golden.Source{{M: m, Dir: resDir, Names: clean}, {M: m2, Dir: resDir2, Names: disturbed.Cases()}}, opt))
}

// warnIfCannotGate says, after baselines were written, when a gate at
// their size could not fail against them (their runs spread too wide):
// the refusal every gate would give, with the runs that would do. Cases
// that cannot be loaded again (a -from directory's own) are not checked.
func warnIfCannotGate(stderr io.Writer, f *commonFlags, args []string, dir, class string, host results.Host, detect float64) {
	cs, err := f.loadCases(args)
	if err != nil {
		return
	}
	if refusal, err := gate.CanGate(cs, dir, class, host, detect); err == nil && refusal != nil {
		with := "a gate against them at their size"
		if detect > 0 {
			with = fmt.Sprintf("a gate -detect %s against them", stats.Pct(detect))
		}
		fmt.Fprintf(stderr, "gcjitter golden update: warning: the baselines are written, but %s would refuse to run: %v\n", with, refusal)
	}
}

// baselineRuns are the runs a baseline is made from: a results directory
// given by -from, or the cases run now (every run must complete).
// With detect, each case is first run at DetectPilotRuns runs of p99's
// steps at least, and then to the size gate.SizeFor asks.
func baselineRuns(ctx context.Context, f *commonFlags, from string, detect float64, args []string, stderr io.Writer) (*results.Manifest, string, []string, error) {
	if from != "" {
		m, err := results.ReadManifest(from)
		if err != nil {
			return nil, "", nil, cli.Usagef("%v", err)
		}
		names := args
		if len(names) == 0 {
			for _, c := range m.Cases {
				names = append(names, c.Name)
			}
		}
		return m, from, names, nil
	}
	cs, err := f.loadCases(args)
	if err != nil {
		return nil, "", nil, err
	}
	if detect > 0 {
		for _, c := range cs {
			if f.sel.Steps == 0 {
				c.Steps = max(c.Steps, stats.MinStepsP99)
			}
			c.Runs = max(c.Runs, gate.DetectPilotRuns)
		}
	} else if err := gate.PlanBaseline(cs); err != nil {
		// Not refused: the schedule layer is exact and needs one run; the
		// timing layer of a gate against it will be refused until it has
		// the runs named here.
		fmt.Fprintf(stderr, "gcjitter golden update: warning: %v for a timing baseline\n", err)
	}
	launch := f.launch(stderr)
	m, dir, err := launch.Run(ctx, cs)
	if err == nil && detect > 0 {
		err = sizeForEffect(ctx, launch, m, dir, cs, detect, stderr)
	}
	if m == nil || err != nil {
		fmt.Fprintln(stderr, "gcjitter golden update: not every run completed; no baseline written")
		return nil, "", nil, launchError(err)
	}
	var names []string
	for _, c := range cs {
		names = append(names, c.Name)
	}
	return m, dir, names, nil
}

// sizeForEffect grows the pilot's runs in dir to the size at which a gate
// against the baseline detects effect (gate.SizeFor), and says what that
// size sees.
func sizeForEffect(ctx context.Context, launch *runner.Launch, m *results.Manifest, dir string, cs []*cases.Case, effect float64, stderr io.Writer) error {
	d, err := results.Load(dir, stats.SpikeRule{})
	if err != nil {
		return err
	}
	sized := gate.SizeFor(cs, d, effect)
	rounds := map[string]int{}
	for i, s := range sized {
		if more := s.Runs - cs[i].Runs; more > 0 {
			rounds[s.Case] = more
		}
	}
	if len(rounds) > 0 {
		if err := launch.More(ctx, m, dir, cs, rounds); err != nil {
			return err
		}
		if d, err = results.Load(dir, stats.SpikeRule{}); err != nil {
			return err
		}
		sized = gate.SizeFor(cs, d, effect)
	}
	for i, s := range sized {
		fmt.Fprintf(stderr, "gcjitter golden update: sized for %s: %s\n", stats.Pct(effect), s.AtSize(cs[i].Runs))
	}
	return nil
}

// sizeOf is the most runs and steps the named cases have in m.
func sizeOf(m *results.Manifest, names []string) (runs, steps int) {
	for _, c := range m.Cases {
		if slices.Contains(names, c.Name) {
			runs, steps = max(runs, c.Runs), max(steps, c.Steps)
		}
	}
	return runs, steps
}

func goldenShow(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("gcjitter golden show", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("golden", "golden", "baselines directory")
	hc := fs.String("host-class", "", "host class (default: $GCJITTER_HOST_CLASS, or derived from this host)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: gcjitter golden show [-golden DIR] [-host-class C] CASE|FILE")
		fs.PrintDefaults()
	}
	if done, err := cli.ParseFlags(fs, args); done {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return cli.Silent(cli.Usage)
	}
	path := fs.Arg(0)
	if !strings.HasSuffix(path, ".json") {
		class, err := golden.HostClass(*hc, runner.ProbeHost(ctx))
		if err != nil {
			return cli.Usagef("%v", err)
		}
		path = golden.Path(*dir, class, path)
	}
	g, err := golden.Read(path)
	if errors.Is(err, golden.ErrMissing) {
		if classes := golden.Classes(*dir); len(classes) > 0 {
			return cli.Usagef("%v; host classes with baselines in %s: %s (pass -host-class)", err, *dir, strings.Join(classes, ", "))
		}
	}
	if err != nil {
		return cli.Usagef("%v", err)
	}
	golden.Show(stdout, path, g)
	fmt.Fprintf(stdout, "\n%s\n", sizeStatement(g))
	return nil
}

// sizeStatement says what a gate at the baseline's size detects, from its
// own runs' spreads and the session drift a gate allows (gate.SizeFor):
// the effect it was sized for (golden update -detect), else +20%. The
// case's gate settings are the built-in case's of that name, if any.
func sizeStatement(g *golden.Golden) string {
	effect, what := g.Size.Detect, "sized for"
	if effect == 0 {
		effect, what = 0.2, "not sized for an effect (golden update -detect); at"
	}
	c := &cases.Case{Name: g.Case, Steps: g.Size.Steps}
	if builtin, err := (&cases.Selection{}).Load([]string{g.Case}); err == nil && len(builtin) == 1 {
		c.Gate = builtin[0].Gate
	}
	for _, v := range g.Variants {
		c.Variants = append(c.Variants, cases.Variant{Name: v.Name, Policy: v.Policy})
	}
	s := gate.SizeFor([]*cases.Case{c}, g.Data("baseline"), effect)[0].AtSize(g.Size.Runs)
	return fmt.Sprintf("what a gate sees (%s %s): %s", what, stats.Pct(effect), s)
}

func goldenDiff(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := noFlags("gcjitter golden diff", "usage: gcjitter golden diff OLD.json NEW.json", stderr)
	if done, err := cli.ParseFlags(fs, args); done {
		return err
	}
	if args = fs.Args(); len(args) != 2 {
		fmt.Fprintln(stderr, "usage: gcjitter golden diff OLD.json NEW.json")
		return cli.Silent(cli.Usage)
	}
	var gs [2]*golden.Golden
	for i, p := range args {
		g, err := golden.Read(p)
		if err != nil {
			return cli.Usagef("%v", err)
		}
		gs[i] = g
	}
	if same, err := results.SameInput(args[0], args[1]); err == nil && same {
		fmt.Fprintf(stdout, "%s and %s are identical\n", args[0], args[1])
		return nil
	}
	for _, line := range golden.Changes(gs[0], gs[1]) {
		fmt.Fprintln(stdout, line)
	}
	c := results.Compare(gs[0].Data(args[0]), gs[1].Data(args[1]), results.CompareOptions{})
	fmt.Fprintln(stdout)
	report.TextColor(stdout, c, report.ColorFor(stdout))
	return nil
}
