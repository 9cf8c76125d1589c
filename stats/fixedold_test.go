package stats

import (
	"math"
	"strings"
	"testing"
)

// TestRunsNeededAgainstAFixedBaseline: a gate's baseline does not grow,
// so what decides an unknown is counted in new runs against the old side's.
// Counted per side (both growing), 3 baseline runs against 20 new ones
// asked for "about 13 runs per side (10 more)" with 20 new runs there
// already, and a gate's adaptive rounds added runs until their budget
// ended.
func TestRunsNeededAgainstAFixedBaseline(t *testing.T) {
	side := func(n int, level float64) []float64 {
		var xs []float64
		for i := range n {
			xs = append(xs, level*(1+0.05*math.Sin(float64(i))))
		}
		return xs
	}
	for _, sizes := range [][2]int{{3, 20}, {12, 4}} {
		old, new := side(sizes[0], 1), side(sizes[1], 1.045)
		pair := Pair{Bench: "b", Metric: "p50", Better: -1, Old: old, New: new}
		for _, fixed := range []bool{false, true} {
			r := Compare([]Pair{pair}, Options{OldFixed: fixed, Floor: func(Pair) float64 { return 0.03 }})[0]
			if r.Verdict != Unknown {
				t.Fatalf("fixed %v: %s: %s; the test wants an unknown", fixed, r.Verdict, r.Reason)
			}
			t.Logf("fixed %v: RunsNeeded %d, more %d: %s", fixed, r.RunsNeeded, r.MoreRuns(), r.Reason)
			if !fixed {
				continue
			}
			level := 0.05 / float64(r.FamilySize)
			_, fl := testScale(r)
			target := math.Abs(math.Abs(r.est) - fl)
			switch {
			case r.RunsNeeded >= MaxRunsNeeded:
				// No new runs decide: the old side's 3 bound the interval.
				if w := halfWidth(len(old), MaxRunsNeeded, r.Spread, r.Drift, level); w < target {
					t.Errorf("says no new runs decide, but %d would: half-width %.4f < %.4f", MaxRunsNeeded, w, target)
				}
				if !strings.Contains(r.Reason, "no number of new runs") {
					t.Errorf("reason %q does not say new runs cannot decide", r.Reason)
				}
			default:
				if w := halfWidth(len(old), r.RunsNeeded, r.Spread, r.Drift, level); w >= target {
					t.Errorf("asks for %d new runs, which would not decide: half-width %.4f >= %.4f", r.RunsNeeded, w, target)
				}
				if r.MoreRuns() != r.RunsNeeded-len(new) {
					t.Errorf("more runs %d, want %d - %d new", r.MoreRuns(), r.RunsNeeded, len(new))
				}
				if w := halfWidth(len(old), r.RunsNeeded-1, r.Spread, r.Drift, level); w < target {
					t.Errorf("asks for %d new runs where %d decide", r.RunsNeeded, r.RunsNeeded-1)
				}
			}
		}
	}
}
