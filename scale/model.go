package scale

import (
	"math"
	"math/rand/v2"
	"slices"

	"github.com/gcjitter/gcjitter/stats"
)

// Rank is one rank's measured steps of one run, by step.
type Rank struct {
	// Own is the rank's own part of each step (ns): before the collective,
	// so without its wait for the slowest rank; a single-rank run's step.
	Own []float64
	// Auto and Sched are the step's in-step collection pauses (ns): those
	// the allocator started and those the policy scheduled (gc.collect).
	Auto, Sched []float64
}

// Run is one run of a case's variant: its ranks' steps, aligned by index.
type Run struct {
	Path  string // the run's record stream (rank 0's), for messages
	Ranks []Rank
	// Global is the measured global step (ns): the slowest rank's time,
	// as stats.MultiRank has it; the rank's own step for one rank.
	Global []float64
	// Resid is Global minus the largest own time at each step: the
	// collective's own cost and the ranks' start skew (0 for one rank).
	Resid []float64
	// SpikeRate is the measured global spike rate per 1000 steps under the
	// case's spike rule (stats.MultiRank's or stats.Summarize's).
	SpikeRate float64
	// Contention says how the run's ranks outnumbered a host's CPUs
	// ("4 ranks x 1 thread on 2 CPUs"); empty when each had its own, or
	// the streams do not say.
	Contention string
}

func (r *Run) steps() int { return len(r.Global) }

// Group is every run of one case's variant at one world size.
type Group struct {
	Case, Variant, Policy string
	Ranks                 int // world size of the runs
	Rule                  stats.SpikeRule
	Runs                  []*Run
	// NoOwn: the streams predate the "own" field (an older worker wrote
	// them); each rank's step time stands in for its own time, and it
	// holds its wait for the slowest rank, so predictions run high.
	NoOwn bool
}

// model is what a simulation draws from, prepared from a group's runs (or
// one bootstrap resample of them).
type model struct {
	m int // ranks per host in the source: ranks of one host share noise
	// base[j] is, sorted, each source step's largest own time over ranks
	// 0..j of its run at steps where they ran no collection of note.
	base [][]float64
	// drift are the per-rank collections that drift apart (allocator-driven
	// with per-rank garbage): one entry per source rank.
	drift []driftSource
	// common is the collections every rank runs on the same step
	// (scheduled by the policy, or allocator-driven but measured aligned).
	common *commonSchedule
	resid  []float64 // the collective and skew per source step (ns), sorted
	free   bool      // no collection of note at all
}

// driftSource is one source rank's collections of note, on a cycle of its
// run's length: a simulated rank replays them at a random phase.
type driftSource struct {
	cycle int
	ev    []event
}

type event struct {
	off int
	own float64 // the rank's own time in that step: its noise and the pause
}

// commonSchedule is the collections all ranks run together: every cycle
// steps at the offsets pos, each rank's own time in them drawn from pool.
type commonSchedule struct {
	cycle int
	pos   []int
	pool  []float64 // sorted
}

// eventThreshold is the pause above which a step holds a collection of
// note for a rank: the spike rule's limit for a step its collections
// explain, against the rank's own noise on its collection-free steps. Smaller
// pauses (young collections) stay in the rank's noise.
func eventThreshold(rk *Rank, rule stats.SpikeRule) float64 {
	var clean []float64
	for k, o := range rk.Own {
		if rk.Auto[k]+rk.Sched[k] == 0 {
			clean = append(clean, o)
		}
	}
	if len(clean) < 10 {
		clean = append(clean[:0], rk.Own...)
	}
	b := baseline(clean)
	return rule.Limits(b).GC
}

// baseline is the median and the scaled MAD of xs (a copy is sorted).
func baseline(xs []float64) stats.Baseline {
	s := slices.Clone(xs)
	stats.SortFloat64s(s)
	med := stats.Quantile(s, 0.5)
	for i, x := range s {
		s[i] = math.Abs(x - med)
	}
	stats.SortFloat64s(s)
	return stats.Baseline{Typical: med, Spread: 1.4826 * stats.Quantile(s, 0.5)}
}

