package golden

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/gcjitter/gcjitter/internal/cli"
	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/stats"
)

// ScheduleDiff is a variant whose GC schedule differs from its baseline.
type ScheduleDiff struct {
	Variant string
	Lines   []string // stable, one change per line: "gen2 collections: 5 -> 6"
}

// Result is a case checked against its baseline.
type Result struct {
	Golden *Golden
	Path   string
	Env    Env
	// EnvChanges is non-empty when the environment key differs: then a
	// schedule change is the environment's effect, not a failure.
	EnvChanges []string
	Schedule   []ScheduleDiff
	// Census are the variants whose heap census differs from the
	// baseline's; CensusChecked counts the variants compared.
	Census        []CensusDiff
	CensusChecked int
	// ScheduleCompared names the variants whose schedule was compared: a
	// gate run with -filter compares fewer than the baseline holds.
	ScheduleCompared []string
	// Notes explain what was not compared and why.
	Notes []string
}

// ScheduleFailed reports a schedule that changed in the same environment.
func (r *Result) ScheduleFailed() bool { return len(r.Schedule) > 0 && len(r.EnvChanges) == 0 }

// CensusDiff is a variant whose collections walk another heap than the
// baseline's.
type CensusDiff struct {
	Variant  string
	Old, New Census
	// Cost prices the change of the objects a collection of the
	// baseline's top generation walks (stats.CensusCost, from the new
	// timed runs' pauses); nil where those runs made none.
	Cost *stats.Cost
}

// Objects is the change of the objects one collection of the baseline's
// top generation walks, in objects.
func (d CensusDiff) Objects() float64 {
	g := d.Old.Top()
	return d.New.PerCollection(g) - d.Old.PerCollection(g)
}

// Costly: the heap's change adds more than stats.CostFloor of the step
// (or could not be priced and grew).
func (d CensusDiff) Costly() bool {
	if d.Cost == nil || math.IsNaN(d.Cost.Share) {
		return d.Regressed()
	}
	return d.Cost.Share > stats.CostFloor
}

// Change is the relative change of the objects one collection of the
// baseline's top generation walks (0 when that generation has none now).
func (d CensusDiff) Change() float64 {
	g := d.Old.Top()
	if old := d.Old.PerCollection(g); old > 0 && d.New.Collections[max(g, 0)] > 0 {
		return d.New.PerCollection(g)/old - 1
	}
	return 0
}

// Regressed: each collection of the top generation walks more objects, so
// every one of them pauses longer on any host (a framework that keeps more
// objects alive).
func (d CensusDiff) Regressed() bool { return d.Change() > 0 }

// CensusFailed reports a census that changed in the same environment
// (exact, like the schedule: identical specs walk identical heaps), or,
// across an environment change, a heap whose growth costs the step more
// than stats.CostFloor: a framework that keeps more objects alive fails
// through the pause it adds, never on "+0.0%".
func (r *Result) CensusFailed() bool {
	for _, d := range r.Census {
		if len(r.EnvChanges) == 0 || d.Costly() {
			return true
		}
	}
	return false
}

// MismatchError is a baseline that cannot be compared with these runs
// (another device kind, another size): bad input, exit 2.
type MismatchError struct{ Msg string }

func (e *MismatchError) Error() string { return e.Msg }
func (e *MismatchError) ExitCode() int { return cli.Usage }

// SizeMismatch is the error of runs of another length than the baseline's
// (what names them: "these runs", "the planned runs"), nil when they match:
// GC schedules of different lengths cannot be compared.
func (g *Golden) SizeMismatch(path string, steps, warmup int, what string) error {
	if steps == g.Size.Steps && warmup == g.Size.Warmup {
		return nil
	}
	return &MismatchError{fmt.Sprintf("%s: the baseline measured %d steps after %d warm-up, %s %d after %d: the GC schedules cannot be compared; drop -steps/-warmup, or update the baseline",
		path, g.Size.Steps, g.Size.Warmup, what, steps, warmup)}
}

