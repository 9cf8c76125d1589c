package gate

import (
	"fmt"
	"io"
	"slices"

	"github.com/gcjitter/gcjitter/cases"
	"github.com/gcjitter/gcjitter/golden"
	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/stats"
)

// Decisive are the primary metrics a gate must be able to decide at the
// size it runs: the typical step and the tail. A plan that cannot detect
// a doubling of them cannot fail, and is refused; the other primary
// metrics (spike rate, GC share, the worst pause: counts of rare events
// with wide run-to-run spread) are planned too, and a plan that cannot
// decide them is said, not refused.
var Decisive = []string{"p50", "p99"}

// Power is what a plan can decide before it runs.
type Power struct {
	// Refused is set when a decisive metric cannot be decided: a gate of
	// this size cannot fail. It names the size that can.
	Refused error
	// Warnings are the primary metrics the size cannot decide.
	Warnings []string
}

// PlanPower checks, before any run, that the plan's runs against its
// baselines can detect a doubling of every primary metric (stats.Plan,
// with the baselines' own run-to-run spreads and the gate's whole family).
func (p *Plan) PlanPower() Power {
	type caseItems struct {
		c     *cases.Case
		g     *golden.Golden
		items []stats.PlanItem
	}
	var all []caseItems
	family := 0
	for _, c := range p.Cases {
		g := p.Goldens[c.Name]
		ci := caseItems{c: c, g: g}
		for _, v := range g.Variants {
			for _, metric := range primaryOf(c) {
				mt, ok := stats.MetricByName(metric)
				if !ok || mt.MinSteps > g.Size.Steps {
					continue
				}
				var xs []float64
				for _, r := range v.Runs {
					if x, ok := r[metric]; ok {
						xs = append(xs, x)
					}
				}
				if len(xs) == 0 {
					continue // a baseline from before the metric: not judged
				}
				ci.items = append(ci.items, stats.PlanItem{Bench: results.BenchName(c.Name, v.Name), Metric: metric,
					Spread: stats.BaselineSpread(metric, xs, g.Size.Steps), Floor: float64(c.Gate.Floor(metric)),
					Drift: p.SessionDrift(results.BenchName(c.Name, v.Name), metric)})
			}
		}
		family += len(ci.items)
		all = append(all, ci)
	}
	var pw Power
	for _, ci := range all {
		runs := max(ci.c.Runs, p.MaxRuns)
		// A history baseline holds its nights' runs: more than one night's.
		oldRuns := ci.g.Size.Runs
		if len(ci.g.Variants) > 0 {
			oldRuns = max(oldRuns, len(ci.g.Variants[0].Runs))
		}
		opt := stats.PlanOptions{OldRuns: oldRuns, NewRuns: runs, Family: family, Alpha: ci.c.Gate.Alpha}
		res := stats.Plan(ci.items, opt)
		if res.OK {
			continue
		}
		for i, it := range ci.items {
			if res.Powers[i] >= stats.DetectPower {
				continue
			}
			msg := fmt.Sprintf("%s %s: %d new runs against the baseline's %d detect a doubling with %.0f%% power (run-to-run spread %s, session drift %s)",
				it.Bench, it.Metric, runs, ci.g.Size.Runs, 100*res.Powers[i], stats.Pct(it.Spread), stats.Pct(it.Drift))
			if slices.Contains(Decisive, it.Metric) && pw.Refused == nil {
				// A spread the host's disturbance made is no reason for
				// more runs: the baseline itself is to be remade.
				if bad := p.contamination(ci.c); bad != "" {
					pw.Refused = &PlanError{fmt.Sprintf("this gate cannot fail: %s; %s", msg, bad)}
					continue
				}
				pw.Refused = &PlanError{fmt.Sprintf("this gate cannot fail: %s; with -runs %s it can, or remake the baseline with more runs (golden update -runs N)",
					msg, minRunsText(stats.Plan([]stats.PlanItem{it}, stats.PlanOptions{OldRuns: ci.g.Size.Runs, NewRuns: runs, Family: family, Alpha: ci.c.Gate.Alpha}).MinRuns))}
				continue
			}
			pw.Warnings = append(pw.Warnings, msg+": it will likely be unknown")
		}
	}
	return pw
}

