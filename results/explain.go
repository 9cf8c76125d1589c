package results

import (
	"math"

	"github.com/gcjitter/gcjitter/stats"
)

// The parts a change of the step and its tail is explained by, in the
// order the reports print them.
const (
	PartFrequency = "collection frequency (schedule)"
	PartHeap      = "heap walked (census)"
	PartCost      = "cost per object walked"
	PartSteps     = "the steps themselves"
	PartTotal     = "total"
)

// Part is one part of a benchmark's change, B against A: what it adds to
// the time per step (ns; the mean step and the collections between steps),
// to the GC share (in points: 0.01 is one percentage point), and to the
// mean of the slowest 1% of steps (ns: the steps p99 describes).
type Part struct {
	Name              string
	Step, Share, Tail float64
}

// Explanation is a benchmark's change split into its parts: how much comes
// from collections being more or less frequent, from a bigger heap walked
// (the census), from the collector's cost per object (per collection for
// the young generations, which have no census), and from the steps
// themselves. The parts of each column sum to its total (an exact
// sequential decomposition: frequency at A's pause, heap at A's cost per
// object, cost at B's heap and frequency; the GC share's split is its
// first-order one at the sides' midpoint; the tail's share of slow steps
// holding a collection moves with the schedule's rate, and beyond it with
// the steps).
type Explanation struct {
	Bench string
	Parts []Part // PartFrequency, PartHeap, PartCost, PartSteps, PartTotal
	// OldStep, OldShare and OldTail are A's time per step, GC share and
	// mean slowest-1% step: what the parts are relative to.
	OldStep, OldShare, OldTail float64
	// Census: the heap walked was measured on both sides (else its part is
	// 0 and the cost part is per full collection).
	Census bool
}

// side are one side's pooled figures for Explain.
type side struct {
	perStep  [3]float64 // collections per step
	pause    [3]float64 // mean pause per collection
	walk     float64    // objects per full collection (census), 0 unknown
	work     float64    // the step less its in-step pauses, per step
	gc       float64    // every pause, per step
	share    float64    // gc / (work + gc)
	p50      float64
	tailF    float64 // share of the slowest 1% that held a collection
	tailG    float64 // mean in-step pause of those that did
	tailRest float64 // mean excess over p50 of the slowest 1%, pauses aside
}

func sideOf(runs []stats.RunSummary) (side, bool) {
	var s side
	var steps, slowest, withGC, excess, inGC float64
	var colls [3]float64
	var p50s []float64
	for _, r := range runs {
		if r.Steps == 0 || r.Tail == nil {
			return s, false
		}
		n := float64(r.Steps)
		steps += n
		mean := r.Mean
		if mean <= 0 {
			mean = r.P50
		}
		s.work += mean * n * (1 - r.GCShare)
		for g := range 3 {
			colls[g] += float64(r.Collections[g])
			s.pause[g] += r.PauseNS[g]
			s.gc += r.PauseNS[g]
		}
		slowest += float64(r.Tail.Slowest)
		withGC += float64(r.Tail.WithGC)
		excess += r.Tail.Excess
		inGC += r.Tail.InGC
		p50s = append(p50s, r.P50)
		if r.FullWalk > 0 {
			s.walk = r.FullWalk
		}
	}
	if steps == 0 || slowest == 0 {
		return s, false
	}
	for g := range 3 {
		s.perStep[g] = colls[g] / steps
		if colls[g] > 0 {
			s.pause[g] /= colls[g]
		}
	}
	s.work /= steps
	s.gc /= steps
	s.share = s.gc / (s.work + s.gc)
	stats.SortFloat64s(p50s)
	s.p50 = stats.Quantile(p50s, 0.5)
	s.tailF = withGC / slowest
	if withGC > 0 {
		s.tailG = inGC / withGC
	}
	s.tailRest = (excess - inGC) / slowest
	return s, true
}

// Explain splits each benchmark's change into its parts, where both sides
// have run summaries (results directories: ab, compare; a baseline keeps
// none, and the gate's schedule and census layers name its mechanism).
func (c *Comparison) Explain() []Explanation {
	var out []Explanation
	seen := map[string]bool{}
	for _, r := range c.Rows {
		if seen[r.Bench] {
			continue
		}
		seen[r.Bench] = true
		a, okA := sideOf(c.Old.Runs[r.Bench])
		b, okB := sideOf(c.New.Runs[r.Bench])
		if !okA || !okB {
			continue
		}
		out = append(out, explain(r.Bench, a, b))
	}
	return out
}

func explain(bench string, a, b side) Explanation {
	e := Explanation{Bench: bench, OldStep: a.work + a.gc, OldShare: a.share, OldTail: a.p50 + a.tailF*a.tailG + a.tailRest}
	// The heap's growth factor for full collections; 1 without a census on
	// both sides (its part then stays in the cost per collection).
	heap := 1.0
	if a.walk > 0 && b.walk > 0 {
		heap, e.Census = b.walk/a.walk, true
	}
	var freq, heapPart, cost float64
	for g := range 3 {
		freq += (b.perStep[g] - a.perStep[g]) * a.pause[g]
		if g == 2 {
			heapPart += b.perStep[g] * a.pause[g] * (heap - 1)
			cost += b.perStep[g] * (b.pause[g] - a.pause[g]*heap)
		} else {
			cost += b.perStep[g] * (b.pause[g] - a.pause[g])
		}
	}
	work := b.work - a.work
	// The GC share's first-order split at the midpoint: d(G/(G+w)) =
	// (w dG - G dw)/(G+w)^2.
	w, g := (a.work+b.work)/2, (a.gc+b.gc)/2
	dShareGC, dShareWork := 0.0, 0.0
	if w+g > 0 {
		dShareGC = w / ((w + g) * (w + g))
		dShareWork = -g / ((w + g) * (w + g))
	}
	// The tail: slowest 1% = p50 + (share holding a collection) x (its
	// pause) + the rest of their excess. The schedule moves the share by
	// the collections' rate (the full ones' where both sides make them:
	// they are the slow steps' collections); the share moving beyond that
	// is which steps happened to be slowest, and goes with the steps.
	rate := func(s side) float64 { return s.perStep[0] + s.perStep[1] + s.perStep[2] }
	if a.perStep[2] > 0 && b.perStep[2] > 0 {
		rate = func(s side) float64 { return s.perStep[2] }
	}
	scheduled := a.tailF
	if rate(a) > 0 {
		scheduled = math.Min(1, a.tailF*rate(b)/rate(a))
	}
	tailFreq := (scheduled - a.tailF) * a.tailG
	tailHeap := b.tailF * a.tailG * (heap - 1)
	tailCost := b.tailF * (b.tailG - a.tailG*heap)
	tailSteps := (b.p50 - a.p50) + (b.tailRest - a.tailRest) + (b.tailF-scheduled)*a.tailG
	e.Parts = []Part{
		{PartFrequency, freq, freq * dShareGC, tailFreq},
		{PartHeap, heapPart, heapPart * dShareGC, tailHeap},
		{PartCost, cost, cost * dShareGC, tailCost},
		{PartSteps, work, work * dShareWork, tailSteps},
	}
	var total Part
	total.Name = PartTotal
	for _, p := range e.Parts {
		total.Step += p.Step
		total.Share += p.Share
		total.Tail += p.Tail
	}
	e.Parts = append(e.Parts, total)
	for i := range e.Parts {
		for _, f := range []*float64{&e.Parts[i].Step, &e.Parts[i].Share, &e.Parts[i].Tail} {
			if math.IsNaN(*f) || math.IsInf(*f, 0) {
				*f = 0
			}
		}
	}
	return e
}
