package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// A gate compares tonight's session with a baseline from another session,
// and sessions on one host differ by more than their runs do (neighbours,
// boots, thermal state). With that session drift in the data, a test of
// the runs alone calls an A/A gate regressed or improved far more often
// than alpha; the drift term holds it at or under alpha at every size,
// and a doubling is still regressed at the baseline's size.
func TestSessionDriftKnownTruth(t *testing.T) {
	const (
		trials = 200
		spread = 0.01 // run-to-run, as ci-cpu's resnet p50
		drift  = HostDrift
	)
	rng := rand.New(rand.NewPCG(31, 32))
	session := func() float64 { return math.Exp(drift / math.Sqrt2 * rng.NormFloat64()) }
	verdicts := func(n int, effect, assumed float64) (false, regressed int) {
		for range trials {
			old := lognormal(rng, 5, 100*session(), spread)
			new := lognormal(rng, n, 100*(1+effect)*session(), spread)
			r := Compare([]Pair{{Bench: "b", Metric: "p50", Old: old, New: new}}, Options{Drift: func(Pair) float64 { return assumed }})[0]
			switch r.Verdict {
			case Regressed:
				regressed++
				if effect == 0 {
					false++
				}
			case Improved:
				false++
			}
		}
		return false, regressed
	}
	for _, n := range []int{2, 5, 10, 30} {
		f, _ := verdicts(n, 0, drift)
		_, reg := verdicts(n, 1, drift)
		t.Logf("5+%d runs, drift %.0f%%: A/A %d of %d false, doubling regressed %d of %d", n, 100*drift, f, trials, reg, trials)
		if f > trials/20 {
			t.Errorf("A/A at 5+%d with the drift term: %d of %d false verdicts, want <= 5%%", n, f, trials)
		}
		if reg < trials*95/100 {
			t.Errorf("doubling at 5+%d with the drift term: regressed in %d of %d", n, reg, trials)
		}
	}
	// Without the term the same data alarms in about half the trials:
	// the failure the term exists for.
	f, _ := verdicts(5, 0, 0)
	t.Logf("5+5 runs, no drift term: A/A %d of %d false", f, trials)
	if f < trials/4 {
		t.Errorf("A/A at 5+5 without the drift term: %d of %d false verdicts; the simulated drift no longer matters", f, trials)
	}
}

// More runs cannot outrun the drift: the detectable change and the plan
// level off at the drift, and a plan says so instead of asking for runs
// that cannot help.
func TestDriftLimitsWhatRunsBuy(t *testing.T) {
	it := PlanItem{Bench: "b", Metric: "p50", Spread: 0.01, Floor: 0.02, Drift: HostDrift}
	small := Plan([]PlanItem{it}, PlanOptions{OldRuns: 5, NewRuns: 5, Effect: 1})
	if !small.OK {
		t.Fatalf("a doubling at 5+5 with drift: %s", small.Reason)
	}
	ten := Plan([]PlanItem{it}, PlanOptions{OldRuns: 5, NewRuns: 5, Effect: 0.10})
	if ten.OK || ten.MinRuns != 0 {
		t.Errorf("+10%% with a 5%% drift: OK=%v MinRuns=%d (%s); no size can detect it", ten.OK, ten.MinRuns, ten.Reason)
	}
	noDrift := it
	noDrift.Drift = 0
	if r := Plan([]PlanItem{noDrift}, PlanOptions{OldRuns: 5, NewRuns: 5, Effect: 0.10}); !r.OK {
		t.Errorf("+10%% at a 1%% spread and no drift: %s", r.Reason)
	}
}
