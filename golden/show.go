package golden

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/gcjitter/gcjitter/internal/cli"
	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/stats"
)

// Show writes what a baseline holds, for people: provenance, environment,
// size, and per variant its schedule, pooled tail and per-run values.
func Show(w io.Writer, path string, g *Golden) {
	fmt.Fprintf(w, "baseline %s\ncase %s on host class %s\nmade %s by %s on %s (%s, %d CPUs)\nenvironment: %s\nsize: %d steps + %d warm-up, %d runs per variant, spike: %s\n",
		path, g.Case, g.HostClass, g.Provenance.Date, g.Provenance.Tool, g.Provenance.Host, g.Provenance.CPUModel, g.Provenance.CPUs,
		g.Env.Key(), g.Size.Steps, g.Size.Warmup, g.Size.Runs, g.Size.SpikeRule())
	if facts := g.Provenance.HostFacts(); facts != "" {
		fmt.Fprintf(w, "host facts: %s\n", facts)
	}
	fmt.Fprintf(w, "host speed (calibration): %s\n", g.Provenance.Calibration)
	for _, v := range g.Variants {
		sched := "varies between runs (timings only)"
		if v.Schedule != nil {
			sched = v.Schedule.String()
		}
		fmt.Fprintf(w, "\n%s (policy %s)\n  GC schedule: %s\n", v.Name, v.Policy, sched)
		if v.Census != nil {
			fmt.Fprintf(w, "  heap census: %s\n", v.Census)
		}
		if q := v.Quantiles; q != nil {
			fmt.Fprintf(w, "  step time, all runs pooled (%d steps): p50 %s, p90 %s, p99 %s, p99.9 %s, max %s\n", q.Steps,
				stats.MS(q.Quantile(0.5)), stats.MS(q.Quantile(0.9)), stats.MS(q.Quantile(0.99)), stats.MS(q.Quantile(0.999)), stats.MS(q.Quantile(1)))
		}
		for _, mt := range []string{"p50", "p99", "max", "spike-rate", "gc-share", "gc-cost"} {
			var xs []float64
			for _, r := range v.Runs {
				if x, ok := r[mt]; ok {
					xs = append(xs, x)
				}
			}
			if len(xs) == 0 {
				continue // a baseline from before the metric, or none measured (no census)
			}
			fmt.Fprintf(w, "  %-10s %s\n", mt, runValues(mt, xs))
		}
	}
}

func runValues(metric string, xs []float64) string {
	var parts []string
	for _, x := range xs {
		switch metric {
		case "p50", "p99", "max":
			parts = append(parts, stats.MS(x))
		case "gc-share":
			parts = append(parts, fmt.Sprintf("%.2f%%", 100*x))
		default:
			parts = append(parts, fmt.Sprintf("%.3g", x))
		}
	}
	return strings.Join(parts, ", ")
}

// HostFacts lists what explains a baseline's timings, in the order a
// reader checks them.
func (p Provenance) HostFacts() string {
	var parts []string
	add := func(name, v string) {
		if v != "" {
			parts = append(parts, name+" "+v)
		}
	}
	add("kernel", p.Kernel)
	if p.MHz > 0 {
		add("clock", fmt.Sprintf("%.0f MHz", p.MHz))
	}
	add("caches", p.Caches)
	add("CPU flags hash", p.FlagsHash)
	add("microcode", p.Microcode)
	if p.ThreadsPerCore > 0 {
		add("threads per core", fmt.Sprint(p.ThreadsPerCore))
	}
	add("governor", p.Governor)
	add("turbo", p.Turbo)
	add("isolated CPUs", p.Isolated)
	if p.LoadAvg > 0 {
		add("1-minute load", fmt.Sprintf("%.2f", p.LoadAvg))
	}
	if p.MemKB > 0 {
		add("memory", fmt.Sprintf("%.1f GiB", float64(p.MemKB)/(1<<20)))
	}
	if p.OtherCPUs != nil {
		add("other load", fmt.Sprintf("up to %.2f CPUs", *p.OtherCPUs))
	}
	return strings.Join(parts, ", ")
}

