package stats

import (
	"math/rand/v2"
	"testing"
)

// TestWide: a comparison of 2+2 runs with a 30% run spread has an interval
// too wide to read, and the runs it asks for narrow it within WideSpan
// when they are run (drawn from the same distributions); 20+20 runs of the
// same spread are readable as they are.
func TestWide(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	draw := func(n int, center float64) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = center * (1 + 0.3*rng.NormFloat64())
			if xs[i] <= 0 {
				xs[i] = center / 10
			}
		}
		return xs
	}
	row := func(n int) *Row {
		return Compare([]Pair{{Bench: "b", Metric: "max", Unit: "max-ns/step", Better: -1, Descriptive: true,
			Old: draw(n, 100), New: draw(n, 110)}}, Options{})[0]
	}
	wide, needs := row(2).Wide()
	if !wide || needs <= 2 || needs >= MaxRunsNeeded {
		t.Fatalf("2+2 runs of a 30%% spread: wide %v, needs %d; want wide, needing more than 2 runs", wide, needs)
	}
	misses := 0
	for range 20 {
		if w, _ := row(needs + 2).Wide(); w {
			misses++
		}
	}
	if misses > 2 {
		t.Errorf("%d of 20 comparisons at the %d runs asked for (+2) were still too wide", misses, needs)
	}
	if w, _ := row(20).Wide(); w {
		t.Errorf("20+20 runs of a 30%% spread read as too wide")
	}
}
