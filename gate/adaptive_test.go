package gate

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/stats"
)

// sim is a known-truth A/B of one case: per-run p50 and p99 from lognormal
// noise, the new side shifted by effect; adaptive rounds draw more.
type sim struct {
	rng          *rand.Rand
	effect, sd   float64
	old, new     map[string][]float64
	runs, rounds int
}

func newSim(seed uint64, effect, sd float64, runs int) *sim {
	s := &sim{rng: rand.New(rand.NewPCG(seed, 7)), effect: effect, sd: sd, old: map[string][]float64{}, new: map[string][]float64{}}
	s.more(runs)
	return s
}

func (s *sim) more(n int) {
	for range n {
		for _, m := range []string{"p50", "p99"} {
			s.old[m] = append(s.old[m], 100*math.Exp(s.sd*s.rng.NormFloat64()))
			s.new[m] = append(s.new[m], 100*(1+s.effect)*math.Exp(s.sd*s.rng.NormFloat64()))
		}
	}
	s.runs += n
}

func (s *sim) judge() (*results.Comparison, error) {
	var pairs []stats.Pair
	for _, m := range []string{"p50", "p99"} {
		pairs = append(pairs, stats.Pair{Bench: "GCJitter/case=c/variant=v", Metric: m, Old: s.old[m], New: s.new[m]})
	}
	return &results.Comparison{Rows: stats.Compare(pairs, stats.Options{})}, nil
}

func (s *sim) grow(lim Limits) (*results.Comparison, Growth) {
	cmp, g, err := Grow(context.Background(), lim, s.judge, Rounds{
		Runs:      func(string) int { return s.runs },
		RoundTime: func(string) time.Duration { return time.Minute },
		More: func(_ context.Context, r map[string]int) error {
			s.rounds++
			s.more(r["c"])
			return nil
		},
	})
	if err != nil {
		panic(err)
	}
	return cmp, g
}

func verdictOf(cmp *results.Comparison, metric string) stats.Verdict {
	for _, r := range cmp.Rows {
		if r.Metric == metric {
			return r.Verdict
		}
	}
	return ""
}

// Adaptive rounds decide what the first runs could not: a +10% median at
// a 5% run-to-run spread, undecided at 3+3 runs, is regressed within 30
// runs a side in >= 95% of trials; and looking again after each round does
// not raise the A/A false-alarm rate above alpha.
func TestGrowKnownTruth(t *testing.T) {
	const trials = 200
	lim := Limits{MaxRuns: 30, Start: time.Now()}
	regressed, runs, falseAA, undecidedAtStart := 0, 0, 0, 0
	for i := range trials {
		s := newSim(uint64(i), 0.10, 0.05, 3)
		if first, _ := s.judge(); verdictOf(first, "p50") != stats.Regressed {
			undecidedAtStart++
		}
		cmp, g := s.grow(lim)
		if verdictOf(cmp, "p50") == stats.Regressed {
			regressed++
		}
		runs += s.runs
		if g.Elapsed < 0 {
			t.Fatal("negative elapsed time")
		}
		aa := newSim(uint64(1000+i), 0, 0.05, 3)
		cmp, _ = aa.grow(lim)
		for _, r := range cmp.Rows {
			if r.Verdict == stats.Regressed || r.Verdict == stats.Improved {
				falseAA++
				break
			}
		}
	}
	t.Logf("+10%% p50 at 5%% spread from 3+3 runs, -max-runs 30: undecided at the start in %d of %d, regressed in the end in %d, mean %.1f runs a side; A/A: %d of %d false",
		undecidedAtStart, trials, regressed, float64(runs)/trials, falseAA, trials)
	if undecidedAtStart < trials/2 {
		t.Errorf("3+3 runs already decide +10%% in %d of %d trials: the test shows nothing of growth", trials-undecidedAtStart, trials)
	}
	if regressed < trials*95/100 {
		t.Errorf("+10%%: regressed in %d of %d trials after adaptive rounds, want >= 95%%", regressed, trials)
	}
	if falseAA > trials/20 {
		t.Errorf("A/A with adaptive rounds: %d of %d trials false, want <= 5%%", falseAA, trials)
	}
}

// The limits hold: no more runs than -max-runs, and a budget that one more
// round would overrun adds none.
func TestGrowStopsAtItsLimits(t *testing.T) {
	s := newSim(1, 0.02, 0.05, 3) // a change at the floor: never decided
	_, g := s.grow(Limits{MaxRuns: 12, Start: time.Now()})
	if s.runs > 12 || g.Decided {
		t.Errorf("-max-runs 12: %d runs a side, decided %v (%s)", s.runs, g.Decided, g.Stopped)
	}
	s = newSim(2, 0.10, 0.05, 3)
	_, g = s.grow(Limits{Budget: 30 * time.Second, Start: time.Now()}) // a round takes a minute
	if s.rounds != 0 || g.Added != 0 {
		t.Errorf("a 30 s budget with 1-minute rounds: %d rounds added (%s)", s.rounds, g.Stopped)
	}
}

// TestContestRounds: a round of a case's contenders takes their runs' time
// alone, not every variant's (run's advise rounds budget by it).
func TestContestRounds(t *testing.T) {
	m := &results.Manifest{Cases: []results.Case{{Name: "c", Runs: 2}}}
	for v, s := range map[string]float64{"default": 4, "freeze": 2, "slow": 30} {
		for range 2 {
			m.Runs = append(m.Runs, &results.Run{Case: "c", Variant: v, Status: results.StatusOK, Seconds: s})
		}
	}
	all := ManifestRounds(m, nil).RoundTime("c")
	two := ContestRounds(m, map[string][]string{"c": {"freeze", "default"}}, nil).RoundTime("c")
	if all != 36*time.Second || two != 6*time.Second {
		t.Errorf("round time: all variants %v, want 36s; freeze and default %v, want 6s", all, two)
	}
}
