package gate

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gcjitter/gcjitter/cases"
	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/stats"
)

// TestSizeForKnownTruth: baselines sized by golden update -detect 30% see
// +30% in a gate against them, from another session. Each trial draws a
// pilot (DetectPilotRuns runs) whose spread SizeFor measures, then a
// baseline session and a new session of the size it chose, each session
// shifted by the session drift measured over 21 unchanged sessions (2.9%,
// stats.MeasuredDrift; a session's level moves by drift/√2, so two differ
// by drift), while the gate allows the catalogue's (its 90% upper bound,
// 3.9%). Over 400 trials of a metric with the GC cost's measured
// run-to-run spread (4%) the gate regresses +30% in at least 90%
// (planned: 95% at the true spread; a pilot of 5 runs underestimates it
// now and then), and the unchanged tree in at most 2%. (+20%, what this
// test asked before the allowance was raised from 2% to the measured
// bound, no size up to 30 runs can promise: SizeFor says so.)
func TestSizeForKnownTruth(t *testing.T) {
	c := &cases.Case{Name: "c", Steps: 400, Runs: 1, Variants: []cases.Variant{{Name: "default", Policy: "default"}},
		Gate: cases.Gate{Primary: []string{"gc-cost"}}}
	bench := results.BenchName("c", "default")
	rng := rand.New(rand.NewPCG(20, 20))
	const spread, trials = 0.04, 400
	sessionSD := 0.029 / math.Sqrt2 // measured (stats.MeasuredDrift), under the allowance
	session := func(runs int, level float64) []float64 {
		shift := level * math.Exp(sessionSD*rng.NormFloat64())
		xs := make([]float64, runs)
		for i := range xs {
			xs[i] = 50 * shift * math.Exp(spread*rng.NormFloat64())
		}
		return xs
	}
	data := func(xs []float64) *results.Data {
		d := results.NewData("synthetic")
		for _, x := range xs {
			d.AddIters(bench, c.Steps)
			d.AddValue(bench, stats.GCCostUnit, x)
			// SizeFor reads the runs' summaries, as a results directory has.
			d.Runs[bench] = append(d.Runs[bench], stats.RunSummary{Steps: c.Steps, Collections: [3]int{0, 0, 1}, PauseNS: [3]float64{0, 0, x}, FullWalk: 1, Typical: 1e6})
		}
		return d
	}
	regressed := func(old, new []float64) bool {
		cmp := results.Compare(data(old), data(new), results.CompareOptions{Primary: map[string][]string{"": {"gc-cost"}},
			Drift: func(string, string) float64 { return stats.GCCostDrift }})
		for _, r := range cmp.Rows {
			if r.Metric == "gc-cost" {
				return r.Verdict == stats.Regressed
			}
		}
		t.Fatal("no gc-cost row")
		return false
	}
	var hits, falseAlarms, sizes int
	for range trials {
		pilot := session(DetectPilotRuns, 1)
		sized := SizeFor([]*cases.Case{c}, data(pilot), 0.3)
		if len(sized) != 1 || len(sized[0].Items) != 1 {
			t.Fatalf("sized %+v, want one item", sized)
		}
		runs := max(sized[0].Runs, DetectPilotRuns)
		sizes += runs
		base := append(pilot, session(runs-DetectPilotRuns, 1)...) // the pilot's runs are the baseline's
		if regressed(base, session(runs, 1.3)) {
			hits++
		}
		if regressed(base, session(runs, 1)) {
			falseAlarms++
		}
	}
	t.Logf("sized %.1f runs on average; +30%% regressed in %d of %d, the unchanged tree in %d", float64(sizes)/trials, hits, trials, falseAlarms)
	if hits < trials*90/100 {
		t.Errorf("+30%% regressed in %d of %d trials, want 90%%", hits, trials)
	}
	if falseAlarms > trials*2/100 {
		t.Errorf("the unchanged tree regressed in %d of %d trials, want at most 2%%", falseAlarms, trials)
	}
}

// A metric that cannot see the effect within DetectMaxRuns is named with
// what it sees, and does not size the baseline.
func TestSizeForNamesWhatItCannotSee(t *testing.T) {
	c := &cases.Case{Name: "c", Steps: 400, Runs: 1, Variants: []cases.Variant{{Name: "default", Policy: "default"}},
		Gate: cases.Gate{Primary: []string{"gc-cost", "p50"}}}
	bench := results.BenchName("c", "default")
	d := results.NewData("synthetic")
	for i, x := range []float64{0.97, 1.03, 1, 0.98, 1.02} {
		d.AddIters(bench, c.Steps)
		// p50 spread 50%, gc-cost 2%.
		d.Runs[bench] = append(d.Runs[bench], stats.RunSummary{Steps: c.Steps, P50: 1e6 * math.Pow(2, float64(i%2)), Collections: [3]int{0, 0, 1}, PauseNS: [3]float64{0, 0, 50 * x}, FullWalk: 1, Typical: 1e6})
	}
	s := SizeFor([]*cases.Case{c}, d, 0.3)[0]
	text := s.String()
	if !strings.Contains(text, "in default gc-cost") || !strings.Contains(text, "not +30.0% within 30 runs, which at this size detect: default p50 ") {
		t.Errorf("statement %q: want gc-cost seen and p50 named with what it sees", text)
	}
	if s.Runs > 10 {
		t.Errorf("sized to %d runs: the metric that cannot see the effect must not size it", s.Runs)
	}
}
