package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gcjitter/gcjitter/bench"
)

// periodReference is period as it was before the residue sweep: every
// candidate period x every anchor x every spike, in tenths of a step. It is
// the specification the fast version must match exactly.
func periodReference(spikes []int) float64 {
	if len(spikes) < 3 {
		return 0
	}
	gaps := make([]float64, 0, len(spikes)-1)
	for i := 1; i < len(spikes); i++ {
		gaps = append(gaps, float64(spikes[i]-spikes[i-1]))
	}
	slices.Sort(gaps)
	med := Quantile(gaps, 0.5)
	bestP, bestHits, bestWhole := 0, 0, true // bestWhole: no fractional search yet
	tried := map[int]bool{}
	search := func(p int, whole bool) {
		tol := max(periodScale, p/20)
		for _, anchor := range spikes {
			hits := map[int]bool{}
			fit, kmin, kmax := 0, math.MaxInt, math.MinInt
			for _, s := range spikes {
				d := (s - anchor) * periodScale
				k := int(math.Round(float64(d) / float64(p)))
				if abs(d-k*p) <= tol {
					fit++
					hits[k] = true
					kmin, kmax = min(kmin, k), max(kmax, k)
				}
			}
			n := len(hits)
			if n < 3 || !whole && n < 4 || 3*fit < 2*len(spikes) || 3*n < 2*(kmax-kmin+1) {
				continue
			}
			closer := math.Abs(float64(p)/periodScale-med) < math.Abs(float64(bestP)/periodScale-med)
			if n > bestHits || (n == bestHits && closer) {
				bestP, bestHits, bestWhole = p, n, whole
			}
		}
	}
	for _, g := range gaps {
		if p := int(g) * periodScale; g >= 3 && !tried[p] {
			tried[p] = true
			search(p, true)
		}
	}
	wholeFound := bestHits > 0 // fractional periods only where no whole one counts
	for _, g := range gaps {
		for p := int(g)*periodScale - periodScale/2 + 1; !wholeFound && g >= 3 && p <= int(g)*periodScale+periodScale/2; p++ {
			if !tried[p] {
				tried[p] = true
				search(p, false)
			}
		}
	}
	if !bestWhole {
		// The reference checks the search; the slope it reports is
		// period's own (TestPeriodTable checks it).
		scaled := make([]int, len(spikes))
		for i, s := range spikes {
			scaled[i] = s * periodScale
		}
		slices.Sort(scaled)
		return fittedPeriod(scaled, bestP)
	}
	return float64(bestP) / periodScale
}

// quantised is the steps in which a schedule of one event every p steps,
// starting at step start, lands: floor(start + k*p) for k < n.
func quantised(p float64, start, n int) []int {
	s := make([]int, n)
	for k := range s {
		s[k] = int(math.Floor(float64(start) + float64(k)*p))
	}
	return s
}

// abs is the reference's; period needs none.
func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func TestPeriodTable(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	random := randomSpikes(rng, 40, 2000)
	for _, c := range []struct {
		name   string
		spikes []int
		want   float64
	}{
		{"period 39, two strays", []int{5, 38, 77, 100, 116, 155, 193}, 39},
		{"period 25, jitter, missing hits, strays", []int{3, 25, 50, 76, 100, 126, 140, 175, 199, 225, 250}, 25},
		// A collection every so many allocations lands on floor(k x P)
		// steps; whole periods 24 and 25 drift a step off every two
		// periods and fit under 2/3 of these spikes.
		{"period 24.5, quantised to steps", quantised(24.5, 3, 12), 24.5},
		{"period 41.3, quantised to steps, 40 of them", quantised(41.3, 7, 40), 41.3},
		{"random", random, 0},
		{"2 spikes", []int{10, 20}, 0},
		{"nothing", nil, 0},
		{"gaps under 3", []int{0, 1, 2, 4, 5, 6}, 0},
	} {
		if got := period(c.spikes); got != c.want {
			t.Errorf("%s: period(%v) = %v, want %v", c.name, c.spikes, got, c.want)
		}
		if got := periodReference(c.spikes); got != c.want {
			t.Errorf("%s: periodReference(%v) = %v, want %v", c.name, c.spikes, got, c.want)
		}
	}
}

