package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSessionDriftEstimateKnownTruth: sessions whose levels move by a known SD
// beyond their runs' spread. The estimate recovers the SD on average (30
// sessions of 5 runs), and the 90% upper bound from 6 sessions of 10 runs
// lies at or above the truth in about 90% of 1000 trials (80-97%).
func TestSessionDriftEstimateKnownTruth(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	sessions := func(k, runs int, truth, spread float64) [][]float64 {
		out := make([][]float64, k)
		for i := range out {
			level := math.Exp(truth * rng.NormFloat64())
			for range runs {
				out[i] = append(out[i], 40e6*level*math.Exp(spread*rng.NormFloat64()))
			}
		}
		return out
	}
	for _, truth := range []float64{0, 0.02, 0.05} {
		var sum float64
		const trials = 200
		for range trials {
			sum += SessionDrift(sessions(30, 5, truth, 0.03)).SD
		}
		mean := sum / trials
		t.Logf("true session SD %.3f: mean estimate %.4f", truth, mean)
		if math.Abs(mean-truth) > 0.008 {
			t.Errorf("true session SD %.3f: mean estimate %.4f", truth, mean)
		}
	}
	for _, truth := range []float64{0.02, 0.05} {
		covered := 0
		const trials = 1000
		for range trials {
			s := SessionDrift(sessions(6, 10, truth, 0.05))
			if s.Sessions != 6 || s.Runs != 60 {
				t.Fatalf("counted %d sessions, %d runs", s.Sessions, s.Runs)
			}
			if s.Upper >= truth {
				covered++
			}
		}
		t.Logf("true session SD %.3f: upper bound covers it in %d of %d", truth, covered, trials)
		if covered < 800 || covered > 970 {
			t.Errorf("true session SD %.3f: upper bound covers it in %d of %d, want about 900", truth, covered, trials)
		}
	}
	if s := SessionDrift([][]float64{{1, 2}}); s.SD != 0 || !math.IsInf(s.Upper, 1) {
		t.Errorf("one session: %+v, want no drift and no bound", s)
	}
}
