package stats

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func lognormal(rng *rand.Rand, n int, center, sd float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = center * math.Exp(sd*rng.NormFloat64())
	}
	return out
}

func rowOf(rows []*Row, metric string) *Row {
	for _, r := range rows {
		if r.Metric == metric {
			return r
		}
	}
	return nil
}

// At 2+2 and 5+5 runs, where the U test can never reach a family's level
// (p >= 0.33 and >= 0.008), a doubling against a 3% run-to-run spread is
// regressed: Student's t on the logarithms has no floor on its p-value.
func TestSmallSamplesCanDecide(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, n := range []int{2, 3, 5} {
		missed := 0
		for range 100 {
			var pairs []Pair
			for _, m := range DefaultPrimary {
				c := 100.0
				if mt, _ := MetricByName(m); mt.FloorAbs > 0 {
					c *= mt.FloorAbs // above the floor that growth under it counts as
				}
				pairs = append(pairs, Pair{Bench: "b", Metric: m, Old: lognormal(rng, n, c, 0.03), New: lognormal(rng, n, 2*c, 0.03)})
			}
			for _, r := range Compare(pairs, Options{}) {
				if r.Verdict != Regressed || r.Test != TestTLog {
					missed++
					t.Logf("%d+%d: %s %s (%s)", n, n, r.Metric, r.Verdict, r.Reason)
				}
			}
		}
		if missed > 5*100/20 {
			t.Errorf("%d+%d runs: %d of 500 doubled metrics not regressed", n, n, missed)
		}
	}
}

// Only primary metrics are tested and enter the family; the others are
// reported with their change and interval, descriptive, and never fail.
func TestOnlyPrimaryMetricsAreTested(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	g := realistic
	g.steps = 2000
	old, new := g.summaries(rng, 5), g.summaries(rng, 5)
	for i := range new {
		new[i].Max *= 3 // not primary: reported, not judged
	}
	rows := Compare(MetricPairs("b", old, new), Options{})
	tested := 0
	for _, r := range rows {
		switch {
		case IsPrimary(r.Metric, nil) && r.Tested():
			tested++
		case r.Tested():
			t.Errorf("%s is not primary but was tested (%s)", r.Metric, r.Reason)
		}
		if r.Tested() && r.FamilySize != 6 { // gen2-pause, p50, p99, p99-no-gen2, p99-rel, gc-share; spike-rate is the same in every run
			t.Errorf("%s: family of %d tests", r.Metric, r.FamilySize)
		}
	}
	if tested < 6 {
		t.Errorf("%d primary metrics tested, want 6", tested)
	}
	mx := rowOf(rows, "max")
	if mx.Verdict != Descriptive || !(mx.ChangeLo > 1) || !strings.Contains(mx.Reason, "not tested") {
		t.Errorf("max tripled: %s %v [%v, %v] %s, want descriptive with its interval", mx.Verdict, mx.Change, mx.ChangeLo, mx.ChangeHi, mx.Reason)
	}
	if r := rowOf(rows, "gen0-collections"); r.Verdict != Same || r.Test != TestExact {
		t.Errorf("gen0-collections: %s %s, want the exact comparison", r.Verdict, r.Test)
	}
}

// Options.Family splits the tests into families, each with its own Holm
// correction.
func TestFamilies(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	var pairs []Pair
	for _, b := range []string{"a", "b"} {
		for _, m := range []string{"p50", "p99", "gc-share"} {
			pairs = append(pairs, Pair{Bench: b, Metric: m, Old: lognormal(rng, 5, 100, 0.03), New: lognormal(rng, 5, 100, 0.03)})
		}
	}
	for _, c := range []struct {
		family func(Pair) string
		size   int
	}{{nil, 6}, {func(p Pair) string { return p.Bench }, 3}} {
		smallest := map[string]*Row{}
		for _, r := range Compare(pairs, Options{Family: c.family}) {
			if r.FamilySize != c.size {
				t.Errorf("%s %s: family %q of %d, want %d", r.Bench, r.Metric, r.Family, r.FamilySize, c.size)
			}
			if s := smallest[r.Family]; s == nil || r.P < s.P {
				smallest[r.Family] = r
			}
		}
		for f, r := range smallest {
			if r.Level != 0.05/float64(c.size) {
				t.Errorf("family %q: the smallest p is held to %v, want Holm's first step %v", f, r.Level, 0.05/float64(c.size))
			}
		}
	}
}