// TestPeriodKnownTruth: a collection every P allocations lands on
// floor(start + k*P) steps, P rarely whole. Seeded, so the rates are exact
// for this code: 10-15 collections at P in [10, 100), half with a stray
// spike (a young collection on a quiet step), must be found within half a
// step in 95% (whole-step lattices alone: 1732 of 2000, 86.6%); random
// spikes must rarely read periodic.
func TestPeriodKnownTruth(t *testing.T) {
	rng := rand.New(rand.NewPCG(20261206, 1))
	const trials = 2000
	found, near := 0, 0
	for range trials {
		p := 10 + rng.Float64()*90
		s := quantised(p, rng.IntN(int(p)), 10+rng.IntN(6))
		if rng.IntN(2) == 0 {
			s = sortedUnique(append(s, rng.IntN(s[len(s)-1])))
		}
		got := period(s)
		if got > 0 {
			found++
		}
		if math.Abs(got-p) <= 0.5 {
			near++
		}
	}
	t.Logf("quantised lattices: a period in %d of %d, within half a step of the truth in %d", found, trials, near)
	if found < trials*99/100 || near < trials*95/100 {
		t.Errorf("quantised lattices: a period in %d of %d, within half a step in %d; want 99%% and 95%%", found, trials, near)
	}
	rng = rand.New(rand.NewPCG(20261206, 2))
	for _, n := range []int{8, 12, 20} {
		periodic := 0
		for range trials {
			if period(randomSpikes(rng, n, 270)) > 0 {
				periodic++
			}
		}
		// Measured: 44, 11 and 0 of 2000 (whole-step lattices alone: 21, 6, 0).
		t.Logf("%d random spikes in 270 steps: a period in %d of %d", n, periodic, trials)
		if periodic > trials*4/100 {
			t.Errorf("%d random spikes in 270 steps: a period in %d of %d, want at most 4%%", n, periodic, trials)
		}
	}
}

// TestPeriodMatchesReference checks the sweep against the all-pairs search
// on seeded random inputs of every shape a run gives (and a few it does
// not: unsorted, repeated, negative), asserting exact equality.
func TestPeriodMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(20261130, 7))
	const cases = 4000
	counts := map[float64]int{}
	for i := range cases {
		var spikes []int
		switch kind := i % 8; kind {
		case 0, 1, 2: // a lattice with jitter, missing hits and strays
			spikes = latticeSpikes(rng, latticeShape{
				period: 3 + rng.IntN(120),
				points: 3 + rng.IntN(40),
				jitter: rng.IntN(8),
				miss:   rng.Float64() * 0.4,
				noise:  rng.IntN(12),
			})
		case 3: // random spikes
			spikes = randomSpikes(rng, rng.IntN(60), 1+rng.IntN(3000))
		case 4: // tiny inputs in a small range: ties and edge residues
			spikes = randomSpikes(rng, rng.IntN(8), 1+rng.IntN(60))
		case 5: // two lattices mixed: which wins, ties on hits
			a := latticeSpikes(rng, latticeShape{period: 3 + rng.IntN(60), points: 3 + rng.IntN(15), jitter: rng.IntN(3), miss: 0.2})
			b := latticeSpikes(rng, latticeShape{period: 3 + rng.IntN(60), points: 3 + rng.IntN(15), jitter: rng.IntN(3), miss: 0.2})
			spikes = sortedUnique(append(a, b...))
		case 6: // large periods (tol well above 1) and even periods at half
			p := 40 + rng.IntN(400)
			if rng.IntN(2) == 0 {
				p &^= 1
			}
			spikes = latticeSpikes(rng, latticeShape{
				period: p,
				points: 3 + rng.IntN(20),
				jitter: rng.IntN(p/10 + 2),
				miss:   rng.Float64() * 0.3,
				noise:  rng.IntN(6),
			})
		case 7: // off Summarizer's contract: unsorted, repeated, negative
			spikes = latticeSpikes(rng, latticeShape{period: 3 + rng.IntN(50), points: 3 + rng.IntN(20), jitter: rng.IntN(3), miss: 0.2, noise: rng.IntN(4)})
			off := rng.IntN(2000)
			for j := range spikes {
				spikes[j] -= off
			}
			if len(spikes) > 0 && rng.IntN(2) == 0 {
				spikes = append(spikes, spikes[rng.IntN(len(spikes))])
			}
			rng.Shuffle(len(spikes), func(a, b int) { spikes[a], spikes[b] = spikes[b], spikes[a] })
			if rng.IntN(2) == 0 {
				slices.Sort(spikes)
			}
		}
		in := slices.Clone(spikes)
		want := periodReference(spikes)
		got := period(spikes)
		if !slices.Equal(in, spikes) {
			t.Fatalf("case %d: period modified its input", i)
		}
		if got != want {
			t.Fatalf("case %d: period(%v) = %v, reference %v", i, spikes, got, want)
		}
		counts[want]++
	}
	// The inputs must exercise both outcomes, or equality proves little.
	if counts[0] < cases/10 || counts[0] > cases*9/10 {
		t.Errorf("%d of %d cases found no period: the generators are lopsided", counts[0], cases)
	}
	t.Logf("%d cases, %d distinct results, %d without a period", cases, len(counts), counts[0])
}

