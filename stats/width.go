package stats

import "math"

// WideSpan is the widest change interval a report prints, as the ratio of
// its ends' (1+change): beyond a factor of 4 ("+18% [-99.8%, +66829%]" of a
// 2+2 comparison) the interval says nothing a reader can use, and reports
// say "too few runs (needs N)" instead.
const WideSpan = 4.0

// Wide says whether r's change interval is too wide to read (WideSpan, or
// unbounded), and the runs per side that would narrow it within WideSpan
// at the row's level, from the row's own spread and drift: 0 when the
// row has no spread to estimate it from (too few runs for one).
func (r *Row) Wide() (wide bool, needs int) {
	if r.Exact || math.IsNaN(r.Change) {
		return false, 0
	}
	lo, hi := 1+r.ChangeLo, 1+r.ChangeHi
	if lo > 0 && !math.IsInf(hi, 0) && hi/lo <= WideSpan {
		return false, 0
	}
	if math.IsNaN(r.Spread) || r.Spread <= 0 {
		return true, 0
	}
	level := r.Level
	if !(level > 0) {
		level = DefaultAlpha
	}
	target := math.Log(WideSpan) / 2
	for n := max(min(len(r.Old), len(r.New)), 2); n <= MaxRunsNeeded; n++ {
		if halfWidth(n, n, r.Spread, r.Drift, level) < target {
			return true, n
		}
	}
	return true, MaxRunsNeeded
}
