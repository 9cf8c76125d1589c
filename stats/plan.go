package stats

import (
	"fmt"
	"math"
	"sort"

	mstats "github.com/aclements/go-moremath/stats"
)

// PlanItem is one metric of one benchmark that a comparison will test,
// with what the baseline says of its run-to-run noise.
type PlanItem struct {
	Bench, Metric string
	// Spread is the run-to-run standard deviation of the logarithms of the
	// metric's per-run values (about its relative spread; Spread computes
	// it from a baseline's runs). 0 or NaN: unknown, PlanDefaultSpread.
	Spread float64
	// Floor is the metric's floor: a verdict needs the interval beyond it.
	Floor float64
	// Drift is the session drift the comparison will add (Options.Drift):
	// a baseline from another session cannot be outrun by more runs.
	Drift float64
}

// PlanOptions say what a plan must reach.
type PlanOptions struct {
	// OldRuns are the baseline's runs, fixed; 0: both sides are planned
	// and run NewRuns.
	OldRuns int
	// NewRuns are the planned runs of the new side.
	NewRuns int
	// Alpha is the family-wise level; 0 means DefaultAlpha.
	Alpha float64
	// Family is the number of tests in the family; 0 means len(items).
	Family int
	// Effect is the relative change every item must detect; 0 means 1, a
	// doubling.
	Effect float64
	// Power is the probability of detecting it; 0 means DetectPower.
	Power float64
}

// PlanResult says whether a plan can decide, and what can.
type PlanResult struct {
	// OK: at the planned size every item detects Effect (a regressed
	// verdict: significant in its family, interval beyond its floor) with
	// Power.
	OK bool
	// Power is the smallest power over the items at the planned size, and
	// Worst the item that has it. Powers are every item's, in order, so
	// that a caller can name each item that cannot decide.
	Power  float64
	Worst  PlanItem
	Powers []float64
	// MinRuns is the smallest number of new runs (runs per side when
	// OldRuns is 0) that is OK; 0 when none up to MaxRunsNeeded is (a
	// one-run baseline against an effect inside its noise, say).
	MinRuns int
	// Detectable is the smallest relative change the worst item detects
	// with Power at the planned size (+Inf: none).
	Detectable float64
	// Level is the per-test level a single change must reach: Alpha over
	// the family (Holm's first step).
	Level  float64
	Reason string
}

// PlanDefaultSpread is the spread Plan assumes for an item whose baseline
// cannot tell (one run, or runs that agree exactly), and PlanMinSpread the
// least it assumes: two runs that happen to agree say little about the
// spread of the next ones.
const (
	PlanDefaultSpread = 0.05
	PlanMinSpread     = 0.01
)

// Spread is the run-to-run standard deviation of the logarithms of
// per-run values (of the values relative to their mean when some are not
// positive), with its degrees of freedom; 0, 0 for fewer than two values.
func Spread(values []float64) (sd float64, df int) {
	if len(values) < 2 {
		return 0, 0
	}
	xs := make([]float64, 0, len(values))
	logs := true
	for _, v := range values {
		if !(v > 0) {
			logs = false
		}
	}
	for _, v := range values {
		if logs {
			v = math.Log(v)
		}
		xs = append(xs, v)
	}
	m := mean(xs)
	ss := 0.0
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	sd = math.Sqrt(ss / float64(len(xs)-1))
	if !logs {
		if sd = relTo(sd, mean(values)); math.IsNaN(sd) {
			sd = 0
		}
	}
	return sd, len(values) - 1
}

// BaselineSpread is the spread a plan should assume for a metric from a
// baseline's per-run values, its runs having the given steps: Spread,
// raised to the rounding noise of a count per 1000 steps (quantumSD).
func BaselineSpread(metric string, values []float64, steps int) float64 {
	sd, _ := Spread(values)
	if len(values) == 0 || !(mean(values) > 0) {
		return sd
	}
	// Relative to the mean, as Spread is (about the spread of logarithms).
	return math.Max(sd, quantumSD(Pair{Metric: metric, OldSteps: []int{steps}}, values, true))
}

