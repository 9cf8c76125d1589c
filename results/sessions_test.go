package results

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/gcjitter/gcjitter/stats"
)

// sessionSide is a results directory of one session: a manifest with its
// start, host speed and load, and n runs of p50 at level (1% run-to-run
// spread) with gen0 collections per 1000 steps.
func sessionSide(t *testing.T, rng *rand.Rand, started time.Time, cost, other float64, n int, level, gen0 float64) *Data {
	t.Helper()
	dir := t.TempDir()
	m := &Manifest{Schema: ManifestSchema, Started: started, Host: Host{CPUs: 2, CPUModel: "Xeon"},
		Calibration: &Calibration{Points: []SpeedPoint{{WalkNS: cost, ComputeNS: cost}, {WalkNS: cost * 1.01, ComputeNS: cost * 1.01}}}}
	for range n {
		o := other
		m.Runs = append(m.Runs, &Run{Case: "c", Variant: "default", OtherCPUs: &o})
	}
	if err := WriteManifest(dir, m); err != nil {
		t.Fatal(err)
	}
	d := NewData(dir)
	bench := BenchName("c", "default")
	for range n {
		d.AddIters(bench, 400)
		d.AddValue(bench, "p50-ns/step", 1e6*level*math.Exp(0.01*rng.NormFloat64()))
		d.AddValue(bench, "gen0-collections/kstep", gen0)
	}
	return d
}

// TestCompareSessionsKnownTruth: two results directories of two sessions
// of one host are judged with the session drift the gate allows. On
// synthetic sessions whose levels differ by the drift measured for p50
// (4.2% over 21 sessions, stats.MeasuredDrift), an unchanged tree reads
// regressed or improved in at most 5% of 200 trials (compared as one
// session, as compare did before, in most); a doubling is still regressed. At
// another speed, or beside other load, no timing is judged: a 2x p50 is
// unknown with the reason, while a changed collection count (exact)
// still regresses. Sides of one session are compared as before.
func TestCompareSessionsKnownTruth(t *testing.T) {
	rng := rand.New(rand.NewPCG(46, 46))
	day1, day2 := time.Date(2026, 12, 4, 3, 0, 0, 0, time.UTC), time.Date(2026, 12, 5, 3, 0, 0, 0, time.UTC)
	shift := func() float64 { return math.Exp(0.042 / math.Sqrt2 * rng.NormFloat64()) }
	p50 := func(c *Comparison) *stats.Row {
		for _, r := range c.Rows {
			if r.Metric == "p50" {
				return r
			}
		}
		t.Fatal("no p50 row")
		return nil
	}
	primary := CompareOptions{Primary: map[string][]string{"": {"p50", "gen0-collections"}}}
	const trials = 200
	var falseSessions, falseOne, doubled int
	for range trials {
		old := sessionSide(t, rng, day1, 3, 0, 5, shift(), 10)
		same := sessionSide(t, rng, day2, 3, 0, 5, shift(), 10)
		wrong := func(v stats.Verdict) bool { return v == stats.Regressed || v == stats.Improved }
		if wrong(p50(CompareSessions(old, same, primary)).Verdict) {
			falseSessions++
		}
		if wrong(p50(Compare(old, same, primary)).Verdict) {
			falseOne++
		}
		if p50(CompareSessions(old, sessionSide(t, rng, day2, 3, 0, 5, 2*shift(), 10), primary)).Verdict == stats.Regressed {
			doubled++
		}
	}
	t.Logf("A/A across sessions: regressed or improved %d of %d with the drift, %d of %d as one session; a doubling regressed %d of %d", falseSessions, trials, falseOne, trials, doubled, trials)
	if falseSessions > trials/20 {
		t.Errorf("an unchanged tree across sessions regressed or improved in %d of %d trials, want at most 5%%", falseSessions, trials)
	}
	if falseOne < trials/4 {
		t.Errorf("compared as one session the drift alarmed in only %d of %d trials: the simulated drift no longer matters", falseOne, trials)
	}
	if doubled < trials*95/100 {
		t.Errorf("a doubling across sessions regressed in %d of %d trials", doubled, trials)
	}

	old := sessionSide(t, rng, day1, 3, 0, 5, 1, 10)
	for _, tc := range []struct {
		name, why string
		new       *Data
	}{
		{"another speed", "undecided: speed: the new side's host ran the calibration at 0.50x", sessionSide(t, rng, day2, 6, 0, 5, 2, 12)},
		{"a busy host", "undecided: host busy: " + "", sessionSide(t, rng, day2, 3, 1.9, 5, 2, 12)},
	} {
		c := CompareSessions(old, tc.new, primary)
		if r := p50(c); r.Verdict != stats.Unknown || !strings.HasPrefix(r.Reason, tc.why) {
			t.Errorf("%s: a 2x p50 is %s (%s), want unknown, %q", tc.name, r.Verdict, r.Reason, tc.why)
		}
		if !c.Regressed() {
			t.Errorf("%s: a changed collection count did not regress", tc.name)
		}
	}
	// One session's sides (the same start): no drift, no speed rule.
	one := sessionSide(t, rng, day1, 6, 0, 5, 2, 10)
	if r := p50(CompareSessions(old, one, primary)); r.Verdict != stats.Regressed || r.Drift != 0 {
		t.Errorf("one session: p50 %s with drift %v, want regressed without drift", r.Verdict, r.Drift)
	}
}
