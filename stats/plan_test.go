package stats

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// Plan's power is what Compare does: for one metric changed in a family of
// m tests, the share of seeded trials in which Compare calls it regressed
// is Plan's power, within sampling error, across Student's t sizes (old
// side fixed or not) and the U test's.
func TestPlanMatchesCompare(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	for _, c := range []struct {
		oldRuns, newRuns, family int
		spread, effect, floor    float64
	}{
		{0, 2, 12, 0.05, 1, 0.03},
		{0, 3, 60, 0.05, 1, 0.03},
		{2, 4, 60, 0.05, 1, 0.03},
		{0, 5, 20, 0.02, 0.10, 0.02},
		{0, 5, 5, 0.03, 0.10, 0.02},
		{0, 12, 20, 0.05, 0.15, 0.03},
	} {
		plan := Plan([]PlanItem{{Bench: "b", Metric: "p50", Spread: c.spread, Floor: c.floor}},
			PlanOptions{OldRuns: c.oldRuns, NewRuns: c.newRuns, Family: c.family, Effect: c.effect})
		n1 := c.oldRuns
		if n1 == 0 {
			n1 = c.newRuns
		}
		const trials = 600
		hits := 0
		for range trials {
			pairs := []Pair{{Bench: "b", Metric: "p50", Old: lognormal(rng, n1, 100, c.spread), New: lognormal(rng, c.newRuns, 100*(1+c.effect), c.spread)}}
			for range c.family - 1 {
				pairs = append(pairs, Pair{Bench: "b", Metric: "p50", Old: lognormal(rng, n1, 100, c.spread), New: lognormal(rng, c.newRuns, 100, c.spread)})
			}
			if Compare(pairs, Options{Floor: func(Pair) float64 { return c.floor }})[0].Verdict == Regressed {
				hits++
			}
		}
		got := float64(hits) / trials
		se := math.Sqrt(plan.Power*(1-plan.Power)/trials) + 0.01
		t.Logf("%d+%d runs, family %d, spread %.0f%%, %s: plan %.3f, Compare %.3f", n1, c.newRuns, c.family, 100*c.spread, Pct(c.effect), plan.Power, got)
		if math.Abs(got-plan.Power) > 4*se {
			t.Errorf("%d+%d runs, family %d, spread %v, effect %v: Plan's power %.3f, Compare regressed in %.3f of %d trials",
				n1, c.newRuns, c.family, c.spread, c.effect, plan.Power, got, trials)
		}
	}
}

// A plan that cannot decide says so before any run and names the smallest
// size that can: both sides planned, or new runs against a fixed baseline.
func TestPlanNamesTheSmallestSize(t *testing.T) {
	items := []PlanItem{
		{Bench: "b", Metric: "p50", Spread: 0.02, Floor: 0.02},
		{Bench: "b", Metric: "gen2-pause", Spread: 0.05, Floor: 0.03},
	}
	p := Plan(items, PlanOptions{NewRuns: 2, Family: 60})
	if p.OK || p.Worst.Metric != "gen2-pause" || p.MinRuns != 3 || !strings.Contains(p.Reason, "3 runs per side are needed") {
		t.Errorf("2+2 in a family of 60: %+v", p)
	}
	if len(p.Powers) != 2 || p.Powers[1] != p.Power || !(p.Powers[0] > p.Powers[1]) {
		t.Errorf("powers %v, worst %v", p.Powers, p.Power)
	}
	if q := Plan(items, PlanOptions{NewRuns: p.MinRuns, Family: 60}); !q.OK || q.Power < DetectPower {
		t.Errorf("at its MinRuns, %d: %+v", p.MinRuns, q)
	}
	if q := Plan(items, PlanOptions{NewRuns: p.MinRuns - 1, Family: 60}); q.OK {
		t.Errorf("below its MinRuns: %+v", q)
	}
	b := Plan(items, PlanOptions{OldRuns: 2, NewRuns: 2, Family: 60})
	if b.OK || b.MinRuns <= 2 || !strings.Contains(b.Reason, "new runs against the baseline's 2") {
		t.Errorf("against a 2-run baseline: %+v", b)
	}
	if q := Plan(items, PlanOptions{OldRuns: 2, NewRuns: b.MinRuns, Family: 60}); !q.OK {
		t.Errorf("against a 2-run baseline at its MinRuns %d: %+v", b.MinRuns, q)
	}
	// A one-run baseline against a change inside its noise: no size can.
	if q := Plan([]PlanItem{{Metric: "p99", Spread: 0.3, Floor: 0.03}}, PlanOptions{OldRuns: 1, NewRuns: 5, Family: 100, Effect: 0.05}); q.OK || q.MinRuns != 0 {
		t.Errorf("one baseline run, 5%% in 30%% noise: %+v", q)
	}
	// The floor is part of the verdict: a change inside it is never
	// regressed.
	if q := Plan([]PlanItem{{Metric: "p50", Spread: 0.01, Floor: 0.10}}, PlanOptions{NewRuns: 50, Effect: 0.05}); q.OK || q.MinRuns != 0 {
		t.Errorf("5%% against a 10%% floor: %+v", q)
	}
	if n := MinRunsToDecide(0.05, 0.03, 0, 0.05, 60, 1); n != 3 {
		t.Errorf("MinRunsToDecide: %d, want 3", n)
	}
}

// The baseline's spread: of logarithms, raised to a count's rounding.
func TestBaselineSpread(t *testing.T) {
	if sd, df := Spread([]float64{100, 110}); math.Abs(sd-math.Log(1.1)/math.Sqrt2) > 1e-12 || df != 1 {
		t.Errorf("Spread: %v %v", sd, df)
	}
	if sd := BaselineSpread("spike-rate", []float64{25, 25}, 200); math.Abs(sd-5/math.Sqrt(12)/25) > 1e-12 {
		t.Errorf("spike-rate 5 spikes in 200 steps, twice: spread %v", sd)
	}
	if sd := BaselineSpread("p50", []float64{40e6}, 200); sd != 0 {
		t.Errorf("one run: %v", sd)
	}
}
