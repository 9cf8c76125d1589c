package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/gcjitter/gcjitter/bench"
	"github.com/gcjitter/gcjitter/cases"
	"github.com/gcjitter/gcjitter/report"
	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/runner"
	"github.com/gcjitter/gcjitter/stats"
)

// commonFlags are the flags every measuring command shares (DESIGN.md's
// contract).
type commonFlags struct {
	out, python, device, hostClass, filter, suite string
	runs, steps, warmup                           int
	seed                                          int64
	reduced                                       bool
}

func (f *commonFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.out, "o", "", "results directory (default gcjitter-results/<suite-or-case>-<time>)")
	fs.IntVar(&f.runs, "runs", 0, "runs per variant (overrides the case)")
	fs.IntVar(&f.steps, "steps", 0, "measured steps per run (overrides the case)")
	fs.IntVar(&f.warmup, "warmup", -1, "warm-up steps per run (overrides the case)")
	fs.StringVar(&f.python, "python", "", "interpreter with torch (default: $GCJITTER_PYTHON, the case's python:, python3, /usr/bin/python3)")
	fs.StringVar(&f.device, "device", "", "device for every case: auto, cpu, cuda[:i], npu[:i] (overrides the case)")
	fs.Int64Var(&f.seed, "seed", 1, "seed of the interleaved run order")
	fs.StringVar(&f.hostClass, "host-class", "", "host class recorded with the results (baselines are kept per host class)")
	fs.StringVar(&f.filter, "filter", "", "run only variants whose name matches this regular expression")
	fs.StringVar(&f.suite, "suite", "quick", "built-in suite to run when no case is named")
	fs.BoolVar(&f.reduced, "reduced", false, "run each case at the reduced size it declares for CI (then -runs, -steps, -warmup apply)")
}

// measuringFormat registers -format on a measuring command: what goes to
// standard output. text is the tables as people read them; any other
// format is the report alone, for a script to parse, and the tables go to
// standard error instead.
func measuringFormat(fs *flag.FlagSet) *string {
	return formatFlag(fs, "text", "`format` of standard output: text, or markdown, json, junit or html (the report alone; the tables then go to standard error)")
}

// humanOut is where a measuring command prints its tables: standard output
// for -format text, standard error otherwise (standard output is the
// report's).
func humanOut(format string, stdout, stderr io.Writer) io.Writer {
	if format == "text" {
		return stdout
	}
	return stderr
}

// printFormat writes d to standard output in format unless it is text (the
// tables already went there); false when that fails.
func printFormat(stdout, stderr io.Writer, cmd, format string, d *report.Doc) bool {
	if format == "text" {
		return true
	}
	if err := report.RenderColor(stdout, format, d, false); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", cmd, err)
		return false
	}
	return true
}

// measuringFlags is the flag set of a command that runs cases, with the
// common flags registered.
func measuringFlags(name string, stderr io.Writer) (*flag.FlagSet, *commonFlags) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	f := new(commonFlags)
	f.register(fs)
	return fs, f
}

