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

	mstats "github.com/aclements/go-moremath/stats"

	"github.com/gcjitter/gcjitter/bench"
)

// RunSummary is what one run measured, over its measured (non-warm-up) steps.
type RunSummary struct {
	Steps int
	// Step-time quantiles and maximum, in nanoseconds.
	P50, P90, P99, P999, Max float64
	// P99NoGen2 is the p99 of the steps without a full collection in them
	// (for a multi-rank run's global step: on no rank): the tail that is
	// not the collector's, which p99 cannot see where full collections
	// make the slowest 1% (a stall in 3% of the other steps moved the runs'
	// p99 in 4-8% of synthetic trials, this in all; docs/compare.md). 0
	// where the run has no such step or no full collection (p99 is then
	// the same thing), and in summaries written before it.
	P99NoGen2 float64 `json:",omitempty"`
	// P99Rel is the p99 of the run's steps each in units of its local
	// typical step (RelTail): the tail's length with the host's speed
	// taken out, which moves every step of a stretch alike and, on a
	// shared VM, moved per-run p99s by 7-15% between runs (BENCHMARKS.md,
	// "The tail at the shipped sizes"). 0 in summaries written before it.
	P99Rel float64 `json:",omitempty"`
	// Mean is the mean step time in nanoseconds (the throughput's
	// inverse); 0 in summaries written before it was recorded.
	Mean float64 `json:",omitempty"`
	// Typical and Spread are the run's yardstick for spikes (SpikeRule):
	// the median and robust SD (scaled MAD) of the steps without a full
	// collection in them, in nanoseconds.
	Typical, Spread float64 `json:",omitempty"`
	// Yardstick is the step the GC cost (GCCost) is measured in: the step
	// without its full collection's pause. Typical where some steps hold
	// no full collection; where every step holds one (collect-every-step)
	// Typical falls back to all steps, pauses included, so a collector
	// 20% slower moved it half as far again and read +11% instead of
	// +20%: then the median of the steps less their in-step full
	// collections' pauses. 0 in summaries written before it.
	Yardstick float64 `json:",omitempty"`
	// Spikes counts the steps the spike rule marks; SpikesWithGC those of
	// them whose in-step collection pauses explain most of the excess
	// (GCShareOfExcess): GC spikes.
	Spikes, SpikesWithGC int
	// SpikesWithGen2 counts the GC spikes that contain a full collection,
	// out of Gen2Steps, the steps that contain one.
	SpikesWithGen2 int
	Gen2Steps      int `json:",omitempty"`
	// Gen2Excess is how much longer the steps with a full collection are
	// than the others: the difference of their medians over the typical
	// step (0.047 for the customer's 2770 -> 2900 ms). A ratio of the
	// run's own steps, it does not depend on the host's speed the way a
	// time does. Gen2ExcessP is a one-sided Mann-Whitney U test of those
	// steps against the rest (1 when there are none to test).
	Gen2Excess  float64 `json:",omitempty"`
	Gen2ExcessP float64 `json:",omitempty"`
	// Unscheduled counts collections other than the policy's own scheduled
	// gc.collect: under a manual policy it must be 0.
	Unscheduled int
	// Tail is how much of the slowest 1% of steps' excess the collections
	// inside them explain; nil in summaries written before it existed.
	Tail *TailGC `json:",omitempty"`
	// SpikePeriod is the number of steps between GC spikes when most of
	// them (2/3, at least 3) recur on a regular lattice; failing that, the
	// lattice of the GC spikes with a full collection; 0 when neither is.
	SpikePeriod float64
	// Collections, total pause and largest pause per generation, counting
	// collections inside steps and between them.
	Collections [3]int
	// Collected counts the objects the collections freed, per generation.
	Collected [3]int64
	// Walked counts, in a census run (bench.Config.Census), the objects
	// the collections walked (their generations' objects at their start),
	// per generation: the heap the collector scans, exact whatever the
	// host's speed. Zero in timed runs.
	Walked [3]int64 `json:",omitempty"`
	// FullWalk is the objects a full collection of the run's variant walks,
	// from its session's census run (results.Manifest.AttachWork; 0 where
	// the session had no census): what the GC cost (stats.GCCost) is
	// measured per.
	FullWalk   float64 `json:",omitempty"`
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
	// RSS is the worker's resident set, DevMem its device memory
	// (memory_allocated), over the measured steps; nil where not recorded
	// (summaries written before they existed, device memory on a CPU).
	RSS    *Mem `json:",omitempty"`
	DevMem *Mem `json:",omitempty"`
	// Device is how the steps met an asynchronous device (emulated, or a
	// real one's events); nil where the worker did not time the device.
	Device *DeviceSummary `json:",omitempty"`
}