// Runs of different lengths: counts per 1000 steps are not exact across
// lengths (the same generator at 200 and 210 steps gave gen0-collections
// "improved" every time), and a maximum grows with the length (2000 against
// 4000 steps: max +6.6%). Neither is judged; both warn.
func TestRunsOfDifferentLengths(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 28))
	short, long := realistic, realistic
	short.steps, long.steps = 200, 210
	for range 20 {
		rows := Compare(MetricPairs("b", short.summaries(rng, 3), long.summaries(rng, 3)), Options{})
		for _, r := range rows {
			if r.Exact && r.Verdict != Descriptive && r.Old[0] != 0 {
				t.Fatalf("%s at 200 vs 210 steps: %s (%s), want descriptive", r.Metric, r.Verdict, r.Reason)
			}
		}
		c := rowOf(rows, "gen0-collections")
		if c.Verdict != Descriptive || !strings.Contains(c.Reason, "200 to 210 steps") {
			t.Fatalf("gen0-collections: %s %q", c.Verdict, c.Reason)
		}
	}
	short.steps, long.steps = 2000, 4000
	rows := Compare(MetricPairs("b", short.summaries(rng, 5), long.summaries(rng, 5)), Options{})
	for _, m := range []string{"max", "gen2-pause", "gen0-pause"} {
		if r := rowOf(rows, m); r.Verdict != Descriptive || r.Tested() || len(r.Warnings) == 0 {
			t.Errorf("%s at 2000 vs 4000 steps: %s %s, want descriptive with a warning", m, r.Verdict, r.Reason)
		}
	}
	if r := rowOf(rows, "p50"); !r.Tested() {
		t.Errorf("p50 at 2000 vs 4000 steps: not tested (%s)", r.Reason)
	}
}

// Across run lengths p99 needs 368 steps a run (0.99^n <= 0.025), as
// p99.9 needs 3688; between runs of one length p99 is compared at any size
// (a per-run value, as the maxima are), p99.9 still not.
func TestP99NeedsMinSteps(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 30))
	for _, c := range []struct {
		old, new int
		want     bool
	}{{15, 15, true}, {200, 200, true}, {367, 367, true}, {200, 300, false}, {367, 400, false}, {368, 400, true}, {2000, 2000, true}} {
		g, h := realistic, realistic
		g.steps, h.steps = c.old, c.new
		rows := Compare(MetricPairs("b", g.summaries(rng, 2), h.summaries(rng, 2)), Options{})
		if got := rowOf(rows, "p99") != nil; got != c.want {
			t.Errorf("%d vs %d steps: p99 compared %v, want %v", c.old, c.new, got, c.want)
		}
		if got := rowOf(rows, "p99.9") != nil; got != (min(c.old, c.new) >= MinStepsP999) {
			t.Errorf("%d vs %d steps: p99.9 compared %v", c.old, c.new, got)
		}
	}
	if math.Pow(0.99, MinStepsP99) > 0.025 || math.Pow(0.99, MinStepsP99-1) <= 0.025 {
		t.Errorf("MinStepsP99 %d is not the smallest n with 0.99^n <= 0.025", MinStepsP99)
	}
}

