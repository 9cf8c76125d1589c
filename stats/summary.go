// Package stats turns record streams into numbers: per-run summaries here,
// and (with the comparison) tail statistics and verdicts built on
// golang.org/x/perf's benchmath.
//
// The run is the statistical unit: the steps of one process share a memory
// layout, a hash seed and a periodic GC schedule, so they are not
// independent. A run is summarised by a handful of values (its median, its
// tail quantiles, its spike count, its collections), and comparisons treat
// those per-run values as the samples.
package stats

import (
	"math"
	"slices"

	"github.com/gcjitter/gcjitter/bench"
)

// RunSummary is what one run measured, over its measured (non-warm-up) steps.
type RunSummary struct {
	Steps int
	// Step-time quantiles and maximum, in nanoseconds.
	P50, P90, P99, P999, Max float64
	// Spikes counts steps longer than SpikeFactor times the run's median;
	// SpikesWithGC those of them that contain a collection.
	Spikes, SpikesWithGC int
	// SpikesWithGen2 counts the spikes that contain a full collection, out
	// of Gen2Steps, the steps that contain one.
	SpikesWithGen2 int
	Gen2Steps      int `json:",omitempty"`
	// Unscheduled counts collections other than the policy's own scheduled
	// gc.collect: under a manual policy it must be 0.
	Unscheduled int
	// SpikePeriod is the number of steps between spikes with a collection
	// in them when most of those (2/3, at least 3) recur on a regular
	// lattice, and 0 when they do not.
	SpikePeriod float64
	// Collections, total pause and largest pause per generation, counting
	// collections inside steps and between them.
	Collections [3]int
	// Collected counts the objects the collections freed, per generation.
	Collected  [3]int64
	PauseNS    [3]float64
	MaxPauseNS [3]float64
	// GCShare is the fraction of measured step time spent in collections
	// that ran inside steps.
	GCShare float64
	// Multi-rank runs only (see RankSummary): the amplification of spikes
	// by unsynchronised ranks, the global spikes whose slowest rank was in
	// a collection, and the global spikes off every scheduled step.
	Amplification     float64 `json:",omitempty"`
	OverWorstRank     float64 `json:",omitempty"`
	StragglerInGC     int     `json:",omitempty"`
	UnscheduledSpikes int     `json:",omitempty"`
}

// Summarize summarises the measured steps of s. A step is a spike when it
// takes more than spikeFactor times the run's median.
func Summarize(s *bench.Stream, spikeFactor float64) RunSummary {
	var sm Summarizer
	for _, st := range s.Steps {
		sm.Add(st)
	}
	return sm.Result(spikeFactor)
}

// Summarizer summarises a run one step at a time, keeping only what the
// summary needs (a duration and a flag per step), so a run of a million
// steps never has to be held as records.
type Summarizer struct {
	durs    []float64
	inGC    []uint8 // per step: inGC|inGen2 bits for collections inside it
	r       RunSummary
	total   float64
	inPause float64
}

const (
	inGC   = 1 << iota // a collection ran inside the step
	inGen2             // a full collection did
)

// Add takes one step; warm-up steps are ignored.
func (sm *Summarizer) Add(st *bench.Step) {
	if st.Warmup {
		return
	}
	d := float64(st.DurationNS)
	sm.durs = append(sm.durs, d)
	sm.total += d
	var in uint8
	for _, e := range st.GC {
		sm.r.Collections[e.Gen]++
		sm.r.Collected[e.Gen] += e.Collected
		p := float64(e.PauseNS)
		sm.r.PauseNS[e.Gen] += p
		sm.r.MaxPauseNS[e.Gen] = math.Max(sm.r.MaxPauseNS[e.Gen], p)
		if !(e.Manual && st.Scheduled) {
			sm.r.Unscheduled++
		}
		if e.InStep {
			sm.inPause += p
			in |= inGC
			if e.Gen == 2 {
				in |= inGen2
			}
		}
	}
	sm.inGC = append(sm.inGC, in)
}

// Result is the summary of the steps added so far.
func (sm *Summarizer) Result(spikeFactor float64) RunSummary {
	r := sm.r
	r.Steps = len(sm.durs)
	if r.Steps == 0 {
		return r
	}
	sorted := slices.Clone(sm.durs)
	slices.Sort(sorted)
	r.P50 = Quantile(sorted, 0.50)
	r.P90 = Quantile(sorted, 0.90)
	r.P99 = Quantile(sorted, 0.99)
	r.P999 = Quantile(sorted, 0.999)
	r.Max = sorted[len(sorted)-1]
	limit := spikeFactor * r.P50
	var spikes []int
	for i, d := range sm.durs {
		if sm.inGC[i]&inGen2 != 0 {
			r.Gen2Steps++
		}
		if d > limit {
			r.Spikes++
			if sm.inGC[i]&inGC != 0 {
				r.SpikesWithGC++
				// The period is the collector's: stalls the host makes
				// are not periodic and would only hide it.
				spikes = append(spikes, i)
			}
			if sm.inGC[i]&inGen2 != 0 {
				r.SpikesWithGen2++
			}
		}
	}
	if sm.total > 0 {
		r.GCShare = sm.inPause / sm.total
	}
	r.SpikePeriod = period(spikes)
	return r
}

// period finds the spacing of spikes that recur regularly, tolerating
// stray spikes (noise) among them. Each observed gap P of at least 3 steps
// is tried as a lattice anchored at each spike (a spike fits within 5% of
// P). A lattice counts when it holds at least 3 spikes, 2/3 of all spikes
// fit it, and 2/3 of its points between the first and last hit are hit;
// the one with the most hits wins (ties: closest to the median gap). 0
// when no lattice counts.
func period(spikes []int) float64 {
	if len(spikes) < 3 {
		return 0
	}
	gaps := make([]float64, 0, len(spikes)-1)
	for i := 1; i < len(spikes); i++ {
		gaps = append(gaps, float64(spikes[i]-spikes[i-1]))
	}
	slices.Sort(gaps)
	med := Quantile(gaps, 0.5)
	bestP, bestHits := 0, 0
	tried := map[int]bool{}
	for _, g := range gaps {
		p := int(g)
		if p < 3 || tried[p] {
			continue
		}
		tried[p] = true
		tol := max(1, p/20)
		for _, anchor := range spikes {
			hits := map[int]bool{}
			fit, kmin, kmax := 0, math.MaxInt, math.MinInt
			for _, s := range spikes {
				d := s - anchor
				k := int(math.Round(float64(d) / float64(p)))
				if abs(d-k*p) <= tol {
					fit++
					hits[k] = true
					kmin, kmax = min(kmin, k), max(kmax, k)
				}
			}
			n := len(hits)
			if n < 3 || 3*fit < 2*len(spikes) || 3*n < 2*(kmax-kmin+1) {
				continue
			}
			closer := math.Abs(float64(p)-med) < math.Abs(float64(bestP)-med)
			if n > bestHits || (n == bestHits && closer) {
				bestP, bestHits = p, n
			}
		}
	}
	return float64(bestP)
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// Quantile returns the q-quantile of sorted data by linear interpolation
// between order statistics (Hyndman and Fan's type 7, numpy's default).
func Quantile(sorted []float64, q float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	pos := q * float64(n-1)
	i := int(math.Floor(pos))
	if i >= n-1 {
		return sorted[n-1]
	}
	return sorted[i] + (pos-float64(i))*(sorted[i+1]-sorted[i])
}