// DeviceSummary is the device's side of a run's measured steps.
type DeviceSummary struct {
	// Util is the device's busy share of the steps' wall time.
	Util float64
	// IdleGC is the share of the device's idle time that fell inside host
	// collections: how much of the device's waiting GC caused.
	IdleGC float64
	// SlackNS is the median host lead at the step's final sync: device
	// work still queued when the host got there, the room a pause hides in.
	SlackNS float64
	// HiddenSteps are the steps whose in-step pauses, longer than the
	// run's noise, the device's queued work covered (the device idled
	// inside them at most a tenth of their length beyond the typical
	// step), and HiddenExcess the median of each one's excess over the
	// typical step as a fraction of its pause: 0 when the queue hid them,
	// 1 when they added in series (0 when none).
	HiddenSteps  int
	HiddenExcess float64
	// ExposedSteps are the steps whose pauses outlasted the device's
	// queued work by more than the run's noise (the device idled inside
	// them, beyond the typical step), and ExposedFit the median of each
	// one's excess over the typical step divided by that idle time, pause
	// minus lead: 1 when a pause costs the step exactly what the queue
	// could not cover (0 when none).
	ExposedSteps int
	ExposedFit   float64
	// Unjudged: too few timed steps without a full collection (under 3)
	// for a typical step to measure a pause's cost against
	// (collect-every-step): nothing is counted hidden or exposed.
	Unjudged bool `json:",omitempty"`
}

// Summarize summarises the measured steps of s; rule says which are
// spikes.
func Summarize(s *bench.Stream, rule SpikeRule) RunSummary {
	var sm Summarizer
	sm.SetMeta(s.Meta)
	for _, st := range s.Steps {
		sm.Add(st)
	}
	return sm.Result(rule)
}

// Summarizer summarises a run one step at a time, keeping only what the
// summary needs (a duration and a flag per step), so a run of a million
// steps never has to be held as records.
type Summarizer struct {
	durs   []float64
	pauses []float64 // per step: the pauses of the collections inside it
	// fullAt and fullPause are the steps that held a full collection and
	// its pause inside them (the Yardstick's fallback), sparse.
	fullAt    []int
	fullPause []float64
	inGC      []uint8 // per step: inGC|inGen2 bits for collections inside it
	r         RunSummary
	total     float64
	inPause   float64
	rss       memTrack
	devMem    memTrack
	dev       deviceTrack
	gc        collectorTrack
	meta      *bench.Meta
}

// SetMeta gives the summarizer the run's meta record, before its first
// step: the collector's thresholds and the interpreter, which the memory
// class from the collector's accounting needs (Freeing). Without it the
// class is RSS's alone.
func (sm *Summarizer) SetMeta(m *bench.Meta) {
	sm.meta = m
	if m != nil && len(m.GC.Thresholds) > 0 {
		sm.gc.t0 = int64(m.GC.Thresholds[0])
	}
}

// deviceTrack accumulates the steps' device timing.
type deviceTrack struct {
	steps                    int
	busy, wall, idle, idleGC float64
	slacks                   []float64
	idleInGC                 []float64 // per timed step: the device's idle time inside its collections
	at                       []int     // the step index of each idleInGC entry
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
	sm.rss.add(len(sm.durs)-1, st.RSS)
	sm.devMem.add(len(sm.durs)-1, st.DeviceMem)
	sm.gc.add(len(sm.durs)-1, st)
	var in uint8
	pause, full := 0.0, 0.0
	for _, e := range st.GC {
		sm.r.Collections[e.Gen]++
		sm.r.Collected[e.Gen] += e.Collected
		sm.r.Walked[e.Gen] += e.Objects
		p := float64(e.PauseNS)
		sm.r.PauseNS[e.Gen] += p
		sm.r.MaxPauseNS[e.Gen] = math.Max(sm.r.MaxPauseNS[e.Gen], p)
		if !(e.Manual && st.Scheduled) {
			sm.r.Unscheduled++
		}
		if e.InStep {
			pause += p
			sm.inPause += p
			in |= inGC
			if e.Gen == 2 {
				in |= inGen2
				full += p
			}
		}
	}
	sm.inGC = append(sm.inGC, in)
	sm.pauses = append(sm.pauses, pause)
	if full > 0 {
		sm.fullAt = append(sm.fullAt, len(sm.durs)-1)
		sm.fullPause = append(sm.fullPause, full)
	}
	if t := st.DeviceTiming; t != nil {
		dv := &sm.dev
		dv.steps++
		dv.busy += float64(t.BusyNS)
		dv.wall += d
		dv.idle += float64(t.IdleNS)
		dv.idleGC += float64(t.IdleGCNS)
		dv.slacks = append(dv.slacks, float64(t.SlackNS))
		dv.idleInGC = append(dv.idleInGC, float64(t.IdleGCNS))
		dv.at = append(dv.at, len(sm.durs)-1)
	}
}

