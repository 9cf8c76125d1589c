package stats

import (
	"cmp"
	"math"
	"slices"
)

// periodScale is how finely period tries periods between whole steps:
// tenths. A collection comes after a count of allocations, not of steps,
// so its period in steps is rarely whole (CPython 3.11's full collection
// every 84,700 allocations is every 24.9 steps at 3,400 a step), and a
// whole-step lattice drifts off such spikes by a step every few periods:
// a long enough run of a steady schedule would read "not periodic".
const periodScale = 10

// period finds the spacing of spikes that recur regularly, tolerating
// stray spikes (noise) among them. Each observed gap P of at least 3 steps
// is tried as a lattice anchored at each spike (a spike fits within 5% of
// P, at least a step). A lattice counts when it holds at least 3 spikes,
// 2/3 of all spikes fit it, and 2/3 of its points between the first and
// last hit are hit; the one with the most hits wins (ties: closest to the
// median gap). Only where no whole period counts are periods in tenths of
// a step within half a step of each gap tried the same way, needing 4
// hits: a whole-step lattice that counts is the simpler answer, and a
// fractional one near a sub-multiple of the true period can gather a
// stray spike (GC spikes at 19, 30, 39, 59 fit 9.9 four times, 20 three
// times). 0 when no lattice counts.
//
// Trying every anchor against every spike costs candidates x spikes^2,
// tens of seconds for 2,000 spikes. Instead, for each P the spikes are
// sorted by residue mod P and one sweep over that order evaluates every
// anchor: O(candidates x spikes log spikes), and O(spikes + P) per
// candidate for the usual short periods. Everything is in tenths of a
// step (spikes and P times periodScale), so residues stay integers. What
// makes the sweep possible:
//
//   - With tol < P/2 (P >= 2.6 steps, tol = max(1, P/20) steps), a spike s
//     fits the lattice anchored at a exactly when s and a are within tol of
//     each other mod P (circularly), and its lattice index round((s-a)/P)
//     is then the index of the multiple of P nearest s-a. At an exact half
//     (s-a = P/2 mod P) the distance is P/2 > tol, so the rounding
//     direction never matters.
//   - So the fit count, the number of distinct indices hit and their range
//     depend only on a's residue: anchors with one residue give lattices
//     shifted by whole periods, and each residue is evaluated once.
//   - Anchors in ascending residue order see a window of residues
//     [ρ-tol, ρ+tol] whose ends only move forward: two pointers give the fit
//     count, a count per lattice index the distinct hits, and two monotone
//     deques the smallest and largest index.
//
// It returns what the all-pairs search returned on every input whose
// spike indices are below 2^47 (where the float64 division in round is
// exact enough); runs never come close.
func period(spikes []int) float64 {
	n := len(spikes)
	if n < 3 {
		return 0
	}
	gaps := make([]float64, 0, n-1)
	for i := 1; i < n; i++ {
		gaps = append(gaps, float64(spikes[i]-spikes[i-1]))
	}
	slices.Sort(gaps)
	med := Quantile(gaps, 0.5)

	// The lattices depend on the set of spikes, not their order (the gaps
	// above do); the sweep wants them ascending, in tenths of a step.
	scaled := make([]int, n)
	for i, s := range spikes {
		scaled[i] = s * periodScale
	}
	slices.Sort(scaled)
	// ext holds each spike once plus the wrapped copies of those within
	// tol of 0 or of p, two sets that never meet: at most 2n.
	ps := periodSearch{
		spikes: scaled,
		base:   make([]periodEntry, n),
		ext:    make([]periodEntry, 0, 2*n),
		minQ:   make([]int, 0, 2*n),
		maxQ:   make([]int, 0, 2*n),
	}

	span := scaled[n-1] - scaled[0]
	bestP, bestHits := 0, 0
	better := func(hits, p int, whole bool) bool {
		if !whole && hits < 4 {
			return false // 3 spikes nearly fit some period in tenths
		}
		if hits != bestHits {
			return hits > bestHits
		}
		closer := math.Abs(float64(p)/periodScale-med) < math.Abs(float64(bestP)/periodScale-med)
		return hits > 0 && closer
	}
	try := func(p int, whole bool) {
		// Two hits k1 < k2 are of spikes within tol of k1*P and k2*P, so
		// (k2-k1)*P <= span+2*tol: a period too long to beat the winner
		// even with every point hit is skipped. After a short period with
		// many hits, that is every longer candidate.
		if most := (span+2*periodTol(p))/p + 1; !better(most, p, whole) {
			return
		}
		// Only each P's best lattice can change the winner: its other
		// lattices have fewer hits, or as many at the same distance from
		// the median, which never displaces a winner (ties need closer).
		if hits := ps.bestHits(p); better(hits, p, whole) {
			bestP, bestHits = p, hits
		}
	}
	// Whole periods first, then the tenths around each gap (ascending and
	// each once: the windows of distinct gaps do not overlap).
	prev := math.NaN()
	for _, g := range gaps {
		if g < 3 || g == prev {
			continue
		}
		prev = g
		try(int(g)*periodScale, true)
	}
	if bestHits > 0 {
		return float64(bestP) / periodScale
	}
	last := 0
	for _, g := range gaps {
		if g < 3 {
			continue
		}
		for p := int(g)*periodScale - periodScale/2 + 1; p <= int(g)*periodScale+periodScale/2; p++ {
			if p > last && p%periodScale != 0 {
				try(p, false)
				last = p
			}
		}
	}
	if bestHits == 0 {
		return 0
	}
	return fittedPeriod(scaled, bestP)
}