// The floors sit below what users must catch (the customer's spikes grew
// +4.7%), and every tested verdict says what its size could detect.
func TestFloorsAndDetectable(t *testing.T) {
	for _, m := range []string{"p50", "p90", "p99", "gen2-pause"} {
		if f := DefaultFloors[m]; f >= 0.047 {
			t.Errorf("default floor of %s is %v, above the customer's +4.7%%", m, f)
		}
	}
	rng := rand.New(rand.NewPCG(31, 32))
	old, new := lognormal(rng, 5, 100, 0.02), lognormal(rng, 5, 100, 0.02)
	r := Compare([]Pair{{Bench: "b", Metric: "p99", Old: old, New: new}}, Options{})[0]
	// 5+5 runs, 2% spread, alone: t_8 critical 2.31, noncentrality for 95%
	// power about 4.1, so about 3% + 4.1*0.02*sqrt(2/5) ~ 8%.
	// An unknown leads with what the size could not see (a gate passes
	// unknowns by default: that is what the pass is worth); a decided row
	// says it after its interval.
	want := "detectable: +"
	if r.Verdict == Unknown {
		want = "undecided: a change under +"
	}
	if !(r.Detectable > 0.06 && r.Detectable < 0.10) || !strings.Contains(r.Reason, want) || !strings.Contains(r.Reason, "at 5+5 runs") {
		t.Errorf("detectable %v, reason %q", r.Detectable, r.Reason)
	}
}

// The interval is the test's: p <= Level exactly when the interval at
// 1-Level excludes no change, for the U test with ties (tied pairs count
// against the change in both) and for t.
func TestPValueMatchesInterval(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 34))
	disagree := 0
	for trial := range 400 {
		n := 3 + rng.IntN(9)
		if trial%2 == 0 {
			n = RankTestRuns + rng.IntN(6)
		}
		old, new := make([]float64, n), make([]float64, n)
		for i := range old {
			old[i] = float64(10 + rng.IntN(4)) // heavy ties
			new[i] = float64(10 + rng.IntN(4) + rng.IntN(2))
		}
		r := Compare([]Pair{{Bench: "b", Metric: "m", Old: old, New: new, Better: -1}}, Options{Floor: func(Pair) float64 { return 0 }})[0]
		excludes := r.ChangeLo > 0 || r.ChangeHi < 0
		if (r.P <= r.Level) != excludes {
			disagree++
			t.Logf("%s %d+%d: p %v level %v, interval [%v, %v]", r.Test, n, n, r.P, r.Level, r.ChangeLo, r.ChangeHi)
		}
	}
	if disagree > 0 {
		t.Errorf("p-value and interval disagree in %d of 400 comparisons", disagree)
	}
}

// same reads the interval at the same (adjusted) level as regressed: a
// change whose 95% interval lies inside the floor but whose interval at
// the family's level does not is unknown, not same.
func TestSameUsesTheFamilyLevel(t *testing.T) {
	old := []float64{100, 101, 99, 100.5, 99.5}
	new := []float64{101.2, 102.2, 100.2, 101.7, 100.7} // +1.2%, spread ~0.8%
	pairs := []Pair{{Bench: "b", Metric: "p50", Old: old, New: new}}
	for range 19 { // a family of 20
		pairs = append(pairs, Pair{Bench: "b", Metric: "p50", Old: []float64{1, 2, 3}, New: []float64{1, 2, 3}})
	}
	floor := func(Pair) float64 { return 0.025 }
	alone := Compare(pairs[:1], Options{Floor: floor})[0]
	fam := Compare(pairs, Options{Floor: floor})[0]
	if alone.Verdict != Regressed && alone.Verdict != Same && alone.Verdict != Unknown {
		t.Fatalf("alone: %s", alone.Verdict)
	}
	if !(fam.Level < 0.05/10) || fam.ChangeHi-fam.ChangeLo <= alone.ChangeHi-alone.ChangeLo {
		t.Errorf("family of 20: level %v, interval [%v, %v] not wider than alone [%v, %v]", fam.Level, fam.ChangeLo, fam.ChangeHi, alone.ChangeLo, alone.ChangeHi)
	}
	if alone.Verdict == Same && fam.ChangeHi > 0.025 && fam.Verdict == Same {
		t.Errorf("same in a family of 20 with its interval [%v, %v] reaching beyond the floor", fam.ChangeLo, fam.ChangeHi)
	}
	if !(alone.ChangeHi < 0.025) || fam.Verdict != Unknown {
		t.Errorf("alone: %s [%v, %v]; in the family: %s [%v, %v]; want same alone and unknown in the family", alone.Verdict, alone.ChangeLo, alone.ChangeHi, fam.Verdict, fam.ChangeLo, fam.ChangeHi)
	}
}