type latticeShape struct {
	period, points, jitter int
	miss                   float64 // probability that a lattice point has no spike
	noise                  int     // stray spikes anywhere
}

// latticeSpikes makes ascending, distinct, non-negative spike indices as
// Summarizer does: a lattice point every period steps, moved by up to
// jitter either way, some missing, plus strays.
func latticeSpikes(rng *rand.Rand, sh latticeShape) []int {
	start := sh.jitter + rng.IntN(sh.period+1)
	var s []int
	for k := range sh.points {
		if rng.Float64() < sh.miss {
			continue
		}
		j := 0
		if sh.jitter > 0 {
			j = rng.IntN(2*sh.jitter+1) - sh.jitter
		}
		s = append(s, start+k*sh.period+j)
	}
	end := start + sh.points*sh.period + sh.jitter + 1
	for range sh.noise {
		s = append(s, rng.IntN(end))
	}
	return sortedUnique(s)
}

// randomSpikes is up to n distinct ascending indices in [0, steps).
func randomSpikes(rng *rand.Rand, n, steps int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = rng.IntN(steps)
	}
	return sortedUnique(s)
}

func sortedUnique(s []int) []int {
	slices.Sort(s)
	return slices.Compact(s)
}

// spikes50k is 2,000 spikes in 50,000 steps: a period-25 lattice with a
// step of jitter, a tenth of its points missing, and strays making up the
// rest, the shape of a long run with a periodic collection.
func spikes50k() []int {
	const steps, want = 50000, 2000
	rng := rand.New(rand.NewPCG(50000, 2000))
	s := latticeSpikes(rng, latticeShape{period: 25, points: steps/25 - 1, jitter: 1, miss: 0.1})
	for len(s) < want {
		s = sortedUnique(append(s, rng.IntN(steps)))
	}
	return s[:want]
}

func BenchmarkPeriod50kSteps2000Spikes(b *testing.B) {
	s := spikes50k()
	b.ReportMetric(float64(len(s)), "spikes")
	b.ReportAllocs()
	for b.Loop() {
		if p := period(s); p != 25 {
			b.Fatalf("period %v, want 25", p)
		}
	}
}

// BenchmarkPeriod50kSteps2000RandomSpikes is the search's worst case in a
// run: no period, so no candidate can be skipped, and many distinct gaps.
func BenchmarkPeriod50kSteps2000RandomSpikes(b *testing.B) {
	rng := rand.New(rand.NewPCG(50000, 1))
	var s []int
	for len(s) < 2000 {
		s = sortedUnique(append(s, rng.IntN(50000)))
	}
	b.ReportAllocs()
	for b.Loop() {
		if p := period(s); p != 0 {
			b.Fatalf("period %v, want 0", p)
		}
	}
}

// BenchmarkPeriodReference50kSteps2000Spikes times the all-pairs search on
// the same input (tens of seconds: run it with -benchtime 1x).
func BenchmarkPeriodReference50kSteps2000Spikes(b *testing.B) {
	s := spikes50k()
	for b.Loop() {
		if p := periodReference(s); p != 25 {
			b.Fatalf("period %v, want 25", p)
		}
	}
}

// BenchmarkPeriodSummarizer50kSteps2000Spikes summarises a whole 50k-step
// run whose spikes are spikes50k's, to show what the period search is of it.
func BenchmarkPeriodSummarizer50kSteps2000Spikes(b *testing.B) {
	const steps = 50000
	rng := rand.New(rand.NewPCG(1, 50000))
	spiky := map[int]bool{}
	for _, i := range spikes50k() {
		spiky[i] = true
	}
	st := make([]bench.Step, steps)
	for i := range st {
		st[i] = bench.Step{Index: i, DurationNS: 1_000_000 + rng.Int64N(100_000)}
		if spiky[i] {
			st[i].DurationNS = 5_000_000
			st[i].GC = []bench.GCEvent{{Gen: 2, PauseNS: 4_000_000, InStep: true}}
		}
	}
	for b.Loop() {
		var sm Summarizer
		for i := range st {
			sm.Add(&st[i])
		}
		r := sm.Result(SpikeRule{Factor: 3})
		if r.SpikesWithGC != 2000 || r.SpikePeriod != 25 {
			b.Fatalf("%d spikes with a collection, period %v; want 2000, 25", r.SpikesWithGC, r.SpikePeriod)
		}
	}
}