// Check compares a case's completed runs in m with its baseline's GC
// schedule layer. The timing layer is results.Compare on g.Data().
func Check(g *Golden, path string, m *results.Manifest) (*Result, error) {
	res := &Result{Golden: g, Path: path}
	ci := slices.IndexFunc(m.Cases, func(c results.Case) bool { return c.Name == g.Case })
	if ci < 0 {
		return nil, fmt.Errorf("the results hold no runs of case %s", g.Case)
	}
	c := m.Cases[ci]
	if err := g.SizeMismatch(path, c.Steps, c.Warmup, "these runs"); err != nil {
		return nil, err
	}
	res.Env = caseEnv(m, c)
	byVariant := map[string][]stats.RunSummary{}
	for _, r := range m.Runs {
		if r.Case != g.Case || r.Summary == nil {
			continue
		}
		byVariant[r.Variant] = append(byVariant[r.Variant], *r.Summary)
	}
	if res.Env.Device != "" && res.Env.Device != g.Env.Device {
		return nil, &MismatchError{fmt.Sprintf("%s was made on %s (%s); these runs ran on %s: compare a host only with baselines of its own device kind (pass -host-class, or run golden update for this host class)",
			path, g.Env.Device, g.Env.DevName, res.Env.Device)}
	}
	res.EnvChanges = g.Env.Changes(res.Env)
	for _, gv := range g.Variants {
		runs := byVariant[gv.Name]
		switch {
		case len(runs) == 0 && len(c.Variants) > 0 && !slices.ContainsFunc(c.Variants, func(v results.Variant) bool { return v.Name == gv.Name }):
			// Planned variants are listed (manifests before they were say
			// nothing): one not among them was left out, not lost.
			res.Notes = append(res.Notes, fmt.Sprintf("%s/%s: not run (-filter left it out): its schedule was not compared", g.Case, gv.Name))
			continue
		case len(runs) == 0:
			res.Notes = append(res.Notes, fmt.Sprintf("%s/%s: no completed run to compare with the baseline", g.Case, gv.Name))
			continue
		case gv.Schedule == nil:
			res.Notes = append(res.Notes, fmt.Sprintf("%s/%s: the baseline's runs disagreed on the GC schedule; timings only", g.Case, gv.Name))
			continue
		}
		res.ScheduleCompared = append(res.ScheduleCompared, gv.Name)
		var moved *Schedule
		for _, r := range runs {
			if got := scheduleOf(r); got != *gv.Schedule {
				moved = &got
				break
			}
		}
		var lines []string
		if moved != nil {
			lines = diffLines(*gv.Schedule, *moved)
			if !allSame(runs) {
				lines = append(lines, fmt.Sprintf("(the %d runs disagree with each other)", len(runs)))
			}
		}
		if len(lines) > 0 {
			res.Schedule = append(res.Schedule, ScheduleDiff{Variant: gv.Name, Lines: lines})
		}
	}
	for _, gv := range g.Variants {
		got := censusFor(m, g.Case, gv.Name)
		if gv.Census == nil || got == nil {
			continue
		}
		res.CensusChecked++
		if *got != *gv.Census {
			d := CensusDiff{Variant: gv.Name, Old: *gv.Census, New: *got}
			if g := d.Old.Top(); g >= 0 && d.New.PerCollection(g) > 0 && slices.ContainsFunc(byVariant[gv.Name], func(r stats.RunSummary) bool { return r.Collections[g] > 0 }) {
				d.Cost = stats.CensusCost(byVariant[gv.Name], g, d.Old.PerCollection(g), d.New.PerCollection(g))
			}
			res.Census = append(res.Census, d)
		}
	}
	for v := range byVariant {
		if !slices.ContainsFunc(g.Variants, func(gv Variant) bool { return gv.Name == v }) {
			res.Notes = append(res.Notes, fmt.Sprintf("%s/%s is not in the baseline: update it to include the variant", g.Case, v))
		}
	}
	slices.Sort(res.Notes)
	return res, nil
}

// censusHeld counts the baseline's variants that keep a census.
func (r *Result) censusHeld() int {
	n := 0
	for _, gv := range r.Golden.Variants {
		if gv.Census != nil {
			n++
		}
	}
	return n
}

