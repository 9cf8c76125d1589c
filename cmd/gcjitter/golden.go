package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/gcjitter/gcjitter/gate"
	"github.com/gcjitter/gcjitter/golden"
	"github.com/gcjitter/gcjitter/internal/cli"
	"github.com/gcjitter/gcjitter/report"
	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/runner"
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
	m, resDir, names, err := baselineRuns(ctx, f, *from, fs.Args(), stderr)
	if err != nil {
		return err
	}
	opt := golden.UpdateOptions{AllowBusy: *allowBusy}
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
			warnIfCannotGate(stderr, f, args, *dir, class, host)
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
	m2, resDir2, _, err := baselineRuns(ctx, &again, "", rerun, stderr)
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
func warnIfCannotGate(stderr io.Writer, f *commonFlags, args []string, dir, class string, host results.Host) {
	cs, err := f.loadCases(args)
	if err != nil {
		return
	}
	if refusal, err := gate.CanGate(cs, dir, class, host); err == nil && refusal != nil {
		fmt.Fprintf(stderr, "gcjitter golden update: warning: the baselines are written, but a gate against them at their size would refuse to run: %v\n", refusal)
	}
}

// baselineRuns are the runs a baseline is made from: a results directory
// given by -from, or the cases run now (every run must complete).
func baselineRuns(ctx context.Context, f *commonFlags, from string, args []string, stderr io.Writer) (*results.Manifest, string, []string, error) {
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
	if err := gate.PlanBaseline(cs); err != nil {
		// Not refused: the schedule layer is exact and needs one run; the
		// timing layer of a gate against it will be refused until it has
		// the runs named here.
		fmt.Fprintf(stderr, "gcjitter golden update: warning: %v for a timing baseline\n", err)
	}
	m, dir, err := f.launch(stderr).Run(ctx, cs)
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
	return nil
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