// prepare turns runs into a model. Scheduled collections are aligned by
// construction; allocator-driven ones drift unless the multi-rank runs
// show them on the same steps (shared seeds, no garbage jitter).
func prepare(runs []*Run, rule stats.SpikeRule) *model {
	md := &model{m: len(runs[0].Ranks)}
	for _, r := range runs {
		md.m = min(md.m, len(r.Ranks))
	}
	md.base = make([][]float64, md.m)
	aligned := autoAligned(runs, rule)
	md.free = true
	var schedSteps []int
	var schedPool, alignedPool []float64
	var alignedPos []int
	alignedCycle := 0
	for ri, r := range runs {
		n := r.steps()
		isEv := make([][]bool, len(r.Ranks))
		for q := range r.Ranks {
			rk := &r.Ranks[q]
			tau := eventThreshold(rk, rule)
			isEv[q] = make([]bool, n)
			var ds driftSource
			ds.cycle = n
			for k := range n {
				if rk.Auto[k]+rk.Sched[k] <= tau {
					continue
				}
				isEv[q][k] = true
				md.free = false
				switch {
				case rk.Sched[k] >= rk.Auto[k]:
					schedPool = append(schedPool, rk.Own[k])
					if ri == 0 {
						schedSteps = append(schedSteps, k)
					}
				case aligned:
					alignedPool = append(alignedPool, rk.Own[k])
					if ri == 0 && q == 0 {
						alignedPos, alignedCycle = append(alignedPos, k), n
					}
				default:
					ds.ev = append(ds.ev, event{k, rk.Own[k]})
				}
			}
			md.drift = append(md.drift, ds)
		}
		// A host's ranks share its noise: pool each step's largest own
		// time over the first j+1 ranks, leaving out those in a collection.
		for k := range n {
			best := math.Inf(-1)
			for q := range md.m {
				if !isEv[q][k] {
					best = max(best, r.Ranks[q].Own[k])
				}
				if !math.IsInf(best, -1) {
					md.base[q] = append(md.base[q], best)
				}
			}
		}
		md.resid = append(md.resid, r.Resid...)
	}
	for q := range md.base {
		if len(md.base[q]) == 0 { // every step a collection: noise from all
			for _, r := range runs {
				for k := range r.steps() {
					md.base[q] = append(md.base[q], r.Ranks[0].Own[k])
				}
			}
		}
		stats.SortFloat64s(md.base[q])
	}
	stats.SortFloat64s(md.resid)
	// The schedule's steps: run 0's, any rank's (one rank may have had a
	// scheduled collection too small to note).
	slices.Sort(schedSteps)
	schedSteps = slices.Compact(schedSteps)
	switch {
	case len(schedPool) > 0:
		stats.SortFloat64s(schedPool)
		md.common = &commonSchedule{pool: schedPool}
		if p := period(schedSteps); p > 0 {
			md.common.cycle, md.common.pos = p, []int{schedSteps[0] % p}
		} else {
			md.common.cycle, md.common.pos = runs[0].steps(), schedSteps
		}
		if len(md.common.pos) == 0 { // run 0 had none of note
			md.common.cycle, md.common.pos = runs[0].steps(), []int{0}
		}
	case len(alignedPool) > 0:
		stats.SortFloat64s(alignedPool)
		if len(alignedPos) == 0 {
			alignedPos, alignedCycle = []int{0}, runs[0].steps()
		}
		md.common = &commonSchedule{cycle: alignedCycle, pos: alignedPos, pool: alignedPool}
	}
	return md
}

// period is the most common gap between scheduled steps (0: fewer than
// two of them).
func period(steps []int) int {
	count := map[int]int{}
	best, bestN := 0, 0
	for i := 1; i < len(steps); i++ {
		g := steps[i] - steps[i-1]
		count[g]++
		if count[g] > bestN || count[g] == bestN && g < best {
			best, bestN = g, count[g]
		}
	}
	return best
}

// autoAligned says whether the allocator-driven collections of note of
// multi-rank runs fall on the same steps on most ranks (shared seeds
// without garbage jitter): then they do not drift apart at scale.
func autoAligned(runs []*Run, rule stats.SpikeRule) bool {
	shared, total := 0, 0
	for _, r := range runs {
		if len(r.Ranks) < 2 {
			continue
		}
		at := make([]int, r.steps())
		for q := range r.Ranks {
			rk := &r.Ranks[q]
			tau := eventThreshold(rk, rule)
			for k := range at {
				if rk.Auto[k] > tau && rk.Auto[k] > rk.Sched[k] {
					at[k]++
				}
			}
		}
		for _, c := range at {
			total += c
			if 2*c >= len(r.Ranks) && c > 1 {
				shared += c
			}
		}
	}
	return total > 0 && 2*shared > total
}

