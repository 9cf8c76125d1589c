package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gcjitter/gcjitter/cases"
	"github.com/gcjitter/gcjitter/golden"
	"github.com/gcjitter/gcjitter/internal/atomicfile"
	"github.com/gcjitter/gcjitter/report"
	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/runner"
	"github.com/gcjitter/gcjitter/stats"
)

// hostClassFor resolves the host class (flag, $GCJITTER_HOST_CLASS, or
// derived from this host's device).
func hostClassFor(ctx context.Context, flagValue string) (string, error) {
	return golden.HostClass(flagValue, runner.ProbeHost(ctx))
}

func cmdGate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
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
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if *unknown != "pass" && *unknown != "fail" {
		fmt.Fprintf(stderr, "gcjitter gate: -unknown must be pass or fail, got %q\n", *unknown)
		return exitUsage
	}
	if *timing != "gate" && *timing != "report" {
		fmt.Fprintf(stderr, "gcjitter gate: -timing must be gate or report, got %q\n", *timing)
		return exitUsage
	}
	cs, err := f.loadCases(fs.Args())
	if err != nil {
		fmt.Fprintf(stderr, "gcjitter gate: %v\n", err)
		return exitUsage
	}
	host := runner.ProbeHost(ctx)
	class, err := golden.HostClass(f.hostClass, host)
	if err != nil {
		fmt.Fprintf(stderr, "gcjitter gate: %v\n", err)
		return exitUsage
	}
	f.hostClass = class
	// Every baseline must be there, sound and of this host's device kind
	// before anything runs.
	goldens := map[string]*golden.Golden{}
	var missing, missingArgs []string
	for i, c := range cs {
		path := golden.Path(*dir, class, c.Name)
		g, err := golden.Read(path)
		if errors.Is(err, golden.ErrMissing) {
			missing = append(missing, fmt.Sprintf("no baseline for case %s on host class %s (%s)", c.Name, class, path))
			// The case as given (a file path stays a path): golden update
			// resolves it the same way.
			arg := c.Name
			if fs.NArg() > 0 {
				arg = fs.Arg(i)
			}
			missingArgs = append(missingArgs, arg)
			continue
		}
		if err != nil {
			fmt.Fprintf(stderr, "gcjitter gate: %v\n", err)
			return exitUsage
		}
		if g.Case != c.Name || g.HostClass != class {
			fmt.Fprintf(stderr, "gcjitter gate: %s holds case %s of host class %s, not %s of %s; it was moved or renamed: update it\n", path, g.Case, g.HostClass, c.Name, class)
			return exitUsage
		}
		if kind, why := deviceKindFor(c, host); kind != "" && kind != g.Env.Device {
			fmt.Fprintf(stderr, "gcjitter gate: %s was made on %s (%s), but case %s would run on %s here (%s); nothing was run. Compare a host only with baselines of its own device kind: gate against this host's baselines (-host-class), or run on %s with -device %s where there is one\n",
				path, g.Env.Device, g.Env.DevName, c.Name, kind, why, g.Env.Device, g.Env.Device)
			return exitUsage
		}
		goldens[c.Name] = g
		// Run what the baseline measured, unless a flag says otherwise.
		if f.steps == 0 {
			c.Steps = g.Size.Steps
		}
		if f.warmup < 0 {
			c.Warmup = g.Size.Warmup
		}
		if f.runs == 0 {
			c.Runs = g.Size.Runs
		}
	}
	if len(missing) > 0 {
		for i, msg := range missing {
			if i == len(missing)-1 {
				msg += map[bool]string{true: "; create it on this host with:", false: "; create them on this host with:"}[len(missing) == 1]
			}
			fmt.Fprintf(stderr, "gcjitter gate: %s\n", msg)
		}
		fmt.Fprintf(stderr, "  %s\n", updateCommand(f, *dir, fs, missingArgs))
		return exitUsage
	}
	m, outDir, code := execute(ctx, f, cs, stderr)
	if m == nil || code == exitInterrupted {
		return code
	}
	out := humanOut(*format, stdout, stderr)
	report.RunSummaryText(out, m)
	var text bytes.Buffer
	w := io.MultiWriter(out, &text)
	failed := false
	if *check && !checkExpectations(w, cs, m) {
		failed = true
	}
	fmt.Fprintf(w, "\ngate: host class %s, baselines in %s\n", class, *dir)
	old := results.NewData(filepath.Join(*dir, class))
	var schedules []*golden.Result
	for _, c := range cs {
		g := goldens[c.Name]
		path := golden.Path(*dir, class, c.Name)
		res, err := golden.Check(g, path, m)
		if err != nil {
			fmt.Fprintf(stderr, "gcjitter gate: %v\n", err)
			var me *golden.MismatchError
			if errors.As(err, &me) {
				return exitUsage
			}
			return exitInfra
		}
		fmt.Fprintf(w, "\n%s", res.Text())
		schedules = append(schedules, res)
		if res.ScheduleFailed() {
			failed = true
		}
		old.Merge(g.Data(path))
	}
	newData, err := results.Load(outDir, 0)
	if err != nil {
		fmt.Fprintf(stderr, "gcjitter gate: reading the new results: %v\n", err)
		return exitInfra
	}
	cmp := results.Compare(old, newData, results.CompareOptions{})
	leaveCountsToSchedules(cmp, cs, schedules)
	fmt.Fprintf(w, "\ntiming layer (%s):\n", map[string]string{"gate": "gated", "report": "reported only"}[*timing])
	// The terminal gets colour, gate.txt never does.
	report.TextColor(out, cmp, report.ColorFor(out))
	report.Text(&text, cmp)
	unknowns := 0
	for _, r := range cmp.Rows {
		if r.Verdict == stats.Unknown {
			unknowns++
		}
	}
	if cmp.Regressed() && *timing == "gate" {
		failed = true
	}
	if unknowns > 0 {
		if *unknown == "fail" {
			failed = true
		} else {
			fmt.Fprintf(stderr, "gcjitter gate: warning: %d metrics are unknown (counted as pass; -unknown=fail to fail on them)\n", unknowns)
		}
	}
	if err := atomicfile.Write(filepath.Join(outDir, "gate.txt"), text.Bytes(), 0o644); err != nil {
		fmt.Fprintf(stderr, "gcjitter gate: writing the report: %v\n", err)
		return exitInfra
	}
	d := &report.Doc{Kind: "gate", Title: "gcjitter gate: host class " + class, Generated: time.Now(),
		Comparison: cmp, Schedules: schedules, Manifest: m}
	if err := attachSteps(d, "", outDir); err != nil {
		fmt.Fprintf(stderr, "gcjitter gate: %v\n", err)
		return exitInfra
	}
	// The baselines kept no steps, only their quantile sketches: enough to
	// draw their tails beside the new runs'.
	for _, c := range cs {
		for _, v := range goldens[c.Name].Variants {
			if v.Quantiles == nil {
				continue
			}
			bench := results.BenchName(c.Name, v.Name)
			pair := d.Steps[bench]
			if pair[0] == nil {
				pair[0] = &results.Steps{Sketch: v.Quantiles}
				d.Steps[bench] = pair
			}
		}
	}
	if _, err := writeReports(outDir, "gate", d, "markdown", "json", "junit", "html"); err != nil {
		fmt.Fprintf(stderr, "gcjitter gate: writing the reports: %v\n", err)
		return exitInfra
	}
	fmt.Fprintf(stderr, "gcjitter gate: reports in %s (gate.txt, .md, .json, .junit.xml, .html)\n", outDir)
	if !printFormat(stdout, stderr, "gcjitter gate", *format, d) {
		return exitInfra
	}
	switch {
	case code != exitOK:
		return code
	case failed:
		return exitRegression
	}
	return exitOK
}

