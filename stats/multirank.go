package stats

import (
	"github.com/gcjitter/gcjitter/bench"
	"math"
)

// RankSummary is what a multi-rank run adds to its summary: how one rank's
// collections turn into every rank's spikes.
type RankSummary struct {
	Ranks int `json:"ranks"`
	// OwnSpikeRate is, per rank and per 1000 steps, the steps whose own
	// in-step collection pauses alone exceed the global series' spike limit
	// for a step its collections explain (Limits.GC): the spikes that rank
	// would cause alone.
	OwnSpikeRate []float64 `json:"own_spike_rate"`
	// GlobalSpikeRate is the spike rate of the global step time (the
	// slowest rank at each step), per 1000 steps; GCGlobalSpikeRate counts
	// only the global spikes put down to a collection (see StragglerInGC).
	GlobalSpikeRate   float64 `json:"global_spike_rate"`
	GCGlobalSpikeRate float64 `json:"gc_global_spike_rate"`
	// Amplification is GCGlobalSpikeRate over the mean OwnSpikeRate: about
	// the number of ranks when their collections fall on different steps,
	// about 1 when they collect together; 0 when no rank caused a spike.
	// Spikes the host makes on its own do not inflate it.
	Amplification float64 `json:"amplification"`
	// OverWorstRank is GCGlobalSpikeRate over the largest OwnSpikeRate:
	// above 1 when the job spikes more often than its worst rank alone.
	OverWorstRank float64 `json:"over_worst_rank"`
	// GlobalSpikes are the global spikes; StragglerInGC those whose
	// slowest rank (the largest in-step pause) was in a collection that
	// covers at least half of the step's excess over the median.
	GlobalSpikes  int `json:"global_spikes"`
	StragglerInGC int `json:"straggler_in_gc"`
	// UnscheduledSpikes are the global spikes put down to a collection at
	// steps where no rank ran a scheduled one (under a manual policy: 0
	// unless a rank collects on its own).
	UnscheduledSpikes int `json:"unscheduled_spikes"`
	// SlowestRank counts, per rank, the global spikes it was the straggler
	// of (spikes with no collection in them have none).
	SlowestRank []int `json:"slowest_rank"`
	// RankP50 and RankP99 are each rank's own step-time quantiles (ns).
	// With a collective every step they are nearly the global ones: a rank
	// that waits for the straggler is as slow as the straggler.
	RankP50 []float64 `json:"rank_p50"`
	RankP99 []float64 `json:"rank_p99"`
	// Series is the global step series, one entry per measured step; it is
	// written next to the rank streams, not into the manifest.
	Series []GlobalStep `json:"-"`
}

// GlobalStep is one step of the global series: the slowest rank's time,
// the rank with the largest in-step collection pause and that pause, and
// how the step was classified.
type GlobalStep struct {
	Index      int   `json:"i"`
	DurationNS int64 `json:"ns"`
	// Straggler is the rank with the largest in-step pause (-1: no rank
	// collected in this step); with a collective every step every rank's
	// time includes the wait, so time alone cannot name the straggler.
	Straggler int   `json:"straggler"`
	PauseNS   int64 `json:"pause_ns"`
	Spike     bool  `json:"spike"`
	// GCSpike: a spike whose straggler's pause covers half its excess.
	GCSpike   bool `json:"gc_spike"`
	Scheduled bool `json:"sched"`
}