// Collective is how the collective's cost grows with the number of ranks.
type Collective struct {
	Kind string // "tree" (default) or "ring"
	// HopLatency is the latency per hop (ns); Bandwidth (bytes/s, 0: no
	// bandwidth term) and Bytes the all-reduce's size.
	HopLatency float64
	Bandwidth  float64
	Bytes      float64
}

// hops and bwFactor: a ring all-reduce takes 2(N-1) steps and moves
// 2(N-1)/N of the buffer per rank; a (pipelined binary) tree 2*ceil(log2 N)
// steps, moving the buffer up and down once.
func (c Collective) hops(n int) float64 {
	if n <= 1 {
		return 0
	}
	if c.Kind == "ring" {
		return 2 * float64(n-1)
	}
	return 2 * math.Ceil(math.Log2(float64(n)))
}

func (c Collective) bwFactor(n int) float64 {
	if n <= 1 {
		return 0
	}
	if c.Kind == "ring" {
		return 2 * float64(n-1) / float64(n)
	}
	return 2
}

// Cost is the collective's modelled cost at n ranks (ns).
func (c Collective) Cost(n int) float64 {
	cost := c.HopLatency * c.hops(n)
	if c.Bandwidth > 0 {
		cost += c.bwFactor(n) * c.Bytes / c.Bandwidth * 1e9
	}
	return cost
}

// Growth is the collective's extra cost at n ranks over its cost at the
// measured world size from (the measured one is in the data already).
func (c Collective) Growth(n, from int) float64 { return c.Cost(n) - c.Cost(from) }

// draw is an order statistic: the largest of k draws from sorted, by the
// inverse CDF at u^(1/k) (one uniform, whatever k).
func draw(sorted []float64, k int, rng *rand.Rand) float64 {
	if k <= 0 || len(sorted) == 0 {
		return 0
	}
	u := rng.Float64()
	if k > 1 {
		u = math.Pow(u, 1/float64(k))
	}
	i := int(u * float64(len(sorted)))
	return sorted[min(i, len(sorted)-1)]
}

// series is one simulated job: the global step, the same job with no
// collection of note, and the pause above the noise at each step.
type series struct {
	global, free, pause []float64
}

// simulate runs n ranks for steps steps. Each step's global time is the
// largest own time over ranks plus the collective:
//   - noise: hosts of m ranks, each host's largest own time an independent
//     draw from the source's per-step largest (ranks of a host share it);
//   - drifting collections: each rank replays a random source rank's
//     collections at a random phase of its cycle;
//   - common collections: on their steps every rank collects, the largest
//     of n draws from the measured own times in them;
//   - the collective: a measured step's residual plus the growth to n.
//
// With sharedNoise the noise is one host's draw at any n: what is left
// is what collections and the collective do.
func (md *model) simulate(n, steps int, growth float64, sharedNoise bool, rng *rand.Rand) series {
	s := series{global: make([]float64, steps), free: make([]float64, steps), pause: make([]float64, steps)}
	ev := s.pause // the largest own time in a collection, then the pause
	for i := 0; i < n && len(md.drift) > 0; i++ {
		src := &md.drift[rng.IntN(len(md.drift))]
		if len(src.ev) == 0 {
			continue
		}
		phase := rng.IntN(src.cycle)
		for _, e := range src.ev {
			for k := (e.off - phase + src.cycle) % src.cycle; k < steps; k += src.cycle {
				ev[k] = max(ev[k], e.own)
			}
		}
	}
	if c := md.common; c != nil {
		phase := rng.IntN(c.cycle)
		for _, p := range c.pos {
			for k := (p - phase + c.cycle) % c.cycle; k < steps; k += c.cycle {
				ev[k] = max(ev[k], draw(c.pool, n, rng))
			}
		}
	}
	hosts, rest := n/md.m, n%md.m
	if sharedNoise { // the measured hosts' noise is the job's, whatever N
		hosts, rest = 1, 0
	}
	for k := range steps {
		b := draw(md.base[md.m-1], hosts, rng)
		if rest > 0 {
			b = max(b, draw(md.base[rest-1], 1, rng))
		}
		c := max(0, draw(md.resid, 1, rng)+growth)
		s.free[k] = b + c
		s.global[k] = max(b, ev[k]) + c
		s.pause[k] = max(0, ev[k]-b)
	}
	return s
}

