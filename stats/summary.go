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
	P50, P90, P99, Max float64
	// Spikes counts steps longer than SpikeFactor times the run's median;
	// SpikesWithGC those of them that contain a collection.
	Spikes, SpikesWithGC int
	// Collections, total pause and largest pause per generation, counting
	// collections inside steps and between them.
	Collections [3]int
	PauseNS     [3]float64
	MaxPauseNS  [3]float64
	// GCShare is the fraction of measured step time spent in collections
	// that ran inside steps.
	GCShare float64
}

// Summarize summarises the measured steps of s. A step is a spike when it
// takes more than spikeFactor times the run's median.
func Summarize(s *bench.Stream, spikeFactor float64) RunSummary {
	steps := s.Measured()
	var r RunSummary
	r.Steps = len(steps)
	if len(steps) == 0 {
		return r
	}
	durs := make([]float64, len(steps))
	var total, inStepPause float64
	for i, st := range steps {
		durs[i] = float64(st.DurationNS)
		total += durs[i]
		for _, e := range st.GC {
			r.Collections[e.Gen]++
			p := float64(e.PauseNS)
			r.PauseNS[e.Gen] += p
			r.MaxPauseNS[e.Gen] = math.Max(r.MaxPauseNS[e.Gen], p)
			if e.InStep {
				inStepPause += p
			}
		}
	}
	sorted := slices.Clone(durs)
	slices.Sort(sorted)
	r.P50 = Quantile(sorted, 0.50)
	r.P90 = Quantile(sorted, 0.90)
	r.P99 = Quantile(sorted, 0.99)
	r.Max = sorted[len(sorted)-1]
	limit := spikeFactor * r.P50
	for i, st := range steps {
		if durs[i] > limit {
			r.Spikes++
			for _, e := range st.GC {
				if e.InStep {
					r.SpikesWithGC++
					break
				}
			}
		}
	}
	if total > 0 {
		r.GCShare = inStepPause / total
	}
	return r
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