// updateCommand is the golden update command that makes the missing
// baselines the way this gate would have run them: the same interpreter,
// size, device, variants and directory, the case arguments as given. It
// works as printed (shell-quoted).
func updateCommand(f *commonFlags, dir string, fs *flag.FlagSet, args []string) string {
	cmd := []string{"gcjitter", "golden", "update", "-golden", dir, "-host-class", f.hostClass}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	for _, name := range []string{"python", "device", "reduced", "runs", "steps", "warmup", "filter"} {
		if !set[name] {
			continue
		}
		if name == "reduced" {
			if f.reduced {
				cmd = append(cmd, "-reduced")
			}
			continue
		}
		cmd = append(cmd, "-"+name, fs.Lookup(name).Value.String())
	}
	if len(fs.Args()) == 0 && f.suite != "quick" {
		cmd = append(cmd, "-suite", f.suite)
	}
	cmd = append(cmd, args...)
	for i, a := range cmd {
		cmd[i] = shellQuote(a)
	}
	return strings.Join(cmd, " ")
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// deviceKindFor is the device kind a case's workers will run on, known
// before any run, and why; "" when only the runs can tell. An explicit
// device is its kind. auto is cpu where the worker does not import torch
// (model none, one rank) or the host has no CUDA or NPU device; on a host
// with one it depends on the interpreter's torch build (a CPU-only torch
// falls back to cpu), which the check after the runs settles.
func deviceKindFor(c *cases.Case, h results.Host) (kind, why string) {
	d := c.Workload.Device
	if d != "auto" && d != "" {
		kind, _, _ := strings.Cut(d, ":")
		return kind, "device " + d
	}
	if c.Workload.Model == "none" && c.Ranks <= 1 {
		return "cpu", "device auto with model none, which runs without torch"
	}
	if len(h.GPUs) > 0 {
		return "", ""
	}
	for _, dev := range []string{"/dev/nvidiactl", "/dev/nvidia0", "/dev/davinci0", "/dev/davinci_manager"} {
		if _, err := os.Stat(dev); err == nil {
			return "", ""
		}
	}
	return "cpu", "device auto on a host without a CUDA or NPU device"
}

func cmdGolden(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: gcjitter golden update|show|diff ...")
		return exitUsage
	}
	switch args[0] {
	case "update":
		return goldenUpdate(ctx, args[1:], stdout, stderr)
	case "show":
		return goldenShow(ctx, args[1:], stdout, stderr)
	case "diff":
		return goldenDiff(args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "gcjitter golden: unknown subcommand %q (want update, show or diff)\n", args[0])
	return exitUsage
}

func goldenUpdate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, f := measuringFlags("gcjitter golden update", stderr)
	dir := fs.String("golden", "golden", "baselines directory")
	from := fs.String("from", "", "make the baselines from this results directory instead of running")
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: gcjitter golden update [flags] [case ...]

Runs the cases (default: the quick suite) on this host, or reads -from a
results directory, and writes golden/<host-class>/<case>.json, printing what
changed against the baseline it replaces.

`)
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	class, err := hostClassFor(ctx, f.hostClass)
	if err != nil {
		fmt.Fprintf(stderr, "gcjitter golden update: %v\n", err)
		return exitUsage
	}
	var m *results.Manifest
	var resDir string
	var names []string
	if *from != "" {
		resDir = *from
		if m, err = results.ReadManifest(resDir); err != nil {
			fmt.Fprintf(stderr, "gcjitter golden update: %v\n", err)
			return exitUsage
		}
		names = fs.Args()
		if len(names) == 0 {
			for _, c := range m.Cases {
				names = append(names, c.Name)
			}
		}
	} else {
		cs, err := f.loadCases(fs.Args())
		if err != nil {
			fmt.Fprintf(stderr, "gcjitter golden update: %v\n", err)
			return exitUsage
		}
		f.hostClass = class
		var code int
		m, resDir, code = execute(ctx, f, cs, stderr)
		if m == nil || code != exitOK {
			fmt.Fprintln(stderr, "gcjitter golden update: not every run completed; no baseline written")
			return code
		}
		for _, c := range cs {
			names = append(names, c.Name)
		}
	}
	for _, name := range names {
		g, err := golden.FromResults(m, resDir, name, class)
		if err != nil { // the results cannot make this baseline: bad input
			fmt.Fprintf(stderr, "gcjitter golden update: %v\n", err)
			return exitUsage
		}
		path := golden.Path(*dir, class, name)
		prev, err := golden.Read(path)
		switch {
		case errors.Is(err, golden.ErrMissing):
			fmt.Fprintf(stdout, "%s: new baseline (%s)\n", path, g.Env.Key())
		case err != nil:
			fmt.Fprintf(stdout, "%s: replacing an unreadable baseline (%v)\n", path, err)
		default:
			fmt.Fprintf(stdout, "%s:\n", path)
			for _, line := range describeChange(prev, g) {
				fmt.Fprintf(stdout, "  %s\n", line)
			}
		}
		if _, err := g.Write(*dir); err != nil {
			fmt.Fprintf(stderr, "gcjitter golden update: writing %s: %v\n", path, err)
			return exitInfra
		}
	}
	return exitOK
}

// describeChange says what an update changes in a baseline.
func describeChange(old, new *golden.Golden) []string {
	var out []string
	if ch := old.Env.Changes(new.Env); len(ch) > 0 {
		out = append(out, "environment changed: "+strings.Join(ch, ", "))
	}
	if old.Size != new.Size {
		out = append(out, fmt.Sprintf("size %d steps x %d runs -> %d x %d", old.Size.Steps, old.Size.Runs, new.Size.Steps, new.Size.Runs))
	}
	for _, nv := range new.Variants {
		var ov *golden.Variant
		for i := range old.Variants {
			if old.Variants[i].Name == nv.Name {
				ov = &old.Variants[i]
			}
		}
		switch {
		case ov == nil:
			out = append(out, nv.Name+": new variant")
		case ov.Schedule == nil || nv.Schedule == nil:
			if (ov.Schedule == nil) != (nv.Schedule == nil) {
				out = append(out, nv.Name+": GC schedule now "+map[bool]string{true: "deterministic", false: "varies between runs"}[nv.Schedule != nil])
			}
		case *ov.Schedule != *nv.Schedule:
			out = append(out, fmt.Sprintf("%s: GC schedule %s -> %s", nv.Name, ov.Schedule, nv.Schedule))
		}
	}
	if len(out) == 0 {
		out = append(out, "GC schedule unchanged; timings refreshed")
	}
	return out
}

func goldenShow(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("gcjitter golden show", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("golden", "golden", "baselines directory")
	hc := fs.String("host-class", "", "host class (default: $GCJITTER_HOST_CLASS, or derived from this host)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: gcjitter golden show [-golden DIR] [-host-class C] CASE|FILE")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return exitUsage
	}
	path := fs.Arg(0)
	if !strings.HasSuffix(path, ".json") {
		class, err := hostClassFor(ctx, *hc)
		if err != nil {
			fmt.Fprintf(stderr, "gcjitter golden show: %v\n", err)
			return exitUsage
		}
		path = golden.Path(*dir, class, path)
	}
	g, err := golden.Read(path)
	if err != nil {
		fmt.Fprintf(stderr, "gcjitter golden show: %v\n", err)
		return exitUsage
	}
	fmt.Fprintf(stdout, "baseline %s\ncase %s on host class %s\nmade %s by %s on %s (%s, %d CPUs)\nenvironment: %s\nsize: %d steps + %d warm-up, %d runs per variant, spikes over %gx the run's median\n",
		path, g.Case, g.HostClass, g.Provenance.Date, g.Provenance.Tool, g.Provenance.Host, g.Provenance.CPUModel, g.Provenance.CPUs,
		g.Env.Key(), g.Size.Steps, g.Size.Warmup, g.Size.Runs, g.Size.SpikeFactor)
	if facts := hostFacts(g.Provenance); facts != "" {
		fmt.Fprintf(stdout, "host facts: %s\n", facts)
	}
	for _, v := range g.Variants {
		sched := "varies between runs (timings only)"
		if v.Schedule != nil {
			sched = v.Schedule.String()
		}
		fmt.Fprintf(stdout, "\n%s (policy %s)\n  GC schedule: %s\n", v.Name, v.Policy, sched)
		if q := v.Quantiles; q != nil {
			fmt.Fprintf(stdout, "  step time, all runs pooled (%d steps): p50 %s, p90 %s, p99 %s, p99.9 %s, max %s\n", q.Steps,
				ms(q.Quantile(0.5)), ms(q.Quantile(0.9)), ms(q.Quantile(0.99)), ms(q.Quantile(0.999)), ms(q.Quantile(1)))
		}
		for _, mt := range []string{"p50", "p99", "max", "spike-rate", "gc-share"} {
			var xs []float64
			for _, r := range v.Runs {
				xs = append(xs, r[mt])
			}
			fmt.Fprintf(stdout, "  %-10s %s\n", mt, runValues(mt, xs))
		}
	}
	return exitOK
}

func runValues(metric string, xs []float64) string {
	var parts []string
	for _, x := range xs {
		switch metric {
		case "p50", "p99", "max":
			parts = append(parts, ms(x))
		case "gc-share":
			parts = append(parts, fmt.Sprintf("%.2f%%", 100*x))
		default:
			parts = append(parts, fmt.Sprintf("%.3g", x))
		}
	}
	return strings.Join(parts, ", ")
}

func goldenDiff(args []string, stdout, stderr io.Writer) int {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		fmt.Fprintln(stderr, "usage: gcjitter golden diff OLD.json NEW.json")
		return exitOK
	}
	if len(args) != 2 {
		fmt.Fprintln(stderr, "usage: gcjitter golden diff OLD.json NEW.json")
		return exitUsage
	}
	var gs [2]*golden.Golden
	for i, p := range args {
		g, err := golden.Read(p)
		if err != nil {
			fmt.Fprintf(stderr, "gcjitter golden diff: %v\n", err)
			return exitUsage
		}
		gs[i] = g
	}
	for _, line := range describeChange(gs[0], gs[1]) {
		fmt.Fprintln(stdout, line)
	}
	c := results.Compare(gs[0].Data(args[0]), gs[1].Data(args[1]), results.CompareOptions{})
	fmt.Fprintln(stdout)
	report.TextColor(stdout, c, report.ColorFor(stdout))
	return exitOK
}

// abSpec is one side of gcjitter ab: an interpreter and environment.
type abSpec struct {
	python string
	env    map[string]string
}

// parseSpec reads a SPEC (contract): comma-separated python=PATH and
// env.NAME=VALUE items.
func parseSpec(s string) (abSpec, error) {
	spec := abSpec{env: map[string]string{}}
	if s == "" {
		return spec, nil
	}
	for _, item := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(item, "=")
		switch {
		case !ok:
			return spec, fmt.Errorf("%q: want python=PATH or env.NAME=VALUE", item)
		case k == "python":
			spec.python = v
		case strings.HasPrefix(k, "env.") && len(k) > 4:
			spec.env[k[4:]] = v
		default:
			return spec, fmt.Errorf("%q: unknown key %q (want python or env.NAME)", item, k)
		}
	}
	return spec, nil
}

func cmdAB(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, f := measuringFlags("gcjitter ab", stderr)
	a := fs.String("a", "", "environment A (the baseline): python=PATH,env.NAME=VALUE,...")
	b := fs.String("b", "", "environment B (the candidate), same form")
	format := measuringFormat(fs)
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: gcjitter ab -a SPEC -b SPEC [flags] case ...

Runs each case in two environments, interleaved on this host, and compares B
against A. SPEC: python=PATH,env.NAME=VALUE,... (e.g. the interpreters of two
virtualenvs, before and after a torch upgrade). Exit 1 when B regresses.

`)
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "gcjitter ab: name at least one case")
		return exitUsage
	}
	var specs [2]abSpec
	for i, s := range []string{*a, *b} {
		spec, err := parseSpec(s)
		if err != nil {
			fmt.Fprintf(stderr, "gcjitter ab: -%c: %v\n", "ab"[i], err)
			return exitUsage
		}
		specs[i] = spec
	}
	cs, err := f.loadCases(fs.Args())
	if err != nil {
		fmt.Fprintf(stderr, "gcjitter ab: %v\n", err)
		return exitUsage
	}
	for i := range specs {
		if specs[i].python == "" {
			continue
		}
		py, _, err := runner.ChoosePython(ctx, specs[i].python, "", true)
		if err != nil {
			fmt.Fprintf(stderr, "gcjitter ab: environment %c: %v\n", "AB"[i], err)
			return exitInfra
		}
		specs[i].python = py
	}
	for _, c := range cs {
		var vs []cases.Variant
		for _, v := range c.Variants {
			for i, side := range []string{"a.", "b."} {
				env := map[string]string{}
				for k, x := range v.Env {
					env[k] = x
				}
				for k, x := range specs[i].env {
					env[k] = x
				}
				vs = append(vs, cases.Variant{Name: side + v.Name, Policy: v.Policy, Env: env, Python: specs[i].python})
			}
		}
		c.Variants = vs
	}
	m, outDir, code := execute(ctx, f, cs, stderr)
	if m == nil || code == exitInterrupted {
		return code
	}
	d, err := results.Load(outDir, 0)
	if err != nil {
		fmt.Fprintf(stderr, "gcjitter ab: %v\n", err)
		return exitInfra
	}
	sides := d.SplitVariants(func(v string) (int, string) {
		if name, ok := strings.CutPrefix(v, "a."); ok {
			return 0, name
		}
		if name, ok := strings.CutPrefix(v, "b."); ok {
			return 1, name
		}
		return -1, ""
	})
	sides[0].Path, sides[1].Path = "A ("+describeSpec(*a)+")", "B ("+describeSpec(*b)+")"
	cmp := results.Compare(sides[0], sides[1], results.CompareOptions{})
	out := humanOut(*format, stdout, stderr)
	report.TextColor(out, cmp, report.ColorFor(out))
	d2 := &report.Doc{Kind: "ab", Title: "gcjitter ab: B against A", Generated: time.Now(), Comparison: cmp, Manifest: m}
	if steps, err := results.LoadSteps(outDir); err == nil {
		d2.Steps = map[string][2]*results.Steps{}
		for bench, s := range steps {
			prefix, variant, _ := strings.Cut(bench, "/variant=")
			side, name := 0, strings.TrimPrefix(variant, "a.")
			if rest, ok := strings.CutPrefix(variant, "b."); ok {
				side, name = 1, rest
			}
			pair := d2.Steps[prefix+"/variant="+name]
			pair[side] = s
			d2.Steps[prefix+"/variant="+name] = pair
		}
	}
	if _, err := writeReports(outDir, "ab", d2, "text", "markdown", "json", "junit", "html"); err != nil {
		fmt.Fprintf(stderr, "gcjitter ab: %v\n", err)
		return exitInfra
	}
	if !printFormat(stdout, stderr, "gcjitter ab", *format, d2) {
		return exitInfra
	}
	switch {
	case code != exitOK:
		return code
	case cmp.Regressed():
		return exitRegression
	}
	return exitOK
}

