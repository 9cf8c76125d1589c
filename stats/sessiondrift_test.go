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

// TestDriftAllowancesCoverMeasurements: every session drift measured on
// this project's hosts (MeasuredDrift: its 90% upper bound, or its point
// estimate where none was recorded) is within the catalogue's allowance
// for the metric. An allowance under a measured drift makes a gate
// against another session's baseline a false alarm on an unchanged tree.
func TestDriftAllowancesCoverMeasurements(t *testing.T) {
	seen := map[string]bool{}
	for _, m := range MeasuredDrift {
		bound := m.Upper
		if bound == 0 {
			bound = m.Drift
		}
		if bound < m.Drift {
			t.Errorf("%s (%s): upper bound %.3f under its estimate %.3f", m.Metric, m.Source, m.Upper, m.Drift)
		}
		allow, ok := DefaultDrift[m.Metric]
		if !ok {
			t.Errorf("%s (%s): no such metric in the catalogue", m.Metric, m.Source)
			continue
		}
		seen[m.Metric] = true
		if bound > allow+1e-9 {
			t.Errorf("%s: measured drift %.1f%% (%s, %d sessions) exceeds the catalogue's allowance %.1f%%", m.Metric, 100*bound, m.Source, m.Sessions, 100*allow)
		}
	}
	for _, name := range []string{"p50", "p99", "gen2-pause", "gc-cost", "gc-share"} {
		if !seen[name] {
			t.Errorf("no measured drift of %s: its allowance is a guess", name)
		}
	}
}