// Figures are one simulated (or measured) job's step-time figures.
type Figures struct {
	P50, P90, P99, Mean float64
	SpikeRate           float64 // per 1000 steps
	Loss                float64 // mean over the GC-free job's mean, minus 1
	// FreeP50 is the GC-free job's p50: how much of a p50's growth with N
	// is the hosts' noise (the slowest of more hosts), not collections.
	FreeP50 float64
}

// figures judges spikes against the GC-free job's typical step and spread,
// by the case's spike rule: at scale, a job whose every step holds a pause
// has no calm median of its own to judge against.
func (s series) figures(rule stats.SpikeRule) Figures {
	b := baseline(s.free)
	lim := rule.Limits(b)
	spikes := 0
	for k, g := range s.global {
		if sp, _ := lim.Classify(g-b.Typical, s.pause[k]); sp {
			spikes++
		}
	}
	f := quantiles(s.global)
	f.SpikeRate = 1000 * float64(spikes) / float64(len(s.global))
	f.FreeP50 = b.Typical
	free := mean(s.free)
	if free > 0 {
		f.Loss = f.Mean/free - 1
	}
	return f
}

func quantiles(xs []float64) Figures {
	s := slices.Clone(xs)
	stats.SortFloat64s(s)
	return Figures{P50: stats.Quantile(s, 0.5), P90: stats.Quantile(s, 0.9), P99: stats.Quantile(s, 0.99), Mean: mean(s)}
}

func mean(xs []float64) float64 {
	t := 0.0
	for _, x := range xs {
		t += x
	}
	return t / float64(len(xs))
}

// resample is one block bootstrap of runs: each run rebuilt from blocks of
// block steps drawn with replacement, the same blocks for all its ranks
// (their noise and schedules stay together), blocks starting on multiples
// of block so that a scheduled period that divides it stays in phase.
func resample(runs []*Run, block int, rng *rand.Rand) []*Run {
	out := make([]*Run, len(runs))
	for i := range runs {
		// Runs themselves are resampled too when there are several: the
		// run is the statistical unit.
		r := runs[i]
		if len(runs) > 1 {
			r = runs[rng.IntN(len(runs))]
		}
		n := r.steps()
		b := min(block, n)
		nb := n / b
		nr := &Run{Path: r.Path, Ranks: make([]Rank, len(r.Ranks))}
		starts := make([]int, nb)
		for j := range starts {
			starts[j] = rng.IntN(nb) * b
		}
		pick := func(xs []float64) []float64 {
			o := make([]float64, 0, nb*b)
			for _, st := range starts {
				o = append(o, xs[st:st+b]...)
			}
			return o
		}
		for q := range r.Ranks {
			nr.Ranks[q] = Rank{Own: pick(r.Ranks[q].Own), Auto: pick(r.Ranks[q].Auto), Sched: pick(r.Ranks[q].Sched)}
		}
		nr.Global, nr.Resid = pick(r.Global), pick(r.Resid)
		out[i] = nr
	}
	return out
}

// blockLen is the bootstrap's block: the scheduled period when there is
// one (blocks then hold one scheduled collection each, in phase), else
// a tenth of the shortest run, at least 10 steps.
func blockLen(runs []*Run) int {
	n := math.MaxInt
	for _, r := range runs {
		n = min(n, r.steps())
	}
	var sched []int
	for k := range runs[0].steps() {
		if runs[0].Ranks[0].Sched[k] > 0 {
			sched = append(sched, k)
		}
	}
	if p := period(sched); p > 0 && p <= n {
		return p
	}
	return max(10, n/10)
}

// MeasuredHopLatency is the latency per hop that explains the measured
// collective (each multi-rank group's median residual over its hops),
// the median over groups; 0 without multi-rank runs. On one host this is
// mostly CPU contention between the ranks, not a network's latency.
func MeasuredHopLatency(groups []*Group, c Collective) float64 {
	var per []float64
	for _, g := range groups {
		if g.Ranks < 2 {
			continue
		}
		var r []float64
		for _, run := range g.Runs {
			r = append(r, run.Resid...)
		}
		stats.SortFloat64s(r)
		per = append(per, stats.Quantile(r, 0.5)/c.hops(g.Ranks))
	}
	if len(per) == 0 {
		return 0
	}
	stats.SortFloat64s(per)
	return stats.Quantile(per, 0.5)
}