// censusVerdict is a census change in words: in the same environment a
// failure whatever its size; across an environment change a verdict on its
// cost, else the cause it explains.
func (r *Result) censusVerdict(d CensusDiff) string {
	what := fmt.Sprintf("%s objects per gen%d collection (%+.0f objects)", censusPct(d.Change()), d.Old.Top(), d.Objects())
	cost := ""
	if d.Cost != nil {
		cost = ", adding " + d.Cost.String()
	}
	floor := strings.TrimPrefix(stats.Pct(stats.CostFloor), "+")
	switch {
	case len(r.EnvChanges) == 0 && d.Change() > 0:
		return fmt.Sprintf("regressed: %s%s (exact: the same environment walks the same heap)", what, cost)
	case len(r.EnvChanges) == 0:
		return fmt.Sprintf("changed in the same environment: %s%s (exact: the same environment walks the same heap)", what, cost)
	case d.Costly():
		return fmt.Sprintf("regressed: %s%s, beyond the cost floor +%s of the step", what, cost, floor)
	case d.Cost != nil && d.Cost.Share < -stats.CostFloor:
		return fmt.Sprintf("improved: %s%s, beyond the cost floor -%s of the step", what, cost, floor)
	}
	return fmt.Sprintf("explains: %s%s, within the cost floor ±%s of the step: the cause of what the pauses and gc-share show, not a verdict", what, cost, floor)
}

// censusPct prints a census change with one decimal, and a change too
// small for it with two significant digits: one object more in 100,000 is
// "+0.001%", never "+0.0%".
func censusPct(f float64) string {
	if math.Abs(100*f) >= 0.05 {
		return fmt.Sprintf("%+.1f%%", 100*f)
	}
	return fmt.Sprintf("%+.2g%%", 100*f)
}

func allSame(runs []stats.RunSummary) bool {
	for _, r := range runs {
		if scheduleOf(r) != scheduleOf(runs[0]) {
			return false
		}
	}
	return true
}

func diffLines(old, new Schedule) []string {
	var out []string
	for g := range 3 {
		if old.Collections[g] != new.Collections[g] {
			out = append(out, fmt.Sprintf("gen%d collections: %d -> %d", g, old.Collections[g], new.Collections[g]))
		}
	}
	for g := range 3 {
		if old.Collected[g] != new.Collected[g] {
			out = append(out, fmt.Sprintf("gen%d objects collected: %d -> %d", g, old.Collected[g], new.Collected[g]))
		}
	}
	return out
}

// Text writes the schedule layer in stable words: what a reviewer reads.
func (r *Result) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "baseline %s (%s, %s)\n", r.Path, r.Golden.Env.Key(), r.Golden.Provenance.Date)
	if len(r.EnvChanges) > 0 {
		fmt.Fprintf(&b, "environment changed: %s\n", strings.Join(r.EnvChanges, ", "))
	}
	switch {
	case len(r.Schedule) == 0 && len(r.ScheduleCompared) == 0:
		fmt.Fprintf(&b, "GC schedule: not compared in any of %d variants (the notes say why)\n", len(r.Golden.Variants))
	case len(r.Schedule) == 0 && len(r.ScheduleCompared) == len(r.Golden.Variants):
		fmt.Fprintf(&b, "GC schedule: unchanged in all %d variants\n", len(r.ScheduleCompared))
	case len(r.Schedule) == 0:
		fmt.Fprintf(&b, "GC schedule: unchanged in the %d of %d variants compared (the notes say why the rest were not)\n", len(r.ScheduleCompared), len(r.Golden.Variants))
	case len(r.EnvChanges) > 0:
		b.WriteString("GC schedule changed with the environment (the upgrade's effect, not noise):\n")
	default:
		b.WriteString("GC schedule changed in the same environment:\n")
	}
	for _, d := range r.Schedule {
		fmt.Fprintf(&b, "  %s/%s:\n", r.Golden.Case, d.Variant)
		for _, l := range d.Lines {
			fmt.Fprintf(&b, "    %s\n", l)
		}
	}
	switch {
	case r.CensusChecked == 0:
	case len(r.Census) == 0 && r.CensusChecked == r.censusHeld():
		fmt.Fprintf(&b, "heap census: unchanged in all %d variants (the objects every collection walked, exact on any host)\n", r.CensusChecked)
	case len(r.Census) == 0:
		fmt.Fprintf(&b, "heap census: unchanged in the %d of %d variants compared (the objects every collection walked, exact on any host)\n", r.CensusChecked, r.censusHeld())
	default:
		b.WriteString("heap census changed (the objects every collection walked, exact on any host):\n")
	}
	for _, d := range r.Census {
		fmt.Fprintf(&b, "  %s/%s: %s\n    %s -> %s\n", r.Golden.Case, d.Variant, r.censusVerdict(d), d.Old, d.New)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	return b.String()
}