// result is the device summary against the run's typical step and its
// spread (the noise an exposure must stand out of). A collection's cost on
// the device is the device's idle time inside it, pause minus the work
// queued when it began; the step's wall time, measured on the host, must
// then grow by that, and by nothing for a hidden one. Both are taken
// beyond the typical step (noGen2 picks its steps), which has young
// collections of its own, some of them before the step's first launch.
func (dv *deviceTrack) result(durs, pauses []float64, typical, spread float64, noGen2 func(int) bool) *DeviceSummary {
	if dv.steps == 0 || dv.wall <= 0 {
		return nil
	}
	r := &DeviceSummary{Util: dv.busy / dv.wall}
	if dv.idle > 0 {
		r.IdleGC = math.Min(dv.idleGC/dv.idle, 1)
	}
	r.SlackNS = medianOfValues(dv.slacks)
	var usual []float64
	for k, i := range dv.at {
		if noGen2(i) {
			usual = append(usual, dv.idleInGC[k])
		}
	}
	if len(usual) < 3 {
		r.Unjudged = true
		return r
	}
	usualIdle := medianOfValues(usual)
	// Only pauses the run's noise could not hide on its own are judged:
	// a 50 us young collection is "hidden" on any device.
	noise := 3 * spread
	var hidden, fits []float64
	for k, i := range dv.at {
		x := dv.idleInGC[k] - usualIdle
		excess := durs[i] - typical
		switch {
		case pauses[i] <= noise:
		case x <= 0.1*pauses[i]:
			hidden = append(hidden, excess/pauses[i])
		case x > noise:
			fits = append(fits, excess/x)
		}
	}
	r.HiddenSteps, r.ExposedSteps = len(hidden), len(fits)
	if len(hidden) > 0 {
		r.HiddenExcess = medianOfValues(hidden)
	}
	if len(fits) > 0 {
		r.ExposedFit = medianOfValues(fits)
	}
	return r
}

// Result is the summary of the steps added so far.
func (sm *Summarizer) Result(rule SpikeRule) RunSummary {
	r := sm.r
	r.Steps = len(sm.durs)
	r.RSS, r.DevMem = sm.rss.result(), sm.devMem.result()
	if r.RSS != nil {
		r.RSS.decide(sm.gc.result(sm.meta, r.RSS, sm.rss.lastY), sm.gc.outsideGrowth())
	}
	if r.Steps == 0 {
		return r
	}
	sorted := slices.Clone(sm.durs)
	SortFloat64s(sorted)
	r.Mean = sm.total / float64(r.Steps)
	r.P50 = Quantile(sorted, 0.50)
	r.P90 = Quantile(sorted, 0.90)
	r.P99 = Quantile(sorted, 0.99)
	r.P999 = Quantile(sorted, 0.999)
	r.Max = sorted[len(sorted)-1]
	tail := tailOf(sm.durs, sm.pauses, sorted)
	r.Tail = &tail
	noGen2 := func(i int) bool { return sm.inGC[i]&inGen2 == 0 }
	var other []float64
	for i, d := range sm.durs {
		if noGen2(i) {
			other = append(other, d)
		}
	}
	if len(other) > 0 && len(other) < len(sm.durs) {
		SortFloat64s(other)
		r.P99NoGen2 = Quantile(other, 0.99)
	}
	if rel := RelTail(sm.durs, sm.fullAt, sm.fullPause, 0.99); !math.IsNaN(rel) {
		r.P99Rel = rel // 0, not NaN, where no step has a length: summaries are JSON too
	}
	base := baselineOf(sm.durs, noGen2, rule)
	r.Typical, r.Spread = base.Typical, base.Spread
	r.Yardstick = sm.yardstick(noGen2, base.Typical)
	limits := rule.Limits(base)
	var spikes, gen2Spikes []int
	for i, d := range sm.durs {
		gen2 := sm.inGC[i]&inGen2 != 0
		if gen2 {
			r.Gen2Steps++
		}
		spike, gcSpike := limits.Classify(d-base.Typical, sm.pauses[i])
		if spike {
			r.Spikes++
		}
		if !gcSpike {
			continue
		}
		r.SpikesWithGC++
		// The period is the collector's: stalls the host makes are not
		// periodic and would only hide it.
		spikes = append(spikes, i)
		if gen2 {
			r.SpikesWithGen2++
			gen2Spikes = append(gen2Spikes, i)
		}
	}
	if sm.total > 0 {
		r.GCShare = sm.inPause / sm.total
	}
	r.Gen2Excess, r.Gen2ExcessP = gen2Excess(sm.durs, noGen2, base.Typical)
	// The device's yardstick is the spike rule's: the steps without a
	// full collection (young ones run in nearly every step).
	noGC := base
	r.Device = sm.dev.result(sm.durs, sm.pauses, noGC.Typical, noGC.Spread, noGen2)
	// Young collections make GC spikes too where the steps are quiet (an
	// accelerator host: a 1 ms gen-1 pause on a 200 ms step); they come at
	// irregular steps and can hide the full collections' lattice, which is
	// the signature: fall back to it.
	if r.SpikePeriod = period(spikes); r.SpikePeriod == 0 {
		r.SpikePeriod = period(gen2Spikes)
	}
	return r
}

