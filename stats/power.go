package stats

import (
	"math"

	mstats "github.com/aclements/go-moremath/stats"
)

// testScale returns the row's change d and its floor on the test's own
// scale (logarithms, or relative to old's mean), the scale of Spread.
func testScale(r *Row) (d, floor float64) {
	switch {
	case r.logs && (r.Test == TestTLog):
		return r.est, math.Log1p(r.Floor)
	case r.logs:
		return math.Log1p(r.Change), math.Log1p(r.Floor)
	case r.Test == TestT && r.base != 0:
		return r.est / math.Abs(r.base), r.Floor
	}
	return r.Change, r.Floor
}

// halfWidth is the interval's expected half-width on the test's scale for
// n1 and n2 runs of the given spread at the given level: Student's t for
// small samples, the Hodges-Lehmann interval (asymptotic variance
// pi/3·sigma²·(1/n1+1/n2) under normality) from RankTestRuns on, +Inf where
// the U test cannot reach the level.
func halfWidth(n1, n2 int, spread, drift, level float64) float64 {
	inv := 1/float64(n1) + 1/float64(n2)
	if min(n1, n2) >= RankTestRuns && drift == 0 {
		if uMinP(n1, n2) > level {
			return math.Inf(1)
		}
		return zCritical(level) * spread * math.Sqrt(math.Pi/3*inv)
	}
	if n1+n2 < 3 {
		return math.Inf(1)
	}
	se, df := tScale(spread, drift, n1, n2)
	return tCritical(level, df) * se
}

// detectShift is the shift, on the test's scale, beyond a floor on that
// scale, that n1 and n2 runs of the given spread detect with the given
// power at the given level.
func detectShift(n1, n2 int, spread, drift, level, power float64) float64 {
	inv := 1/float64(n1) + 1/float64(n2)
	if min(n1, n2) >= RankTestRuns && drift == 0 {
		if uMinP(n1, n2) > level {
			return math.Inf(1)
		}
		return (zCritical(level) - mstats.StdNormal.InvCDF(1-power)) * spread * math.Sqrt(math.Pi/3*inv)
	}
	if n1+n2 < 3 {
		return math.Inf(1)
	}
	se, df := tScale(spread, drift, n1, n2)
	return tNoncentrality(level, df, power) * se
}

// tScale is the standard error of a difference of means of n1 and n2 runs
// of the given run-to-run spread, when each side's session is shifted by
// a drift of the given standard deviation, with its degrees of freedom:
// Welch-Satterthwaite's, the drift being a known variance (infinite
// degrees of freedom). Without drift, Student's pooled test: n1+n2-2.
func tScale(spread, drift float64, n1, n2 int) (se, df float64) {
	within := spread * spread * (1/float64(n1) + 1/float64(n2))
	df = float64(n1 + n2 - 2)
	if drift > 0 {
		total := within + drift*drift
		// Rounded: the critical values are cached by degrees of freedom.
		df = math.Min(math.Round(100*df*total*total/(within*within))/100, 1e6)
		if within == 0 {
			df = 1e6
		}
		within = total
	}
	return math.Sqrt(within), df
}

// detectable is the smallest relative change beyond the floor that the
// row's size and spread detect with DetectPower at level.
func detectable(r *Row, level float64) float64 {
	if math.IsNaN(r.Spread) {
		return math.NaN()
	}
	_, fl := testScale(r)
	d := fl + detectShift(len(r.Old), len(r.New), r.Spread, r.Drift, level, DetectPower)
	if r.logs {
		return math.Expm1(d)
	}
	return d
}

// runsNeeded estimates the runs per side that would likely decide an
// unknown: the smallest n for which the interval's expected half-width
// (at the family's first Holm step, alpha/m) is less than the distance
// between the estimate and the floor.
func runsNeeded(r *Row, alpha float64) int {
	n0 := min(len(r.Old), len(r.New))
	if r.oldFixed {
		n0 = len(r.New)
	}
	d, fl := testScale(r)
	e := math.Abs(d)
	target := math.Abs(e - fl)
	if target < 0.25*math.Max(fl, 0.01) || math.IsInf(e, 0) || math.IsNaN(e) || math.IsNaN(r.Spread) {
		return 0 // the estimate sits at the floor: more runs may never decide
	}
	level := alpha / float64(max(r.FamilySize, 1))
	ok := func(n int) bool { return halfWidth(n, n, r.Spread, r.Drift, level) < target }
	if r.oldFixed {
		// Only the new side grows: the old side's runs bound the
		// interval however many new runs there are.
		ok = func(n int) bool { return halfWidth(len(r.Old), n, r.Spread, r.Drift, level) < target }
	}
	if !ok(MaxRunsNeeded) {
		return MaxRunsNeeded
	}
	lo, hi := n0, MaxRunsNeeded // ok(hi); lo is not known to be ok
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if ok(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return max(hi, n0+1)
}

// MoreRuns is how many runs to add to the smaller side (with OldFixed,
// the new side) to reach RunsNeeded: what an unknown verdict asks for.
func (r *Row) MoreRuns() int {
	if r.oldFixed {
		return max(0, r.RunsNeeded-len(r.New))
	}
	return max(0, r.RunsNeeded-min(len(r.Old), len(r.New)))
}

// MaxRunsNeeded caps RunsNeeded: beyond it, more runs is not the answer.
const MaxRunsNeeded = 1000
