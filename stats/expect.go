package stats

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// A variant-level quantity that a case's expect: assertions test. Timings
// are the median over runs; counts and shares are pooled over all runs, so
// one run with an unscheduled collection is not hidden by the others.
type aggregate struct {
	name, doc string
	value     func(runs []RunSummary) float64
}

var aggregates = []aggregate{
	{"p50", "median over runs of each run's median step time (ns)", medianOf(func(r RunSummary) float64 { return r.P50 })},
	{"p90", "median over runs of p90 (ns)", medianOf(func(r RunSummary) float64 { return r.P90 })},
	{"p99", "median over runs of p99 (ns)", medianOf(func(r RunSummary) float64 { return r.P99 })},
	{"max", "median over runs of the longest step (ns)", medianOf(func(r RunSummary) float64 { return r.Max })},
	{"gc-share", "median over runs of the share of step time in collections", medianOf(func(r RunSummary) float64 { return r.GCShare })},
	{"spike-rate", "spikes per 1000 steps, pooled", pooledPerK(func(r RunSummary) int { return r.Spikes })},
	{"gc-spikes", "GC spikes (the collections in them explain most of the excess), per 1000 steps, pooled", pooledPerK(func(r RunSummary) int { return r.SpikesWithGC })},
	{"gc-spike-share", "share of spikes that are GC spikes (their collections explain most of the excess), pooled (no spikes: 0)", pooledShare(func(r RunSummary) int { return r.SpikesWithGC })},
	{"gen2-spike-share", "share of spikes that are GC spikes with a full collection, pooled (no spikes: 0); host stalls lower it", pooledShare(func(r RunSummary) int { return r.SpikesWithGen2 })},
	{"gen2-spiking-share", "share of the steps with a full collection in them that are GC spikes, pooled (no such step: 0); host stalls cannot lower it", pooledOf(func(r RunSummary) (int, int) { return r.SpikesWithGen2, r.Gen2Steps })},
	{"gen2-excess", "median over runs of the gen-2 excess: how much longer the steps with a full collection are than the others, as a fraction of the typical step (host-speed independent; 0 without full collections)", medianOf(func(r RunSummary) float64 { return r.Gen2Excess })},
	{"gen2-excess-p", "largest over runs of the within-run U test's p-value that steps with a full collection are longer (1 without them): small when every run shows the shift", maxOf(func(r RunSummary) float64 { return r.Gen2ExcessP })},
	{"spike-period", "median over runs of the spike period in steps (0: not periodic)", medianOf(func(r RunSummary) float64 { return r.SpikePeriod })},
	{"gen0-collections", "gen-0 collections per 1000 steps, pooled", pooledPerK(func(r RunSummary) int { return r.Collections[0] })},
	{"gen1-collections", "gen-1 collections per 1000 steps, pooled", pooledPerK(func(r RunSummary) int { return r.Collections[1] })},
	{"gen2-collections", "gen-2 collections per 1000 steps, pooled", pooledPerK(func(r RunSummary) int { return r.Collections[2] })},
	{"gen2-pause", "median over runs of the largest gen-2 pause (ns)", medianOf(func(r RunSummary) float64 { return r.MaxPauseNS[2] })},
	{"gen2-pause-mean", "mean gen-2 pause, pooled over runs (ns; no full collection: 0); one preempted collection moves it far less than the largest", pooledOf(func(r RunSummary) (float64, int) { return r.PauseNS[2], r.Collections[2] })},
	{"rss-peak", "median over runs of the peak RSS (bytes; runs without RSS: not measured)", medianOf(func(r RunSummary) float64 { return memValue(r.RSS, false) })},
	{"rss-growth", "median over runs of the RSS growth per 1000 steps (bytes; of what collections leave, see Mem.Growth), growth under the metric's absolute floor (16 MiB) counted as it, so a ratio to a variant that does not grow is finite", medianOf(func(r RunSummary) float64 { return atFloorAbs("rss-growth", []float64{memValue(r.RSS, true)})[0] })},
	{"device-util", "median over runs of the device's busy share of the step time (emulated or real device; not measured without one)", medianOf(func(r RunSummary) float64 { return devValue(r, func(d *DeviceSummary) float64 { return d.Util }) })},
	{"device-idle-gc", "median over runs of the share of the device's idle time that fell inside host collections", medianOf(func(r RunSummary) float64 { return devValue(r, func(d *DeviceSummary) float64 { return d.IdleGC }) })},
	{"dev-slack", "median over runs of the host's median lead at the step's sync (ns): device work still queued, the room a pause hides in", medianOf(func(r RunSummary) float64 { return devValue(r, func(d *DeviceSummary) float64 { return d.SlackNS }) })},
	{"gc-hidden-steps", "steps whose collections, longer than the run's noise, the device's queued work covered (the device idled inside them at most a tenth of their length beyond the typical step), total over runs", devTotal(func(d *DeviceSummary) int { return d.HiddenSteps })},
	{"gc-hidden-excess", "median over runs of the median of each hidden step's excess over the typical step as a fraction of its pause (0: the queue hid it; 1: it added in full)", medianOf(func(r RunSummary) float64 {
		return devValue(r, func(d *DeviceSummary) float64 { return d.HiddenExcess })
	})},
	{"gc-exposed-steps", "steps whose collections outlasted the device's queued work by more than the run's noise, total over runs", devTotal(func(d *DeviceSummary) int { return d.ExposedSteps })},
	{"gc-exposed-fit", "median over runs of the median of each exposed step's excess over the typical step divided by the device's idle time inside its collections beyond the typical step's, pause minus lead (1: a pause costs exactly what the queue could not cover)", medianOf(func(r RunSummary) float64 { return devValue(r, func(d *DeviceSummary) float64 { return d.ExposedFit }) })},
	{"unscheduled-collections", "collections other than the policy's scheduled ones, total over runs", total(func(r RunSummary) int { return r.Unscheduled })},
	{"amplification", "multi-rank: median over runs of the rate of global spikes put down to a collection / mean single-rank spike rate", medianOf(func(r RunSummary) float64 { return r.Amplification })},
	{"over-worst-rank", "multi-rank: median over runs of the rate of global spikes put down to a collection / the largest single-rank spike rate (above 1: the job spikes more often than any one rank)", medianOf(func(r RunSummary) float64 { return r.OverWorstRank })},
	{"straggler-gc-share", "multi-rank: share of global spikes whose slowest rank was in a collection covering half the excess, pooled", pooledShare(func(r RunSummary) int { return r.StragglerInGC })},
	{"unscheduled-spikes", "multi-rank: global spikes put down to a collection at steps where no rank ran a scheduled one, total over runs", total(func(r RunSummary) int { return r.UnscheduledSpikes })},
}