// One run a side cannot measure the run-to-run spread: the reason says so
// for positive data too (the log interval's lower end was -100%, not -inf,
// and the message never fired).
func TestTooFewRuns(t *testing.T) {
	r := Compare([]Pair{{Bench: "b", Metric: "p50", Old: []float64{40e6}, New: []float64{41e6}}}, Options{})[0]
	if r.Verdict != Unknown || !strings.Contains(r.Reason, "too few runs (1+1)") {
		t.Errorf("1+1: %s %q", r.Verdict, r.Reason)
	}
	r = Compare([]Pair{{Bench: "b", Metric: "p50", Old: []float64{40e6, 40.5e6, 39.8e6}, New: []float64{41e6, 41.3e6, 40.7e6}}}, Options{})[0]
	if math.IsInf(r.ChangeHi, 0) || r.ChangeLo <= -1 {
		t.Errorf("3+3: interval [%v, %v], want a finite t-interval", r.ChangeLo, r.ChangeHi)
	}
}

// Counts per 1000 steps take multiples of 1000/steps: two runs of 5 spikes
// in 200 steps against two of 6 have no spread, and the t-test must not
// call +20% certain (rounding hides noise of sd quantum/sqrt(12)).
func TestQuantizedCountsAreNotCertain(t *testing.T) {
	steps := []int{200, 200}
	r := Compare([]Pair{{Bench: "b", Metric: "spike-rate", Old: []float64{25, 25}, New: []float64{30, 30}, OldSteps: steps, NewSteps: steps}}, Options{})[0]
	if r.Verdict == Regressed || !(r.P > 0.01) {
		t.Errorf("5 vs 6 spikes in 200 steps: %s, p %v (%s)", r.Verdict, r.P, r.Reason)
	}
}

// Fewer but longer collections are not an improvement: the variant's
// overall verdict weighs the pause against the count.
func TestFewerLongerCollections(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 36))
	steps := []int{2000, 2000, 2000, 2000, 2000}
	pairs := []Pair{
		{Bench: "b", Metric: "gen2-collections", Exact: true, Old: []float64{25, 25, 25, 25, 25}, New: []float64{10, 10, 10, 10, 10}},
		{Bench: "b", Metric: "gen2-pause", Old: lognormal(rng, 5, 10e6, 0.03), New: lognormal(rng, 5, 25e6, 0.03)},
		{Bench: "b", Metric: "p50", Old: lognormal(rng, 5, 40e6, 0.01), New: lognormal(rng, 5, 40e6, 0.01)},
		{Bench: "c", Metric: "gen2-collections", Exact: true, Old: []float64{25, 25, 25, 25, 25}, New: []float64{10, 10, 10, 10, 10}},
		{Bench: "c", Metric: "gen2-pause", Old: lognormal(rng, 5, 10e6, 0.03), New: lognormal(rng, 5, 10e6, 0.03)},
	}
	for i := range pairs {
		pairs[i].OldSteps, pairs[i].NewSteps = steps, steps
	}
	pairs[1].Descriptive = true // even untested, a longer pause counts
	vs := VariantVerdicts(Compare(pairs, Options{}))
	if len(vs) != 2 || vs[0].Bench != "b" || vs[0].Verdict == Improved || len(vs[0].FewerLonger) != 1 || vs[0].FewerLonger[0] != 2 ||
		!strings.Contains(vs[0].Reason, FewerLongerNote) {
		t.Errorf("fewer, longer: %+v", vs)
	}
	if vs[1].Verdict != Improved {
		t.Errorf("fewer collections, same pause: %+v, want improved", vs[1])
	}
}