// fittedPeriod is what a fractional winner p reports: the least-squares
// slope of the spikes that fit its best lattice (the first anchor, in
// ascending order, with the most distinct hits) on their lattice indices,
// in steps to a tenth. The candidates within tol of the true period tie on
// hits, and the slope is the centre they straddle, not the end nearest the
// median gap. Called once, for the winner: spikes^2 is fine.
func fittedPeriod(scaled []int, p int) float64 {
	tol := periodTol(p)
	var best []int // lattice index of each spike that fits, else MinInt
	bestN := 0
	ks := make([]int, len(scaled))
	for _, a := range scaled {
		hits := map[int]bool{}
		fit, kmin, kmax := 0, math.MaxInt, math.MinInt
		for i, s := range scaled {
			d := s - a
			k := int(math.Round(float64(d) / float64(p)))
			ks[i] = math.MinInt
			if d-k*p <= tol && k*p-d <= tol {
				ks[i] = k
				hits[k] = true
				fit++
				kmin, kmax = min(kmin, k), max(kmax, k)
			}
		}
		// The lattice must count as in the search.
		h := len(hits)
		if h >= 3 && 3*fit >= 2*len(scaled) && 3*h >= 2*(kmax-kmin+1) && h > bestN {
			bestN, best = h, slices.Clone(ks)
		}
	}
	var n, sk, ss, skk, sks float64
	for i, k := range best {
		if k == math.MinInt {
			continue
		}
		x, y := float64(k), float64(scaled[i])/periodScale
		n, sk, ss, skk, sks = n+1, sk+x, ss+y, skk+x*x, sks+x*y
	}
	slope := (n*sks - sk*ss) / (n*skk - sk*sk)
	return math.Round(slope*periodScale) / periodScale
}

// periodTol is how far (in tenths of a step, as p) a spike may sit from
// a lattice point of period p and still fit it: 5% of the period, at least
// a step. For a whole period it is the whole-step rule max(1, P/20): the
// spikes and anchors are whole steps, so their differences are too.
func periodTol(p int) int {
	return max(periodScale, p/20)
}

// periodEntry is a spike seen from a lattice of period p: v is its residue
// mod p (shifted by ±p for the copies that wrap around), q the index of the
// multiple of p it is nearest to, and c that index compressed to a small
// range so that hits can be counted in a slice.
type periodEntry struct {
	v, q, c int
}

// periodSearch holds the buffers of one period call, reused for every
// candidate period so that the search allocates once.
type periodSearch struct {
	spikes     []int // ascending, in tenths of a step (periodScale)
	base, ext  []periodEntry
	count      []int32 // spikes in the window per compressed index
	buckets    []int32 // counting sort's, per residue
	minQ, maxQ []int   // monotone deques of ext positions
}

