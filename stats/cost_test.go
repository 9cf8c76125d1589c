package stats

import "testing"

// TestDecideTogether: a generation's count and the heap its collections
// walk are judged on their sum (the torch 2.5.1 -> 2.15.0 A/B of
// ascend-gpt-periodic-gc: full collections -4.59% of the step, the heap
// they walk +4.74%; the user pays +0.16%).
func TestDecideTogether(t *testing.T) {
	row := func(metric string, old, new, share float64, v Verdict) *Row {
		return &Row{Pair: Pair{Metric: metric, Old: []float64{old}, New: []float64{new}, Cost: &Cost{Share: share, What: "test"}},
			Change: new/old - 1, Verdict: v}
	}
	for _, tc := range []struct {
		name                    string
		count, census           float64 // cost shares
		wantCount, wantCensus   Verdict
		countMoves, censusMoves bool
	}{
		{"fewer full collections, each walks more: they cancel", -0.0459, 0.0474, Descriptive, Descriptive, true, true},
		{"the heap's cost wins", -0.002, 0.010, Descriptive, Regressed, true, true},
		{"the fewer collections win", -0.020, 0.005, Improved, Descriptive, true, true},
		{"both add, each under the floor, together over it", 0.003, 0.003, Regressed, Regressed, true, true},
		{"the count did not move: the census alone", 0, 0.008, Same, Regressed, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			co, cn := 100.0, 1000.0
			if tc.countMoves {
				cn = 900
			}
			c := row("gen2-collections", co, cn, tc.count, Descriptive)
			if !tc.countMoves {
				c.Change, c.Verdict = 0, Same
			} else if tc.count > CostFloor {
				c.Verdict = Regressed
			} else if tc.count < -CostFloor {
				c.Verdict = Improved
			}
			h := row("heap-census", 500000, 600000, tc.census, Regressed)
			if tc.census <= CostFloor {
				h.Verdict = Descriptive
			}
			DecideTogether(c, h)
			if c.Verdict != tc.wantCount || h.Verdict != tc.wantCensus {
				t.Fatalf("count %v, census %v; want %v, %v\ncount: %s\ncensus: %s", c.Verdict, h.Verdict, tc.wantCount, tc.wantCensus, c.Reason, h.Reason)
			}
		})
	}
}
