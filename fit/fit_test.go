package fit

import (
	"context"
	"math"
	"strings"
	"testing"
)

// model is a collector of known behaviour, shaped like CPython 3.11's: the
// young collections follow the net allocations, a full collection waits
// for 11 middle ones and for the survivors to reach a quarter of the heap,
// and it pauses in proportion to the heap and its weight.
func model(p Params, steps int) Schedule {
	alloc := 0.875 * p.PerStep()
	r0 := alloc / 700
	survivors := alloc * math.Min(1, float64(p.Retain)/2)
	total := float64(p.LongLived) + 20_000
	period := 121 / r0
	if survivors > 0 {
		period = math.Max(period, total/(4*survivors))
	} else {
		period = 0
	}
	s := Schedule{Steps: steps, StreamSteps: steps, NoGCP50: 1e5 + 1e3*float64(p.Cycles) + 1e6*p.WaitMS}
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

func rings(n int) Garbage { return Garbage{Cycles: n, Objects: Objects, Every: 1} }

// TestFitFindsKnownKnobs: on a collector whose behaviour is known, the
// search lands within the tolerances of targets made by other knobs: one
// whose period is set by the 25% rule, one set by the young collections.
func TestFitFindsKnownKnobs(t *testing.T) {
	run := func(_ context.Context, p Params, steps int) (Schedule, error) { return model(p, steps), nil }
	for _, truth := range []Params{
		{Garbage: rings(150), Retain: 4, LongLived: 400_000, Refs: 5, WaitMS: 0.4}, // 25% rule
		{Garbage: rings(60), Retain: 4, LongLived: 20_000, Refs: 40, WaitMS: 2},    // young collections
		{Garbage: rings(300), Retain: 4, LongLived: 900_000, Refs: 0, WaitMS: 0},
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

// TestFitReachesLowRates: jobs that collect 1-2 times per 1000 steps and
// never fully make about one object per step, less than one ring of
// Objects; the fit reaches their rates (one ring per step could not go
// below 5 per 1000) and offers no policy for full collections it never saw.
func TestFitReachesLowRates(t *testing.T) {
	run := func(_ context.Context, p Params, steps int) (Schedule, error) { return model(p, steps), nil }
	for _, truth := range []Params{
		{Garbage: Garbage{Cycles: 21, Objects: 1, Every: 20}, WaitMS: 3}, // 1.3 per 1000
		{Garbage: Garbage{Cycles: 3, Objects: 1, Every: 2}, WaitMS: 1},   // 1.9 per 1000
		{Garbage: Garbage{Cycles: 9, Objects: 1, Every: 2}, WaitMS: 1},   // 5.6 per 1000
	} {
		target := model(truth, 30_000)
		res, err := Fit(context.Background(), target, run, t.Logf)
		if err != nil {
			t.Fatalf("%+v: %v", truth, err)
		}
		if res.Steps != target.StreamSteps {
			t.Errorf("the case runs %d steps, the traced run %d", res.Steps, target.StreamSteps)
		}
		got := model(res.Best.Params, res.Steps)
		if r := relErr(got.Rate(0), target.Rate(0)); math.Abs(r) > RateTolerance/2 {
			t.Errorf("truth %+v, fitted %+v: gen-0 %.2f per 1000, traced %.2f (%+.0f%%)", truth, res.Best.Garbage, 1000*got.Rate(0), 1000*target.Rate(0), 100*r)
		}
		var policies []string
		for _, v := range res.Variants() {
			policies = append(policies, v.Policy)
		}
		if strings.Join(policies, " ") != "default disabled" {
			t.Errorf("variants %v: without a full collection only disabled is worth trying", policies)
		}
		yaml := string(res.CaseYAML("low", "test"))
		if strings.Contains(yaml, "every 0 steps") || strings.Contains(yaml, "manual") || !strings.Contains(yaml, "no full collection") {
			t.Errorf("the case claims what the trace did not show:\n%s", yaml)
		}
	}
}

// TestVariantsFollowTheEvidence: manual:N only with a traced period, the
// full-collection policies only with full collections, nothing without a
// collection at all.
func TestVariantsFollowTheEvidence(t *testing.T) {
	policies := func(s Schedule) string {
		var out []string
		for _, v := range (&Result{Target: s}).Variants() {
			out = append(out, v.Policy)
		}
		return strings.Join(out, " ")
	}
	periodic := Schedule{Steps: 3000, Gen: [3]int{900, 80, 6}, Gaps: []int{480, 500, 520, 500, 500}, Gen2PauseNS: []float64{5e6}}
	once := Schedule{Steps: 3000, Gen: [3]int{900, 80, 1}, Gen2PauseNS: []float64{5e6}}
	young := Schedule{Steps: 3000, Gen: [3]int{4, 0, 0}}
	for _, c := range []struct {
		s    Schedule
		want string
	}{
		{periodic, "default disabled threshold:700,10,1000 freeze manual:500"},
		{once, "default disabled threshold:700,10,1000 freeze"},
		{young, "default disabled"},
		{Schedule{Steps: 3000}, "default"},
	} {
		if got := policies(c.s); got != c.want {
			t.Errorf("%v: variants %q, want %q", c.s.Gen, got, c.want)
		}
	}
	if (Schedule{Steps: 3000}).Judgeable() || !young.Judgeable() {
		t.Error("a check is judgeable exactly when the trace holds a collection")
	}
}

// TestCompareAtTheTracedSize: a rate is within its tolerance, or within
// one collection in a run of the traced size; a collection the trace
// never saw is judged too.
func TestCompareAtTheTracedSize(t *testing.T) {
	traced := Schedule{Steps: 1000, StreamSteps: 1000, Gen: [3]int{2, 0, 0}}
	for _, c := range []struct {
		gen0, gen1 int // in 3 runs of 1000 steps
		within     [2]bool
	}{
		{6, 0, [2]bool{true, true}},   // the same rate
		{9, 0, [2]bool{true, true}},   // one more per run: +50%, within one collection
		{12, 0, [2]bool{false, true}}, // two more per run: beyond
		{6, 3, [2]bool{true, true}},   // one gen-1 per run the trace did not see
		{6, 6, [2]bool{true, false}},  // two per run: beyond
	} {
		got := Schedule{Steps: 3000, StreamSteps: 1000, Gen: [3]int{c.gen0, c.gen1, 0}}
		rows := map[string]Row{}
		for _, r := range Compare(traced, got) {
			rows[r.Name] = r
		}
		g0, g1, g2 := rows["gen-0 per 1000 steps"], rows["gen-1 per 1000 steps"], rows["gen-2 per 1000 steps"]
		if !g0.Judged || g0.Within != c.within[0] || g1.Within != c.within[1] || g1.Judged != (c.gen1 > 0) || g2.Judged {
			t.Errorf("gen-0 %d, gen-1 %d in 3000 steps: gen-0 judged %v within %v, gen-1 judged %v within %v, gen-2 judged %v; want within %v",
				c.gen0, c.gen1, g0.Judged, g0.Within, g1.Judged, g1.Within, g2.Judged, c.within)
		}
	}
}

// TestComparePauseUndecided: when the fitted case's own runs disagree on
// the full-collection pause by more than the tolerance allows either side,
// the pause row is undecided rather than judged on one pooled figure; runs
// that agree are judged as before.
func TestComparePauseUndecided(t *testing.T) {
	traced := Schedule{Gen2PauseNS: []float64{58e6, 59e6, 60e6}}
	pauseRow := func(rows []Row) Row {
		for _, r := range rows {
			if r.Name == "gen-2 pause (median)" {
				return r
			}
		}
		t.Fatal("no pause row")
		return Row{}
	}
	apart := Pool(Schedule{Gen2PauseNS: []float64{35e6}}, Schedule{Gen2PauseNS: []float64{89e6}}, Schedule{Gen2PauseNS: []float64{107e6}})
	if r := pauseRow(Compare(traced, apart)); r.Judged || !strings.Contains(r.Undecided, "the 3 runs of the fitted case paused 35.0-107.0 ms") {
		t.Errorf("runs 35-107 ms apart: judged %v, %q", r.Judged, r.Undecided)
	}
	agree := Pool(Schedule{Gen2PauseNS: []float64{88e6}}, Schedule{Gen2PauseNS: []float64{89e6}}, Schedule{Gen2PauseNS: []float64{92e6}})
	if r := pauseRow(Compare(traced, agree)); !r.Judged || r.Within || r.Undecided != "" {
		t.Errorf("runs that agree on 89 ms against 59 traced: judged %v within %v %q; want judged, beyond", r.Judged, r.Within, r.Undecided)
	}
}