// loadCases resolves the case arguments (or the suite) and applies the
// overriding flags. Errors are bad input: exit 2.
func (f *commonFlags) loadCases(args []string) ([]*cases.Case, error) {
	var cs []*cases.Case
	if len(args) == 0 {
		s, err := cases.Suite(f.suite)
		if err != nil {
			return nil, err
		}
		cs = s
	}
	for _, a := range args {
		c, err := cases.Load(a)
		if err != nil {
			return nil, err
		}
		cs = append(cs, c)
	}
	var re *regexp.Regexp
	if f.filter != "" {
		var err error
		if re, err = regexp.Compile(f.filter); err != nil {
			return nil, fmt.Errorf("-filter: %v", err)
		}
	}
	if f.device != "" {
		if err := bench.ValidateDevice(f.device); err != nil {
			return nil, fmt.Errorf("-device: %v", err)
		}
	}
	for _, flagCheck := range []struct {
		name string
		v    int
		min  int
	}{{"runs", f.runs, 0}, {"steps", f.steps, 0}, {"warmup", f.warmup, -1}} {
		if flagCheck.v < flagCheck.min {
			return nil, fmt.Errorf("-%s must be >= 0, got %d", flagCheck.name, flagCheck.v)
		}
	}
	names := map[string]bool{}
	for _, c := range cs {
		if names[c.Name] {
			return nil, fmt.Errorf("case %q named twice", c.Name)
		}
		names[c.Name] = true
		if f.reduced {
			c.ApplyReduced()
		}
		if f.runs > 0 {
			c.Runs = f.runs
		}
		if f.steps > 0 {
			c.Steps = f.steps
		}
		if f.warmup >= 0 {
			c.Warmup = f.warmup
		}
		if f.device != "" {
			c.Workload.Device = f.device
		}
		if re != nil {
			var keep []cases.Variant
			for _, v := range c.Variants {
				if re.MatchString(v.Name) {
					keep = append(keep, v)
				}
			}
			if len(keep) == 0 {
				return nil, fmt.Errorf("-filter %q matches no variant of case %s", f.filter, c.Name)
			}
			c.Variants = keep
		}
	}
	return cs, nil
}

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, f := measuringFlags("gcjitter run", stderr)
	check := fs.Bool("check", false, "evaluate the cases' expect: assertions; exit 1 when one fails")
	format := measuringFormat(fs)
	fs.Usage = func() {
		fmt.Fprint(stderr, "usage: gcjitter run [flags] [case|file ...]\n\nRuns cases (default: the quick suite) and writes a results directory.\n\n")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	cs, err := f.loadCases(fs.Args())
	if err != nil {
		fmt.Fprintf(stderr, "gcjitter run: %v\n", err)
		return exitUsage
	}
	m, dir, code := execute(ctx, f, cs, stderr)
	if m == nil {
		return code
	}
	out := humanOut(*format, stdout, stderr)
	report.RunSummaryText(out, m)
	d := &report.Doc{Kind: "run", Title: "gcjitter run: " + dir, Generated: time.Now(), Manifest: m}
	if err := attachSteps(d, dir); err == nil {
		if _, err := writeReports(dir, "report", d, "html"); err != nil {
			fmt.Fprintf(stderr, "gcjitter run: writing report.html: %v\n", err)
		}
	}
	if *check && !checkExpectations(out, cs, m) && code == exitOK {
		code = exitRegression
	}
	if !printFormat(stdout, stderr, "gcjitter run", *format, d) && code == exitOK {
		code = exitInfra
	}
	return code
}

// checkExpectations evaluates every case's expect: list on the runs that
// completed and prints one line each; false when one failed.
func checkExpectations(w io.Writer, cs []*cases.Case, m *results.Manifest) bool {
	ok := true
	for _, c := range cs {
		if len(c.Expect) == 0 {
			continue
		}
		runs := map[string][]stats.RunSummary{}
		device := ""
		for _, r := range m.Runs {
			if r.Case != c.Name || r.Summary == nil {
				continue
			}
			runs[r.Variant] = append(runs[r.Variant], *r.Summary)
			if device == "" && r.Meta != nil {
				device = r.Meta.Device
			}
		}
		fmt.Fprintf(w, "\ncheck %s (on %s):\n", c.Name, device)
		for _, o := range c.Check(runs, device) {
			fmt.Fprintf(w, "  %s\n", o.Text)
			ok = ok && o.OK
		}
	}
	return ok
}

