package stats

import (
	"math/rand/v2"
	"testing"
)

// runP50s draws n runs' p50s on a host with a run-to-run spread sd (a
// fraction), the runs in disturbed slowed by factor.
func runP50s(rng *rand.Rand, n int, sd float64, disturbed map[int]bool, factor float64) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = 30e6 * (1 + sd*rng.NormFloat64())
		if disturbed[i] {
			xs[i] *= factor
		}
	}
	return xs
}

// TestOutlyingRunsKnownTruth: on undisturbed runs with the spread shared
// VMs show (3%), false outliers are rare; runs slowed by a disturbance of
// 1.5x or more (as the shipped baselines' two 2x runs were) are found.
func TestOutlyingRunsKnownTruth(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const trials = 2000
	falseAlarms := 0
	for range trials {
		if len(OutlyingRuns(runP50s(rng, 5, 0.03, nil, 1))) > 0 {
			falseAlarms++
		}
	}
	t.Logf("undisturbed, 5 runs at 3%% spread: %d of %d flagged", falseAlarms, trials)
	if falseAlarms > trials/100 {
		t.Errorf("undisturbed 5-run baselines: %d of %d flagged (want at most 1%%)", falseAlarms, trials)
	}
	for _, tc := range []struct {
		name      string
		n         int
		disturbed map[int]bool
		factor    float64
		want      []int // the runs every trial must name, at least
	}{
		{"two of five at 2x (the shipped baselines)", 5, map[int]bool{2: true, 3: true}, 2, []int{2, 3}},
		{"one of five at 1.5x", 5, map[int]bool{4: true}, 1.5, []int{4}},
		{"three of twelve at 1.4x", 12, map[int]bool{9: true, 10: true, 11: true}, 1.4, []int{9, 10, 11}},
	} {
		found := 0
		for range trials {
			got := OutlyingRuns(runP50s(rng, tc.n, 0.03, tc.disturbed, tc.factor))
			named := map[int]bool{}
			wrong := false
			for _, o := range got {
				named[o.Index] = true
				wrong = wrong || !tc.disturbed[o.Index]
			}
			all := true
			for _, i := range tc.want {
				all = all && named[i]
			}
			if all && !wrong {
				found++
			}
		}
		t.Logf("%s: exactly the disturbed runs named in %d of %d", tc.name, found, trials)
		if found < trials*95/100 {
			t.Errorf("%s: exactly the disturbed runs named in %d of %d trials (want 95%%)", tc.name, found, trials)
		}
	}
}

// TestOutlyingRunsMajorityDisturbed: when most runs were disturbed the
// undisturbed minority stands apart instead: the runs still disagree,
// which is what refuses a baseline.
func TestOutlyingRunsMajorityDisturbed(t *testing.T) {
	got := OutlyingRuns([]float64{34, 33, 69, 72, 70})
	if len(got) != 2 || got[0].Index != 0 || got[1].Index != 1 {
		t.Fatalf("got %+v, want runs 0 and 1 named", got)
	}
	if got := OutlyingRuns([]float64{34, 70}); got != nil {
		t.Errorf("two runs: %+v, want none (which side is the outlier is unknowable)", got)
	}
	if got := OutlyingRuns([]float64{30, 30, 30, 30.5, 30}); got != nil {
		t.Errorf("a MAD of 0 and a 1.7%% run: %+v, want none (below the floor)", got)
	}
	if got := OutlyingRuns([]float64{30, 30, 30, 36, 30}); len(got) != 1 || got[0].Index != 3 {
		t.Errorf("a MAD of 0 and a 20%% run: %+v, want run 3", got)
	}
}