func describeSpec(s string) string {
	if s == "" {
		return "this environment"
	}
	return s
}

// hostFacts lists what explains a baseline's timings, in the order a
// reader checks them.
func hostFacts(p golden.Provenance) string {
	var parts []string
	add := func(name, v string) {
		if v != "" {
			parts = append(parts, name+" "+v)
		}
	}
	add("kernel", p.Kernel)
	add("governor", p.Governor)
	add("turbo", p.Turbo)
	add("isolated CPUs", p.Isolated)
	if p.LoadAvg > 0 {
		add("1-minute load", fmt.Sprintf("%.2f", p.LoadAvg))
	}
	if p.MemKB > 0 {
		add("memory", fmt.Sprintf("%.1f GiB", float64(p.MemKB)/(1<<20)))
	}
	return strings.Join(parts, ", ")
}

// leaveCountsToSchedules drops the collection-count rows of the cases whose
// environment changed: the schedule layer judges counts exactly, and after
// an upgrade a changed count is the upgrade's effect, reported there, not a
// regression. Timing rows stay: an upgrade that makes p99 worse must fail.
func leaveCountsToSchedules(cmp *results.Comparison, cs []*cases.Case, schedules []*golden.Result) {
	changed := map[string]bool{}
	for _, s := range schedules {
		if len(s.EnvChanges) > 0 {
			changed[s.Golden.Case] = true
		}
	}
	var dropped []string
	for _, c := range cs {
		if !changed[c.Name] {
			continue
		}
		n := len(cmp.Rows)
		cmp.Rows = slices.DeleteFunc(cmp.Rows, func(r *stats.Row) bool {
			return strings.HasPrefix(r.Bench, results.BenchName(c.Name, "")) && strings.HasSuffix(r.Metric, "-collections")
		})
		if len(cmp.Rows) < n {
			dropped = append(dropped, c.Name)
		}
	}
	if len(dropped) > 0 {
		cmp.Notes = append(cmp.Notes, fmt.Sprintf("collection counts of %s are left to the GC-schedule layer: the environment changed, so a changed count is the upgrade's effect (shown above), not a regression", strings.Join(dropped, ", ")))
	}
}