// bestHits is the most lattice points hit by a lattice of period p that
// counts (anchored at any spike), or 0 when none does.
func (ps *periodSearch) bestHits(p int) int {
	n := len(ps.spikes)
	tol := periodTol(p)

	// Residues and nearest-multiple indices. q is non-decreasing along the
	// ascending spikes; c keeps q's equalities and those of q±1 (the
	// indices of wrapped copies) but caps the step between distinct q at 3,
	// so the count slice stays O(spikes) however far apart spikes are.
	tmp := ps.ext[:n]
	c, lastQ := 1, 0
	for i, s := range ps.spikes {
		q, r := s/p, s%p
		if r < 0 {
			q, r = q-1, r+p
		}
		if i > 0 {
			c += min(q-lastQ, 3)
		}
		lastQ = q
		tmp[i] = periodEntry{v: r, q: q, c: c}
	}
	if need := c + 2; len(ps.count) < need {
		ps.count = make([]int32, need+need/2)
	} else {
		clear(ps.count[:need])
	}
	ps.sortByResidue(tmp, p)

	// The windows of anchors with residues in [0, p) reach from -tol to
	// p-1+tol: the spikes near p wrap below 0 (one period later: q+1), and
	// those near 0 past p (one period earlier: q-1). Since 2*tol < p, no
	// window holds two copies of a spike.
	ext := ps.ext[:0]
	for _, e := range ps.base {
		if e.v >= p-tol {
			ext = append(ext, periodEntry{e.v - p, e.q + 1, e.c + 1})
		}
	}
	ext = append(ext, ps.base...)
	for _, e := range ps.base {
		if e.v >= tol {
			break
		}
		ext = append(ext, periodEntry{e.v + p, e.q - 1, e.c - 1})
	}
	ps.ext = ext

	best := 0
	lo, hi, distinct := 0, 0, 0
	minQ, maxQ := ps.minQ[:0], ps.maxQ[:0]
	minHead, maxHead := 0, 0
	for i, a := range ps.base {
		if i > 0 && a.v == ps.base[i-1].v {
			continue // same residue, same lattice up to a shift
		}
		for hi < len(ext) && ext[hi].v <= a.v+tol {
			e := ext[hi]
			if ps.count[e.c]++; ps.count[e.c] == 1 {
				distinct++
			}
			for len(minQ) > minHead && ext[minQ[len(minQ)-1]].q >= e.q {
				minQ = minQ[:len(minQ)-1]
			}
			minQ = append(minQ, hi)
			for len(maxQ) > maxHead && ext[maxQ[len(maxQ)-1]].q <= e.q {
				maxQ = maxQ[:len(maxQ)-1]
			}
			maxQ = append(maxQ, hi)
			hi++
		}
		for ext[lo].v < a.v-tol {
			e := ext[lo]
			if ps.count[e.c]--; ps.count[e.c] == 0 {
				distinct--
			}
			if minQ[minHead] == lo {
				minHead++
			}
			if maxQ[maxHead] == lo {
				maxHead++
			}
			lo++
		}
		fit := hi - lo
		width := ext[maxQ[maxHead]].q - ext[minQ[minHead]].q + 1
		if distinct >= 3 && 3*fit >= 2*n && 3*distinct >= 2*width {
			best = max(best, distinct)
		}
	}
	ps.minQ, ps.maxQ = minQ, maxQ
	return best
}

// sortByResidue sorts entries into ps.base by v. Periods are usually short
// next to the number of spikes, and then a counting sort is several times
// faster than a comparison sort (which is the search's main cost).
func (ps *periodSearch) sortByResidue(entries []periodEntry, p int) {
	if p > 4*len(entries) {
		copy(ps.base, entries)
		slices.SortFunc(ps.base, func(a, b periodEntry) int { return cmp.Compare(a.v, b.v) })
		return
	}
	if len(ps.buckets) < p+1 {
		ps.buckets = make([]int32, 4*len(entries)+1) // once: p only grows
	}
	b := ps.buckets[:p+1]
	clear(b)
	for _, e := range entries {
		b[e.v+1]++
	}
	for r := 1; r <= p; r++ {
		b[r] += b[r-1]
	}
	for _, e := range entries {
		ps.base[b[e.v]] = e
		b[e.v]++
	}
}