// Changes says what replacing old with new changes in a baseline, one
// line each.
func Changes(old, new *Golden) []string {
	var out []string
	if ch := old.Env.Changes(new.Env); len(ch) > 0 {
		out = append(out, "environment changed: "+strings.Join(ch, ", "))
	}
	if old.Size != new.Size {
		out = append(out, fmt.Sprintf("size %d steps x %d runs -> %d x %d", old.Size.Steps, old.Size.Runs, new.Size.Steps, new.Size.Runs))
	}
	for _, nv := range new.Variants {
		var ov *Variant
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

// Source is results to make baselines from: a manifest, its directory,
// and the cases to take from it.
type Source struct {
	M     *results.Manifest
	Dir   string
	Names []string
}

// Update writes the baselines of the named cases from a results directory
// and says, per file, what changed against the one it replaces. A case the
// results cannot make a baseline of is bad input (*UpdateError); runs a
// disturbance contaminated are refused (*ContaminatedError) and nothing is
// written.
func Update(w io.Writer, dir, class string, m *results.Manifest, resDir string, names []string, opt UpdateOptions) error {
	return UpdateFrom(w, dir, class, []Source{{m, resDir, names}}, opt)
}

// UpdateOptions are golden update's choices.
type UpdateOptions struct {
	// AllowBusy writes baselines from runs made beside other load
	// (BusyLimit); the baseline's provenance records how much.
	AllowBusy bool
	// Detect is the effect the runs were sized for (Size.Detect).
	Detect float64
}

// UpdateFrom is Update from several results directories (a session and
// the rerun of its disturbed cases), checked for contamination as one
// session.
func UpdateFrom(w io.Writer, dir, class string, srcs []Source, opt UpdateOptions) error {
	// Every baseline is made and checked before any is written: runs a
	// disturbance contaminated are refused, all of them or none written.
	var gs []*Golden
	ms := map[string]*results.Manifest{}
	var dirs []string
	for _, src := range srcs {
		dirs = append(dirs, src.Dir)
		for _, name := range src.Names {
			g, err := FromResults(src.M, src.Dir, name, class)
			if err != nil {
				return &UpdateError{err}
			}
			g.Size.Detect = opt.Detect
			gs = append(gs, g)
			ms[name] = src.M
		}
	}
	refused := &ContaminatedError{Dir: strings.Join(dirs, " and ")}
	var names []string
	for _, g := range gs {
		names = append(names, g.Case)
	}
	for _, c := range Contaminated(Pool(dir, class, gs...), names...) {
		c.IDs = runIDs(ms[c.Case], c.Case, c.Variant)
		refused.Variants = append(refused.Variants, c)
	}
	if !opt.AllowBusy {
		for _, src := range srcs {
			refused.Busy = append(refused.Busy, busyRuns(src.M, src.Names)...)
			refused.CPUs = src.M.Host.CPUs
			if len(src.Names) > 0 && src.M.Calibration.Moved() {
				refused.SpeedMoved = src.M.Calibration
				refused.MovedCases = append(refused.MovedCases, src.Names...)
			}
		}
	}
	if len(refused.Variants) > 0 || len(refused.Busy) > 0 || refused.SpeedMoved != nil {
		return refused
	}
	for _, g := range gs {
		path := Path(dir, class, g.Case)
		prev, err := Read(path)
		switch {
		case errors.Is(err, ErrMissing):
			fmt.Fprintf(w, "%s: new baseline (%s)\n", path, g.Env.Key())
		case err != nil:
			fmt.Fprintf(w, "%s: replacing an unreadable baseline (%v)\n", path, err)
		default:
			fmt.Fprintf(w, "%s:\n  %s\n", path, strings.Join(Changes(prev, g), "\n  "))
		}
		if _, err := g.Write(dir); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
	}
	return nil
}

// Cases are the cases the refusal names, each once, in order.
func (e *ContaminatedError) Cases() []string {
	var out []string
	for _, c := range e.Variants {
		if !slices.Contains(out, c.Case) {
			out = append(out, c.Case)
		}
	}
	for _, b := range e.Busy {
		if !slices.Contains(out, b.Case) {
			out = append(out, b.Case)
		}
	}
	for _, name := range e.MovedCases {
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// UpdateError is results that cannot make a baseline (bad input).
type UpdateError struct{ Err error }

func (e *UpdateError) Error() string { return e.Err.Error() }
func (e *UpdateError) Unwrap() error { return e.Err }
func (e *UpdateError) ExitCode() int { return cli.Usage }