// CanGate says whether a gate of the cases at their baselines' sizes, with
// timings gated, can fail against the baselines of class in dir: refusal
// is nil, or what such a gate would say before running anything; err is
// a plan that cannot be made at all (a missing baseline, say). A baseline
// whose runs spread wide (sub-millisecond steps, short runs) passes
// golden update yet leaves every gate against it refusing to run (exit 2):
// golden update asks this of what it just wrote, and CI of what ships.
// The cases are copied: New sets their sizes.
func CanGate(cs []*cases.Case, dir, class string, host results.Host) (refusal, err error) {
	copies := make([]*cases.Case, len(cs))
	for i, c := range cs {
		cc := *c
		copies[i] = &cc
	}
	p, err := New(copies, Options{Dir: dir, Class: class, Host: host, Warmup: -1})
	if err != nil {
		return nil, err
	}
	return p.PlanPower().Refused, nil
}

func minRunsText(n int) string {
	if n == 0 {
		return fmt.Sprintf("more than %d", stats.MaxRunsNeeded)
	}
	return fmt.Sprint(n)
}

// primaryOf is a case's primary metrics: its gate.primary, else the
// default.
func primaryOf(c *cases.Case) []string {
	if len(c.Gate.Primary) > 0 {
		return c.Gate.Primary
	}
	return stats.DefaultPrimary
}

// CheckPower is PlanPower for a command: the refusal as an error when the
// timing layer is gated (a warning otherwise), and the metrics the size
// cannot decide as warnings on w (the first five, and how many more).
func (p *Plan) CheckPower(w io.Writer, gated bool) error {
	pw := p.PlanPower()
	if pw.Refused != nil {
		if gated {
			return pw.Refused
		}
		pw.Warnings = append([]string{pw.Refused.Error() + " (timing is reported only: running)"}, pw.Warnings...)
	}
	for i, msg := range pw.Warnings {
		if i == 5 {
			fmt.Fprintf(w, "gcjitter gate: warning: and %d more metrics this size cannot decide\n", len(pw.Warnings)-i)
			break
		}
		fmt.Fprintf(w, "gcjitter gate: warning: %s\n", msg)
	}
	return nil
}

// PlanAB checks, before any run, that an A/B of the cases at their sizes
// can detect a doubling of p50 and p99 (both sides run the planned runs;
// with no baseline to measure the spread, stats.PlanDefaultSpread): an A/B
// that cannot is refused, naming the runs that can.
// maxRuns, when above a case's runs, is what adaptive rounds may grow to.
func PlanAB(cs []*cases.Case, maxRuns int) error {
	return planBothSides(cs, maxRuns, false, "this A/B cannot fail")
}

// PlanBaseline is PlanAB for the runs of a new baseline: a gate of the same
// size against it must be able to fail.
func PlanBaseline(cs []*cases.Case) error {
	return planBothSides(cs, 0, true, "a gate against this baseline could not fail")
}

// drift: the sides will be of different sessions (a gate against the
// baseline), so the plan allows the cases' session drift.
func planBothSides(cs []*cases.Case, maxRuns int, drift bool, what string) error {
	family := 0
	for _, c := range cs {
		family += len(c.Variants) * len(primaryOf(c))
	}
	for _, c := range cs {
		var items []stats.PlanItem
		for _, v := range c.Variants {
			for _, metric := range Decisive {
				if mt, ok := stats.MetricByName(metric); ok && mt.MinSteps <= c.Steps && slices.Contains(primaryOf(c), metric) {
					it := stats.PlanItem{Bench: results.BenchName(c.Name, v.Name), Metric: metric, Floor: float64(c.Gate.Floor(metric))}
					if drift {
						it.Drift = c.Gate.SessionDrift(metric)
					}
					items = append(items, it)
				}
			}
		}
		runs := max(c.Runs, maxRuns)
		res := stats.Plan(items, stats.PlanOptions{NewRuns: runs, Family: family, Alpha: c.Gate.Alpha})
		if !res.OK {
			return &PlanError{fmt.Sprintf("%s: %d runs a side detect a doubling of %s %s with %.0f%% power (at an assumed run-to-run spread of %s); pass -runs %s",
				what, runs, res.Worst.Bench, res.Worst.Metric, 100*res.Power, stats.Pct(stats.PlanDefaultSpread), minRunsText(res.MinRuns))}
		}
	}
	return nil
}