// execute runs the cases into f.out (or a new directory) and reports how it
// went: the manifest (nil when nothing could be started), the directory and
// the exit code.
func execute(ctx context.Context, f *commonFlags, cs []*cases.Case, stderr io.Writer) (*results.Manifest, string, int) {
	needTorch, casePython := false, ""
	for _, c := range cs {
		if c.Workload.Model != "none" || (c.Workload.Device != "auto" && c.Workload.Device != "cpu") {
			needTorch = true
		}
		if c.Python != "" {
			if casePython != "" && casePython != c.Python {
				fmt.Fprintf(stderr, "gcjitter: cases name different interpreters (%s, %s); run them separately or pass -python\n", casePython, c.Python)
				return nil, "", exitUsage
			}
			casePython = c.Python
		}
	}
	py, from, err := runner.ChoosePython(ctx, f.python, casePython, needTorch)
	if ctx.Err() != nil {
		fmt.Fprintln(stderr, "gcjitter: interrupted before any run started")
		return nil, "", exitInterrupted
	}
	if err != nil {
		fmt.Fprintf(stderr, "gcjitter: %v\n", err)
		return nil, "", exitInfra
	}
	dir := f.out
	if dir == "" {
		label := f.suite
		if len(cs) == 1 {
			label = cs[0].Name
		}
		dir = filepath.Join("gcjitter-results", label+"-"+time.Now().Format("20060102-150405"))
	}
	plan := runner.Plan(cs, f.seed)
	s := &runner.Session{
		Dir: dir, Python: py, PythonFrom: from, Tool: version(), Command: os.Args, Seed: f.seed,
		Progress: newProgress(stderr), HostClass: f.hostClass,
	}
	if s.HostClass == "" {
		s.HostClass = os.Getenv("GCJITTER_HOST_CLASS")
	}
	fmt.Fprintf(stderr, "gcjitter: %d runs of %d case(s) with %s; results in %s\n", len(plan), len(cs), py, dir)
	m, err := s.Execute(ctx, cs, plan)
	if m != nil {
		for _, w := range m.Host.Warnings {
			fmt.Fprintf(stderr, "gcjitter: warning: %s\n", w)
		}
	}
	if err != nil {
		var le *runner.LockedError
		if errors.As(err, &le) || errors.Is(err, runner.ErrResultsExist) {
			fmt.Fprintf(stderr, "gcjitter: %v\n", err)
			return m, dir, exitUsage
		}
		fmt.Fprintf(stderr, "gcjitter: %v\n", err)
		if m != nil && slices.ContainsFunc(m.Runs, func(r *results.Run) bool { return r.Status == results.StatusOK }) {
			fmt.Fprintf(stderr, "gcjitter: completed runs are kept in %s; fix the cause (free space, permissions) and run again with another -o\n", dir)
		}
		return m, dir, exitInfra
	}
	failed := 0
	for _, r := range m.Runs {
		if r.Status == results.StatusFailed {
			failed++
			fmt.Fprintf(stderr, "gcjitter: run %s failed: %s (records: %s, stderr: %s)\n", r.ID, r.Reason,
				filepath.Join(dir, r.Records), filepath.Join(dir, r.Stderr))
			if r.StderrTail != "" {
				fmt.Fprintf(stderr, "  %s\n", strings.ReplaceAll(lastLines(r.StderrTail, 5), "\n", "\n  "))
			}
		}
	}
	switch {
	case m.Interrupted:
		fmt.Fprintf(stderr, "gcjitter: interrupted; completed runs are kept in %s\n", dir)
		return m, dir, exitInterrupted
	case failed > 0:
		fmt.Fprintf(stderr, "gcjitter: %d of %d runs failed; the others are kept in %s\n", failed, len(m.Runs), dir)
		fmt.Fprintf(stderr, "gcjitter: compare and report read the runs that completed; after fixing the cause, run the failed variants again with -filter '%s'\n", failedVariants(m))
		return m, dir, exitInfra
	}
	return m, dir, exitOK
}

// failedVariants is a -filter expression matching the variants with a
// failed run, so the user can rerun just those.
func failedVariants(m *results.Manifest) string {
	var names []string
	for _, r := range m.Runs {
		if r.Status == results.StatusFailed && !slices.Contains(names, r.Variant) {
			names = append(names, r.Variant)
		}
	}
	for i, n := range names {
		names[i] = regexp.QuoteMeta(n)
	}
	return "^(" + strings.Join(names, "|") + ")$"
}