// MultiRank summarises the ranks of one run. The global step time at each
// index is the slowest rank's (with a collective every step, the slowest
// rank sets the pace); the global stream carries every rank's collections,
// so the returned RunSummary is the run's, as one process's would be.
func MultiRank(ranks []*bench.Stream, rule SpikeRule) (RunSummary, RankSummary) {
	rs := RankSummary{Ranks: len(ranks), OwnSpikeRate: make([]float64, len(ranks)), SlowestRank: make([]int, len(ranks))}
	measured := make([][]*bench.Step, len(ranks))
	n := -1
	rs.RankP50, rs.RankP99 = make([]float64, len(ranks)), make([]float64, len(ranks))
	owns := make([]RunSummary, len(ranks))
	for r, s := range ranks {
		measured[r] = s.Measured()
		own := Summarize(s, rule)
		owns[r] = own
		rs.RankP50[r], rs.RankP99[r] = own.P50, own.P99
		if n < 0 || len(measured[r]) < n {
			n = len(measured[r])
		}
	}
	if n <= 0 {
		return RunSummary{}, rs
	}
	var sm Summarizer
	global := make([]float64, n)
	pause := make([][]float64, len(ranks)) // in-step pause per rank and step
	scheduled := make([]bool, n)
	for r := range ranks {
		pause[r] = make([]float64, n)
	}
	for k := range n {
		st := &bench.Step{Index: k}
		for r := range ranks {
			s := measured[r][k]
			st.DurationNS = max(st.DurationNS, s.DurationNS)
			st.GC = append(st.GC, s.GC...)
			st.Scheduled = st.Scheduled || s.Scheduled
			// Memory: the largest rank's, the process that reaches a
			// limit first (one rank: its own, as Summarize has it).
			st.RSS, st.DeviceMem = maxMem(st.RSS, s.RSS), maxMem(st.DeviceMem, s.DeviceMem)
			for _, e := range s.GC {
				if e.InStep {
					pause[r][k] += float64(e.PauseNS)
				}
			}
		}
		scheduled[k] = st.Scheduled
		global[k] = float64(st.DurationNS)
		sm.Add(st)
	}
	sum := sm.Result(rule)
	if sum.RSS != nil {
		sum.RSS.decide(ranksFreeing(owns))
	}
	typical := sum.Typical
	limits := rule.Limits(Baseline{Typical: sum.Typical, Spread: sum.Spread})
	for r := range ranks {
		own := 0
		for k := range n {
			if pause[r][k] > limits.GC {
				own++
			}
		}
		rs.OwnSpikeRate[r] = perK(own, n)
	}
	gcSpikes := 0
	rs.Series = make([]GlobalStep, n)
	for k := range n {
		g := &rs.Series[k]
		g.Index, g.DurationNS, g.Scheduled, g.Straggler = measured[0][k].Index, int64(global[k]), scheduled[k], -1
		best := 0.0
		for r := range ranks {
			if pause[r][k] > best {
				g.Straggler, best = r, pause[r][k]
			}
		}
		g.PauseNS = int64(best)
		spike, gcSpike := limits.Classify(global[k]-typical, best)
		if !spike {
			continue
		}
		g.Spike = true
		rs.GlobalSpikes++
		if g.Straggler >= 0 {
			rs.SlowestRank[g.Straggler]++
		}
		// A global spike is put down to GC only when a rank's in-step pause
		// covers most of the step's excess: with frequent young collections
		// nearly every step holds some pause, and on a shared host the
		// scheduler makes spikes of its own.
		if !gcSpike {
			continue
		}
		g.GCSpike = true
		gcSpikes++
		rs.StragglerInGC++
		if !scheduled[k] {
			rs.UnscheduledSpikes++
		}
	}
	rs.GlobalSpikeRate = perK(rs.GlobalSpikes, n)
	rs.GCGlobalSpikeRate = perK(gcSpikes, n)
	mean, worst := 0.0, 0.0
	for _, x := range rs.OwnSpikeRate {
		mean += x / float64(len(ranks))
		worst = max(worst, x)
	}
	if mean > 0 {
		rs.Amplification = rs.GCGlobalSpikeRate / mean
		rs.OverWorstRank = rs.GCGlobalSpikeRate / worst
	}
	sum.Amplification, sum.OverWorstRank, sum.StragglerInGC, sum.UnscheduledSpikes = rs.Amplification, rs.OverWorstRank, rs.StragglerInGC, rs.UnscheduledSpikes
	return sum, rs
}

// maxMem is the larger of two memory samples, either of them absent (nil).
func maxMem(a, b *int64) *int64 {
	if a == nil || (b != nil && *b > *a) {
		return b
	}
	return a
}

// ranksFreeing is a multi-rank run's collector accounting: each rank's
// own (a rank counts only its own objects), the worst of them: a rank
// whose garbage accumulates, else the first rank's (bounded on every
// rank); nil unless every rank's was observed. outside is the fastest
// growth outside the collector's view of any rank.
func ranksFreeing(owns []RunSummary) (f *Freeing, outside float64) {
	for _, o := range owns {
		if o.RSS == nil || o.RSS.Collector == nil {
			return nil, 0
		}
		c := o.RSS.Collector
		if f == nil || c.Class == MemGrows && f.Class != MemGrows {
			f = c
		}
		outside = math.Max(outside, o.RSS.Outside)
	}
	return f, outside
}