// Plan says, before any run, whether the planned runs can reach
// significance in the family for a change of opt.Effect on every item, and
// the smallest size that can. It models the tests Compare will use:
// Student's t on logarithms below RankTestRuns runs a side (power from the
// noncentral t), the U test from there (normal approximation of the
// Hodges-Lehmann interval, and its floor 2/C(n1+n2,n1)), at the level of
// Holm's first step, alpha/m: what a change alone in its family must
// reach. Pure: the spreads come from the baseline the caller holds.
func Plan(items []PlanItem, opt PlanOptions) PlanResult {
	alpha := opt.Alpha
	if alpha <= 0 {
		alpha = DefaultAlpha
	}
	m := opt.Family
	if m <= 0 {
		m = len(items)
	}
	effect := opt.Effect
	if effect <= 0 {
		effect = 1
	}
	power := opt.Power
	if power <= 0 || power >= 1 {
		power = DetectPower
	}
	res := PlanResult{Level: alpha / float64(max(m, 1)), Power: 1, Detectable: 0}
	if len(items) == 0 {
		res.OK, res.MinRuns = true, 1
		res.Reason = "nothing to test"
		return res
	}
	sizes := func(n int) (int, int) {
		if opt.OldRuns > 0 {
			return opt.OldRuns, n
		}
		return n, n
	}
	worst := func(n int) (float64, int) {
		n1, n2 := sizes(n)
		p, w := 1.0, 0
		for i, it := range items {
			if q := planPower(it, n1, n2, effect, res.Level); q < p {
				p, w = q, i
			}
		}
		return p, w
	}
	for _, it := range items {
		n1, n2 := sizes(opt.NewRuns)
		res.Powers = append(res.Powers, planPower(it, n1, n2, effect, res.Level))
	}
	p, w := worst(opt.NewRuns)
	res.Power, res.Worst = p, items[w]
	res.OK = p >= power
	n1, n2 := sizes(opt.NewRuns)
	res.Detectable = math.Inf(1)
	if n1 > 0 && n2 > 0 {
		it := items[w]
		res.Detectable = math.Expm1(math.Log1p(it.Floor) + detectShift(n1, n2, planSpread(it), it.Drift, res.Level, power))
	}
	// The smallest size: a scan where Student's t decides (its power can
	// fall at the switch to the U test when the family's level is below
	// the U test's floor), then bisection, where power only grows.
	ok := func(n int) bool { q, _ := worst(n); return q >= power }
	start := 1
	if opt.OldRuns == 0 {
		start = 2
	}
	for n := start; n < RankTestRuns || (opt.OldRuns > 0 && n < 64); n++ {
		if ok(n) {
			res.MinRuns = n
			break
		}
	}
	if res.MinRuns == 0 && ok(MaxRunsNeeded) {
		lo := RankTestRuns - 1
		if opt.OldRuns > 0 {
			lo = 63
		}
		res.MinRuns = lo + 1 + sort.Search(MaxRunsNeeded-lo, func(i int) bool { return ok(lo + 1 + i) })
	}
	size := fmt.Sprintf("%d+%d runs", n1, n2)
	what := fmt.Sprintf("a change of %s", Pct(effect))
	if effect == 1 {
		what = "a doubling"
	}
	it := res.Worst
	noise := "run-to-run spread " + pctAbs(planSpread(it))
	if it.Drift > 0 {
		noise += ", session drift " + pctAbs(it.Drift)
	}
	res.Reason = fmt.Sprintf("%s detect %s of %s %s (%s) with %.0f%% power at the level %.2g (alpha %.3g over %d tests)",
		size, what, it.Bench, it.Metric, noise, 100*res.Power, res.Level, alpha, m)
	switch {
	case res.OK:
	case res.MinRuns == 0:
		res.Reason += fmt.Sprintf("; no size up to %d runs can", MaxRunsNeeded)
	case opt.OldRuns > 0:
		res.Reason += fmt.Sprintf("; %d new runs against the baseline's %d are needed for %.0f%%", res.MinRuns, opt.OldRuns, 100*power)
	default:
		res.Reason += fmt.Sprintf("; %d runs per side are needed for %.0f%%", res.MinRuns, 100*power)
	}
	return res
}

func planSpread(it PlanItem) float64 {
	switch {
	case !(it.Spread > 0):
		return PlanDefaultSpread
	case it.Spread < PlanMinSpread:
		return PlanMinSpread
	}
	return it.Spread
}

// planPower is the probability that n1+n2 runs call a change of effect on
// item regressed at level.
func planPower(it PlanItem, n1, n2 int, effect, level float64) float64 {
	if n1 < 1 || n2 < 1 || n1+n2 < 3 {
		return 0
	}
	shift := math.Log1p(effect) - math.Log1p(it.Floor)
	if shift <= 0 {
		return 0
	}
	s := planSpread(it)
	inv := 1/float64(n1) + 1/float64(n2)
	if min(n1, n2) >= RankTestRuns && it.Drift == 0 {
		if uMinP(n1, n2) > level {
			return 0
		}
		return mstats.StdNormal.CDF(shift/(s*math.Sqrt(math.Pi/3*inv)) - zCritical(level))
	}
	se, df := tScale(s, it.Drift, n1, n2)
	return tPower(shift/se, tCritical(level, df), df)
}

// MinRunsToDecide is the smallest number of new runs (per side when
// oldRuns is 0) at which Student's t or the U test detects a relative
// change of effect, beyond floor, with DetectPower, for a metric of the
// given run-to-run spread, in a family of the given size at alpha; 0 when
// none up to MaxRunsNeeded does.
func MinRunsToDecide(spread, floor float64, oldRuns int, alpha float64, family int, effect float64) int {
	return Plan([]PlanItem{{Metric: "metric", Spread: spread, Floor: floor}},
		PlanOptions{OldRuns: oldRuns, Alpha: alpha, Family: family, Effect: effect}).MinRuns
}
