package stats

import (
	"fmt"
	"math"
	"slices"
	"sort"
)

// TailGC is how much of a run's tail its collections explain: over the
// slowest 1% of steps (at least one), their excess over the median step
// (the p99 excess) and the part of it spent inside collections.
type TailGC struct {
	// Slowest is how many steps the slowest 1% are; WithGC how many of
	// them held a collection.
	Slowest, WithGC int `json:",omitempty"`
	// Excess is the sum over those steps of (step - p50), in ns; InGC the
	// sum of their in-step pauses, each at most its step's excess (a pause
	// cannot explain more than the step lost).
	Excess, InGC float64 `json:",omitempty"`
}

// TailFraction is the share of steps TailOf calls the tail: the slowest
// 1%, the steps p99 describes.
const TailFraction = 0.01

// TailOf explains the tail of steps whose durations and in-step collection
// pauses (ns, index for index) are given.
func TailOf(durs, pauses []float64) TailGC {
	sorted := slices.Clone(durs)
	slices.Sort(sorted)
	return tailOf(durs, pauses, sorted)
}

// tailOf is TailOf given durs sorted: one pass, no second sort (a run can
// have a million steps).
func tailOf(durs, pauses, sorted []float64) TailGC {
	n := len(durs)
	if n == 0 {
		return TailGC{}
	}
	p50 := Quantile(sorted, 0.5)
	t := TailGC{Slowest: max(1, int(math.Ceil(TailFraction*float64(n))))}
	// The slowest are those above the cut, then as many at it as are
	// needed, first by index, so the same steps are chosen every time.
	cut := sorted[n-t.Slowest]
	atCut := t.Slowest - (n - sort.SearchFloat64s(sorted, math.Nextafter(cut, math.Inf(1))))
	for i, d := range durs {
		if d < cut || (d == cut && atCut == 0) {
			continue
		}
		if d == cut {
			atCut--
		}
		excess := math.Max(0, d-p50)
		t.Excess += excess
		if pauses[i] > 0 {
			t.WithGC++
			t.InGC += math.Min(pauses[i], excess)
		}
	}
	return t
}

// Add pools another run's tail into t (the runs or ranks of one job).
func (t TailGC) Add(u TailGC) TailGC {
	return TailGC{Slowest: t.Slowest + u.Slowest, WithGC: t.WithGC + u.WithGC, Excess: t.Excess + u.Excess, InGC: t.InGC + u.InGC}
}

// Share is the fraction of the p99 excess spent in collections; 0 without
// an excess.
func (t TailGC) Share() float64 {
	if t.Excess <= 0 {
		return 0
	}
	return t.InGC / t.Excess
}

// Explained reports whether collections explain most of the tail (the same
// "most" as a GC spike's, GCShareOfExcess): only then can a case that
// reproduces the collections reproduce the tail, or a GC policy change it
// much.
func (t TailGC) Explained() bool { return t.Share() >= GCShareOfExcess }

// String says it in a sentence, plainly when the tail is not GC's.
func (t TailGC) String() string {
	if t.Slowest == 0 {
		return "no steps: nothing to explain"
	}
	s := fmt.Sprintf("GC explains %.0f%% of this job's p99 excess (%d of %d slowest steps held a collection)",
		100*t.Share(), t.WithGC, t.Slowest)
	if !t.Explained() {
		s += "; its tail is elsewhere (data loading, evaluation, checkpoints, the host)"
	}
	return s
}
