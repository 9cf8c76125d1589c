// Package fit turns a traced training job (gcjitter trace, gcjitter
// import) into a synthetic case that reproduces its GC schedule on this
// host: the young-garbage rate, the survivors that feed the full
// collections, the long-lived heap they walk, and the step time around
// them, found by running the worker and measuring, not by formula.
package fit

import (
	"context"
	"math"
	"slices"

	"github.com/gcjitter/gcjitter/bench"
	"github.com/gcjitter/gcjitter/stats"
)

// Schedule is what a run says about its collector: the figures a fit
// matches and -check compares.
type Schedule struct {
	Steps int // measured steps, all streams
	// RunPauses are, in a pool of runs (Pool), each run's median
	// full-collection pause: how far runs of the same knobs disagree.
	RunPauses []float64
	// StreamSteps is the longest stream's measured steps: the traced run's
	// size, which the fitted case and its check run at.
	StreamSteps int
	Gen         [3]int // collections per generation in measured steps
	// Gaps are the steps between consecutive full collections, within
	// each stream.
	Gaps        []int
	Gen2PauseNS []float64
	// P50 and P99 are pooled step times; NoGCP50 the median of steps
	// without a collection: the step's own work.
	P50, P99, NoGCP50 float64
	// Heap2 is the long-lived heap (gen-2 objects) a traced stream saw
	// when it began; 0 when unknown.
	Heap2  int64
	Python string // the interpreter that ran it
	// Tail is how much of the slowest steps' excess the collections in
	// them explain, pooled over the streams.
	Tail stats.TailGC
}

// ScheduleOf pools the measured steps of streams (runs or ranks of one job).
func ScheduleOf(streams ...*bench.Stream) Schedule {
	var s Schedule
	var all, quiet []float64
	for _, st := range streams {
		if st.Meta != nil {
			s.Python = st.Meta.Python.Executable
			if len(st.Meta.Heap) == 3 && s.Heap2 == 0 {
				s.Heap2 = st.Meta.Heap[2]
			}
		}
		last := -1
		measured := st.Measured()
		s.StreamSteps = max(s.StreamSteps, len(measured))
		var durs, pauses []float64
		for i, step := range measured {
			s.Steps++
			all = append(all, float64(step.DurationNS))
			if len(step.GC) == 0 {
				quiet = append(quiet, float64(step.DurationNS))
			}
			pause := 0.0
			for _, e := range step.GC {
				if e.InStep {
					pause += float64(e.PauseNS)
				}
				s.Gen[e.Gen]++
				if e.Gen == 2 {
					s.Gen2PauseNS = append(s.Gen2PauseNS, float64(e.PauseNS))
					if last >= 0 {
						s.Gaps = append(s.Gaps, i-last)
					}
					last = i
				}
			}
			durs, pauses = append(durs, float64(step.DurationNS)), append(pauses, pause)
		}
		s.Tail = s.Tail.Add(stats.TailOf(durs, pauses))
	}
	slices.Sort(all)
	slices.Sort(quiet)
	if len(all) > 0 {
		s.P50, s.P99 = stats.Quantile(all, 0.5), stats.Quantile(all, 0.99)
	}
	if len(quiet) > 0 {
		s.NoGCP50 = stats.Quantile(quiet, 0.5)
	}
	return s
}

// Rate is generation g's collections per step.
func (s Schedule) Rate(g int) float64 {
	if s.Steps == 0 {
		return 0
	}
	return float64(s.Gen[g]) / float64(s.Steps)
}

// Period is the median number of steps between full collections; 0 with
// fewer than two in a stream.
func (s Schedule) Period() float64 {
	if len(s.Gaps) == 0 {
		return 0
	}
	g := make([]float64, len(s.Gaps))
	for i, v := range s.Gaps {
		g[i] = float64(v)
	}
	slices.Sort(g)
	return stats.Quantile(g, 0.5)
}

// Gen2Pause is the median full-collection pause (ns); 0 without one. The
// median, not the mean: a run has a handful of full collections, and one
// descheduled by a busy moment of the host (a clean CI run's fit measured
// 65 ms for its 28-reference heap, its check of the same knobs 92 ms)
// moves the mean of a handful by a third.
func (s Schedule) Gen2Pause() float64 {
	if len(s.Gen2PauseNS) == 0 {
		return 0
	}
	return stats.Quantile(slices.Sorted(slices.Values(s.Gen2PauseNS)), 0.5)
}

// relErr is got's relative error against want (0 when both are 0, +Inf
// when only want is).
func relErr(got, want float64) float64 {
	switch {
	case want == 0 && got == 0:
		return 0
	case want == 0:
		return math.Inf(1)
	}
	return got/want - 1
}

// Pool joins the schedules of several runs: counts and steps add up,
// gaps and pauses are pooled, and the step-time figures are the runs'
// medians.
func Pool(runs ...Schedule) Schedule {
	var out Schedule
	var p50, p99, quiet []float64
	for _, s := range runs {
		out.Steps += s.Steps
		out.StreamSteps = max(out.StreamSteps, s.StreamSteps)
		out.Tail = out.Tail.Add(s.Tail)
		for g := range out.Gen {
			out.Gen[g] += s.Gen[g]
		}
		out.Gaps = append(out.Gaps, s.Gaps...)
		out.Gen2PauseNS = append(out.Gen2PauseNS, s.Gen2PauseNS...)
		if len(s.Gen2PauseNS) > 0 {
			out.RunPauses = append(out.RunPauses, s.Gen2Pause())
		}
		p50, p99, quiet = append(p50, s.P50), append(p99, s.P99), append(quiet, s.NoGCP50)
		out.Heap2, out.Python = max(out.Heap2, s.Heap2), s.Python
	}
	med := func(xs []float64) float64 {
		if len(xs) == 0 {
			return 0
		}
		slices.Sort(xs)
		return stats.Quantile(xs, 0.5)
	}
	out.P50, out.P99, out.NoGCP50 = med(p50), med(p99), med(quiet)
	return out
}

// CheckRuns is how many runs -check makes of a fitted case: full
// collections are few per run, and their pause varies from one to the next.
const CheckRuns = 3

// Check runs the fitted knobs CheckRuns times and pools what they did.
func Check(ctx context.Context, run Runner, p Params, steps int) (Schedule, error) {
	var all []Schedule
	for range CheckRuns {
		s, err := run(ctx, p, steps)
		if err != nil {
			return Schedule{}, err
		}
		all = append(all, s)
	}
	return Pool(all...), nil
}