// ExpectMetrics lists the quantities expect: assertions may name.
func ExpectMetrics() []string {
	names := make([]string, len(aggregates))
	for i, a := range aggregates {
		names[i] = a.name
	}
	return names
}

// ExpectMetricDoc says how a quantity is computed.
func ExpectMetricDoc(name string) string {
	for _, a := range aggregates {
		if a.name == name {
			return a.doc
		}
	}
	return ""
}

// Aggregate computes a variant-level quantity over its runs.
func Aggregate(name string, runs []RunSummary) (float64, error) {
	i := slices.IndexFunc(aggregates, func(a aggregate) bool { return a.name == name })
	if i < 0 {
		return 0, fmt.Errorf("unknown quantity %q (want one of %s)", name, strings.Join(ExpectMetrics(), ", "))
	}
	if len(runs) == 0 {
		return math.NaN(), fmt.Errorf("no completed runs")
	}
	return aggregates[i].value(runs), nil
}

func medianOf(f func(RunSummary) float64) func([]RunSummary) float64 {
	return func(runs []RunSummary) float64 {
		xs := make([]float64, len(runs))
		for i, r := range runs {
			xs[i] = f(r)
		}
		slices.Sort(xs)
		return Quantile(xs, 0.5)
	}
}

func maxOf(f func(RunSummary) float64) func([]RunSummary) float64 {
	return func(runs []RunSummary) float64 {
		m := math.Inf(-1)
		for _, r := range runs {
			m = max(m, f(r))
		}
		return m
	}
}

func pooledPerK(f func(RunSummary) int) func([]RunSummary) float64 {
	return func(runs []RunSummary) float64 {
		n, steps := 0, 0
		for _, r := range runs {
			n += f(r)
			steps += r.Steps
		}
		return perK(n, steps)
	}
}

// pooledShare is a share of all runs' spikes (0 without spikes).
func pooledShare(f func(RunSummary) int) func([]RunSummary) float64 {
	return pooledOf(func(r RunSummary) (int, int) { return f(r), r.Spikes })
}

// pooledOf is the pooled ratio of a part to its whole over all runs (0 when
// the whole is 0): a share of counts, or with a float part (a pause sum)
// per count, a pooled mean.
func pooledOf[N int | float64](f func(RunSummary) (part N, whole int)) func([]RunSummary) float64 {
	return func(runs []RunSummary) float64 {
		var n N
		d := 0
		for _, r := range runs {
			p, w := f(r)
			n, d = n+p, d+w
		}
		if d == 0 {
			return 0
		}
		return float64(n) / float64(d)
	}
}

// devTotal sums f over the runs' device summaries; NaN (not measured)
// when a run has none.
func devTotal(f func(*DeviceSummary) int) func([]RunSummary) float64 {
	return func(runs []RunSummary) float64 {
		n := 0
		for _, r := range runs {
			if r.Device == nil {
				return math.NaN()
			}
			n += f(r.Device)
		}
		return float64(n)
	}
}

func total(f func(RunSummary) int) func([]RunSummary) float64 {
	return func(runs []RunSummary) float64 {
		n := 0
		for _, r := range runs {
			n += f(r)
		}
		return float64(n)
	}
}
