package gate

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/gcjitter/gcjitter/cases"
	"github.com/gcjitter/gcjitter/golden"
	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/stats"
)

// Power is what a plan can decide before it runs.
type Power struct {
	// Refused is set when a decisive metric cannot be decided: a gate of
	// this size cannot fail. It names the size that can.
	Refused error
	// Warnings are the primary metrics the size cannot decide.
	Warnings []string
	// Detects says, per decisive metric, the smallest change the planned
	// runs detect with stats.DetectPower in its worst variant: what a
	// pass of this gate will be worth, said before it runs.
	Detects string
}

// PlanPower checks, before any run, that the plan's runs against its
// baselines can detect the plan's effect (Options.Detect, a doubling by
// default) in every primary metric (stats.Plan, with the baselines' own
// run-to-run spreads and the gate's whole family). Only the decisive ones
// (stats.Decisive) refuse; what the verdicts could then see is stated
// after the runs (results.Comparison.Sensitivity).
func (p *Plan) PlanPower() Power {
	type caseItems struct {
		c       *cases.Case
		g       *golden.Golden
		oldRuns int
		items   []stats.PlanItem
	}
	var all []caseItems
	family := 0
	for _, c := range p.Cases {
		g := p.Goldens[c.Name]
		// A history baseline holds its nights' runs: more than one night's.
		ci := caseItems{c: c, g: g, oldRuns: g.Size.Runs}
		for _, v := range g.Variants {
			ci.oldRuns = max(ci.oldRuns, len(v.Runs))
			for _, metric := range primaryOf(c) {
				mt, ok := stats.MetricByName(metric)
				// The gate's runs are of the baseline's length.
				if !ok || !mt.Judged(g.Size.Steps, true) {
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
	effect := p.Detect
	if effect <= 0 {
		effect = 1
	}
	var pw Power
	worst := map[string]string{}
	detects := map[string]float64{}
	for _, ci := range all {
		runs := max(ci.c.Runs, p.MaxRuns)
		opt := stats.PlanOptions{OldRuns: ci.oldRuns, NewRuns: runs, Family: family, Alpha: ci.c.Gate.Alpha, Effect: effect}
		for _, it := range ci.items {
			if !slices.Contains(stats.Stated, it.Metric) {
				continue
			}
			d := stats.Plan([]stats.PlanItem{it}, opt).Detectable
			if _, ok := detects[it.Metric]; !ok || d > detects[it.Metric] {
				detects[it.Metric], worst[it.Metric] = d, fmt.Sprintf("%s at %d+%d runs", it.Bench, ci.oldRuns, runs)
			}
		}
		res := stats.Plan(ci.items, opt)
		if res.OK {
			continue
		}
		for i, it := range ci.items {
			if res.Powers[i] >= stats.DetectPower {
				continue
			}
			msg := fmt.Sprintf("%s %s: %d new runs against the baseline's %d detect %s with %.0f%% power (run-to-run spread %s, session drift %s)",
				it.Bench, it.Metric, runs, ci.oldRuns, effectText(effect), 100*res.Powers[i], stats.Pct(it.Spread), stats.Pct(it.Drift))
			// A tail quantile judged under its MinSteps (at one run length,
			// stats.Metric.EqualLengthsFree) that cannot see a doubling
			// warns: such gates ran before without it, and p50 still
			// decides whether one can fail. A change the user stated
			// (-detect) it must see.
			if mt, _ := stats.MetricByName(it.Metric); slices.Contains(stats.Decisive, it.Metric) && pw.Refused == nil && (mt.MinSteps <= ci.g.Size.Steps || p.Detect > 0) {
				// A spread the host's disturbance made is no reason for
				// more runs: the baseline itself is to be remade.
				if bad := p.contamination(ci.c); bad != "" {
					pw.Refused = &PlanError{fmt.Sprintf("this gate cannot fail: %s; %s", msg, bad)}
					continue
				}
				pw.Refused = &PlanError{fmt.Sprintf("%s: %s; %s", cannot(effect), msg, moreRunsAdvice(it, opt, ci.oldRuns, p.History != nil))}
				continue
			}
			pw.Warnings = append(pw.Warnings, msg+": it will likely be unknown")
		}
	}
	var parts []string
	for _, metric := range stats.Stated {
		if d, ok := detects[metric]; ok {
			parts = append(parts, fmt.Sprintf("%s %s (worst: %s)", metric, detectText(d), worst[metric]))
		} else if mt, ok := stats.MetricByName(metric); ok && len(all) > 0 && slices.Contains(stats.Decisive, metric) {
			// Too short a run for the metric's interval: not tested at all,
			// which a pass must not hide.
			parts = append(parts, fmt.Sprintf("%s not tested (its interval needs runs of %d steps)", metric, mt.MinSteps))
		}
	}
	if len(parts) > 0 {
		pw.Detects = fmt.Sprintf("at this size the gate detects, with %.0f%% power and the session drift allowed: %s; a smaller change can pass unseen",
			100*stats.DetectPower, strings.Join(parts, "; "))
	}
	return pw
}

// effectText names the change a plan is sized for.
func effectText(effect float64) string {
	if effect == 1 {
		return "a doubling"
	}
	return "a change of " + stats.Pct(effect)
}

// cannot is what a refused plan means: at the default effect (a doubling)
// the gate could not fail at all; at a stated one it cannot see it.
func cannot(effect float64) string {
	if effect == 1 {
		return "this gate cannot fail"
	}
	return fmt.Sprintf("this gate cannot see %s (-detect)", stats.Pct(effect))
}

// moreRunsAdvice names the new runs that would see the effect against the
// runs the baseline holds, or says that the baseline itself must grow, or,
// where no baseline golden update -detect would make can see it either,
// what limits it: the run-to-run spread, and the session drift a gate
// against another session allows, which no number of runs removes. Advice
// to remake a baseline that is already as large as it would get would
// send the user round in a circle.
func moreRunsAdvice(it stats.PlanItem, opt stats.PlanOptions, oldRuns int, fromHistory bool) string {
	one := stats.Plan([]stats.PlanItem{it}, opt)
	remake := "remake the baseline with more runs (golden update -detect, which sizes them)"
	if fromHistory {
		remake = "take more nights (history:N)"
	}
	if one.MinRuns > 0 {
		return fmt.Sprintf("with -runs %d it can, or %s", one.MinRuns, remake)
	}
	largest := opt
	largest.OldRuns, largest.NewRuns = max(oldRuns, DetectMaxRuns), max(opt.NewRuns, DetectMaxRuns)
	atLargest := stats.Plan([]stats.PlanItem{it}, largest)
	if fromHistory || atLargest.OK {
		return fmt.Sprintf("no number of new runs up to %d can against the baseline's %d: %s", stats.MaxRunsNeeded, oldRuns, remake)
	}
	unlimited := opt
	unlimited.OldRuns, unlimited.NewRuns = stats.MaxRunsNeeded, stats.MaxRunsNeeded
	if floor := stats.Plan([]stats.PlanItem{it}, unlimited).Detectable; it.Drift > 0 && floor > opt.Effect {
		return fmt.Sprintf("no number of new runs up to %d can against the baseline's %d, nor any baseline: the session drift of %s a gate against another session allows leaves %s at any size; "+
			"a same-session A/B (gcjitter ab) allows none, or ask -detect for what this size sees", stats.MaxRunsNeeded, oldRuns, stats.Pct(it.Drift), detectText(floor))
	}
	return fmt.Sprintf("no number of new runs up to %d can against the baseline's %d, nor a baseline of %d runs (golden update -detect's most), which would detect %s at this spread: "+
		"remake the baseline where the host is quieter (golden update -detect, which sizes them)",
		stats.MaxRunsNeeded, oldRuns, largest.OldRuns, detectText(atLargest.Detectable))
}

// CanGate says whether a gate of the cases at their baselines' sizes, with
// timings gated, can fail against the baselines of class in dir: refusal
// is nil, or what such a gate would say before running anything; err is
// a plan that cannot be made at all (a missing baseline, say). A baseline
// whose runs spread wide (sub-millisecond steps, short runs) passes
// golden update yet leaves every gate against it refusing to run (exit 2):
// golden update asks this of what it just wrote, and CI of what ships.
// The cases are copied: New sets their sizes. detect is the change a gate
// -detect would ask for (0: none, a doubling), so that golden update
// -detect says when a gate with the same -detect would be refused.
func CanGate(cs []*cases.Case, dir, class string, host results.Host, detect float64) (refusal, err error) {
	copies := make([]*cases.Case, len(cs))
	for i, c := range cs {
		cc := *c
		copies[i] = &cc
	}
	p, err := New(copies, Options{Dir: dir, Class: class, Host: host, Warmup: -1, Detect: detect})
	if err != nil {
		return nil, err
	}
	return p.PlanPower().Refused, nil
}

// minRunsText: "more than 1000" when no size up to stats.MaxRunsNeeded decides.
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
// timing layer is gated or the user stated the change to see (-detect; a
// plan that cannot see it is refused whatever the timing mode, which one
// calibration point on a loaded host can flip), a warning otherwise; and
// the metrics the size cannot decide as warnings on w (the first five,
// and how many more).
func (p *Plan) CheckPower(w io.Writer, gated bool) error {
	pw := p.PlanPower()
	if pw.Refused != nil {
		if gated || p.Detect > 0 {
			return pw.Refused
		}
		pw.Warnings = append([]string{pw.Refused.Error() + " (timing is reported only: running)"}, pw.Warnings...)
	}
	if pw.Detects != "" {
		fmt.Fprintf(w, "gcjitter gate: %s\n", pw.Detects)
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
			for _, metric := range stats.Decisive {
				// Refusals only: a tail quantile under its MinSteps warns in
				// PlanPower and never refuses.
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