// RelBlock is the stretch of steps whose median is a step's local
// typical step in RelTail: long enough that a stall in 3% of the steps or
// a full collection every 20 does not move its median, short enough to
// follow a shared host's speed within a run. An AMD VM's 20 ms steps
// switched to 25-28 ms and back within 200-step runs; on its ab trials
// blocks of 25 steps gave the slower collector t = 9.9, 7.7 and 4.1
// where blocks of 50 gave 8.0, 4.8 and 3.3 (the A/A |t| at most 0.9;
// BENCHMARKS.md, "The tail in the run's own steps").
const RelBlock = 25

// RelTail is the q-quantile of the run's steps, each divided by its local
// typical step: the median, over its block of RelBlock consecutive steps
// (a short last block joins the one before), of the steps less the full
// collections' pauses inside them (fullAt, fullPause: sparse, by step).
// The pauses come out of the yardstick so that collect-every-step, where
// every step holds one, still has a typical step; they stay in the step
// measured, so a slower collector or a stall lengthens the tail in these
// units and a host that runs the whole stretch slower does not. NaN
// without steps.
func RelTail(durs []float64, fullAt []int, fullPause []float64, q float64) float64 {
	n := len(durs)
	if n == 0 {
		return math.NaN()
	}
	net := withoutFullPauses(durs, fullAt, fullPause)
	rel := make([]float64, 0, n)
	block := make([]float64, 0, 2*RelBlock)
	for start := 0; start < n; {
		end := min(start+RelBlock, n)
		if n-end < RelBlock/2 {
			end = n
		}
		block = append(block[:0], net[start:end]...)
		SortFloat64s(block)
		local := Quantile(block, 0.5)
		if local > 0 {
			for _, d := range durs[start:end] {
				rel = append(rel, d/local)
			}
		}
		start = end
	}
	if len(rel) == 0 {
		return math.NaN()
	}
	SortFloat64s(rel)
	return Quantile(rel, q)
}

// withoutFullPauses is a copy of the steps, each less the pauses of the
// full collections inside it (fullAt, fullPause: sparse, by step).
func withoutFullPauses(durs []float64, fullAt []int, fullPause []float64) []float64 {
	net := slices.Clone(durs)
	for k, i := range fullAt {
		net[i] -= fullPause[k]
	}
	return net
}

// yardstick is RunSummary.Yardstick: the typical step where some step
// held no full collection, else the median step less the pauses of the
// full collections inside it.
func (sm *Summarizer) yardstick(noGen2 func(int) bool, typical float64) float64 {
	for i := range sm.durs {
		if noGen2(i) {
			return typical
		}
	}
	net := withoutFullPauses(sm.durs, sm.fullAt, sm.fullPause)
	SortFloat64s(net)
	return Quantile(net, 0.5)
}

// gen2Excess is the shift of the steps with a full collection over the
// others, relative to the typical step, and the one-sided p-value of a
// Mann-Whitney U test that they are longer.
func gen2Excess(durs []float64, noGen2 func(int) bool, typical float64) (excess, p float64) {
	var with, without []float64
	for i, d := range durs {
		if noGen2(i) {
			without = append(without, d)
		} else {
			with = append(with, d)
		}
	}
	if len(with) == 0 || len(without) == 0 || typical <= 0 {
		return 0, 1
	}
	SortFloat64s(with)
	SortFloat64s(without)
	excess = (Quantile(with, 0.5) - Quantile(without, 0.5)) / typical
	res, err := mstats.MannWhitneyUTest(with, without, mstats.LocationGreater)
	if err != nil {
		return excess, 1
	}
	return excess, res.P
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
