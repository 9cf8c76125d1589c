package fit

import (
	"context"
	"math"
	"testing"
)

// model is a collector of known behaviour, shaped like CPython 3.11's: the
// young collections follow the net allocations, a full collection waits
// for 11 middle ones and for the survivors to reach a quarter of the heap,
// and it pauses in proportion to the heap and its weight.
func model(p Params, steps int) Schedule {
	alloc := 3.5 * float64(p.Cycles)
	r0 := alloc / 700
	survivors := alloc * math.Min(1, float64(p.Retain)/2)
	total := float64(p.LongLived) + 20_000
	period := 121 / r0
	if survivors > 0 {
		period = math.Max(period, total/(4*survivors))
	} else {
		period = 0
	}
	s := Schedule{Steps: steps, NoGCP50: 1e5 + 1e3*float64(p.Cycles) + 1e6*p.WaitMS}
	s.Gen[0], s.Gen[1] = int(r0*float64(steps)), int(r0/11*float64(steps))
	if period > 0 {
		for at := period; at < float64(steps); at += period {
			s.Gen[2]++
			s.Gen2PauseNS = append(s.Gen2PauseNS, 5e6+total*(200+50*float64(p.Refs)))
			if s.Gen[2] > 1 {
				s.Gaps = append(s.Gaps, int(math.Round(period)))
			}
		}
	}
	s.P50 = s.NoGCP50
	return s
}

// TestFitFindsKnownKnobs: on a collector whose behaviour is known, the
// search lands within the tolerances of targets made by other knobs: one
// whose period is set by the 25% rule, one set by the young collections.
func TestFitFindsKnownKnobs(t *testing.T) {
	run := func(_ context.Context, p Params, steps int) (Schedule, error) { return model(p, steps), nil }
	for _, truth := range []Params{
		{Cycles: 150, Retain: 4, LongLived: 400_000, Refs: 5, WaitMS: 0.4}, // 25% rule
		{Cycles: 60, Retain: 4, LongLived: 20_000, Refs: 40, WaitMS: 2},    // young collections
		{Cycles: 300, Retain: 4, LongLived: 900_000, Refs: 0, WaitMS: 0},
	} {
		target := model(truth, 3000)
		res, err := Fit(context.Background(), target, run, t.Logf)
		if err != nil {
			t.Fatalf("%+v: %v", truth, err)
		}
		got := model(res.Best.Params, res.Steps)
		for _, row := range Compare(target, got) {
			if row.Judged && math.Abs(row.RelativeChange) > row.Tolerance/2 {
				t.Errorf("truth %+v, fitted %+v: %s %.2f vs %.2f", truth, res.Best.Params, row.Name, row.Traced, row.Got)
			}
		}
		if math.Abs(got.NoGCP50/target.NoGCP50-1) > 0.05 {
			t.Errorf("truth %+v: step time %.3f ms, want %.3f", truth, got.NoGCP50/1e6, target.NoGCP50/1e6)
		}
	}
}
