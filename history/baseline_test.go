package history

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/stats"
)

// TestBaselineFromStore: the newest nights of the newest environment and
// size stand as the baseline, with the schedule they all had, the size of
// the newest night, and a drift measured from them.
func TestBaselineFromStore(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn)
		rng := rand.New(rand.NewPCG(8, 8))
		for i := 0; i < 12; i++ {
			n := night{host: "vm-1", class: "ci-cpu", started: day0.AddDate(0, 0, i), cases: 1, variants: 2, runs: 3, level: 1}
			if i >= 4 {
				n.torch = "2.4.0" // the first 4 nights are of another environment
			}
			if _, err := s.AddManifest(ctx, n.manifest(rng), "synth", AddOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		partial := night{host: "vm-1", class: "ci-cpu", started: day0.AddDate(0, 0, 12), cases: 1, variants: 2, runs: 3, level: 1, torch: "2.4.0", pending: 1}
		if _, err := s.AddManifest(ctx, partial.manifest(rng), "synth", AddOptions{}); err != nil {
			t.Fatal(err)
		}
		b, err := s.Baseline(ctx, "ci-cpu", "case-00", 6)
		if err != nil {
			t.Fatal(err)
		}
		g := b.Golden
		if len(b.Nights) != 6 || g.Env.Torch != "2.4.0" || g.Size.Runs != 3 || g.Size.Steps != 400 || len(g.Variants) != 2 {
			t.Fatalf("baseline of %d nights, torch %s, size %+v, %d variants; want 6 nights of torch 2.4.0, 3 runs of 400 steps, 2 variants",
				len(b.Nights), g.Env.Torch, g.Size, len(g.Variants))
		}
		for _, v := range g.Variants {
			if len(v.Runs) != 18 || v.Schedule == nil {
				t.Errorf("variant %s: %d runs, schedule %v; want 18 runs with one schedule", v.Name, len(v.Runs), v.Schedule)
			}
		}
		if d := b.Drift[results.BenchName("case-00", "variant-0")]["p50"]; !(d > 0.005 && d < 0.1) {
			t.Errorf("measured p50 drift %.4f, want about the synthetic nights' 3%%", d)
		}
		if !strings.Contains(b.From, "history:6") {
			t.Errorf("baseline source %q", b.From)
		}
		_, err = s.Baseline(ctx, "ci-cpu", "case-00", 20)
		if err != nil {
			t.Errorf("fewer nights than asked but more than %d: %v", MinBaselineNights, err)
		}
		if _, err := s.Baseline(ctx, "ascend", "case-00", 5); err == nil {
			t.Error("a baseline from no nights")
		}
	})
}

// TestHistoryBaselineKnownTruth: 5 and 14 nights of 3 runs (nights 3.5%
// apart, runs 2%) as the baseline, tonight 3 runs. A/A: the gate's p50 regresses
// in at most 5% of 400 trials; +15%: it regresses in at least 75%, more
// often than against one session with the assumed drift. The same with
// one session's runs as the baseline and the catalogue's assumed 5% drift,
// for comparison (a golden file).
func TestHistoryBaselineKnownTruth(t *testing.T) {
	for _, nights := range []int{MinBaselineNights, 14} {
		historyBaselineTrials(t, nights)
	}
}

func historyBaselineTrials(t *testing.T, nights int) {
	const trials, runs = 400, 3
	rng := rand.New(rand.NewPCG(10, 10))
	bench := results.BenchName("c", "v")
	sample := func(level float64) []float64 {
		night := level * math.Exp(0.035*rng.NormFloat64())
		out := make([]float64, runs)
		for i := range out {
			out[i] = 40e6 * night * math.Exp(0.02*rng.NormFloat64())
		}
		return out
	}
	data := func(xs ...[]float64) *results.Data {
		d := results.NewData("synthetic")
		for _, x := range xs {
			for _, v := range x {
				d.AddIters(bench, 1000)
				d.AddValue(bench, "p50-ns/step", v)
			}
		}
		return d
	}
	regressed := func(old, new *results.Data, drift float64) bool {
		c := results.Compare(old, new, results.CompareOptions{Drift: func(string, string) float64 { return drift }})
		for _, r := range c.Rows {
			if r.Metric == "p50" {
				return r.Verdict == stats.Regressed
			}
		}
		t.Fatal("no p50 row")
		return false
	}
	var falseHist, hitHist, falseGolden, hitGolden int
	for trial := 0; trial < trials; trial++ {
		per := make([][]float64, nights)
		for i := range per {
			per[i] = sample(1)
		}
		old := data(per...)
		drift := stats.SessionDrift(per).SD
		if regressed(old, data(sample(1)), drift) {
			falseHist++
		}
		if regressed(old, data(sample(1.15)), drift) {
			hitHist++
		}
		one := data(per[nights-1])
		if regressed(one, data(sample(1)), stats.HostDrift) {
			falseGolden++
		}
		if regressed(one, data(sample(1.15)), stats.HostDrift) {
			hitGolden++
		}
	}
	t.Logf("history:%d baseline, %d runs tonight: A/A regressed %d/%d, +15%% regressed %d/%d", nights, runs, falseHist, trials, hitHist, trials)
	t.Logf("one-session baseline with the assumed %.0f%% drift: A/A regressed %d/%d, +15%% regressed %d/%d", 100*stats.HostDrift, falseGolden, trials, hitGolden, trials)
	if falseHist > trials*6/100 {
		t.Errorf("history baseline: %d/%d false regressions, want about 5%% or fewer", falseHist, trials)
	}
	if hitHist < trials*75/100 || hitHist <= hitGolden {
		t.Errorf("history baseline: +15%% found in %d/%d, want >= 75%% and more than the one-session baseline's %d", hitHist, trials, hitGolden)
	}
}

// TestHistoryBaselineSpeed: nights carry their host's calibration, and a
// history baseline is held to the speed rule against this host: nights of
// this host's speed pass; nights of a host twice as fast, or some of them,
// are named with the ratio; nights recorded without a calibration are
// unknown.
func TestHistoryBaselineSpeed(t *testing.T) {
	at := func(cost float64) *results.Calibration {
		return &results.Calibration{Points: []results.SpeedPoint{{WalkNS: cost, ComputeNS: cost}, {WalkNS: cost * 1.02, ComputeNS: cost}}}
	}
	forEachStore(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn)
		rng := rand.New(rand.NewPCG(9, 9))
		for i := 0; i < 7; i++ {
			m := night{host: "vm-1", class: "ci-cpu", started: day0.AddDate(0, 0, i), cases: 1, variants: 1, runs: 3, level: 1}.manifest(rng)
			switch {
			case i == 0: // before nights recorded their speed
			case i == 6:
				m.Calibration = at(1.5) // a host twice as fast
			default:
				m.Calibration = at(3)
			}
			if _, err := s.AddManifest(ctx, m, "synth", AddOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		five, err := s.Baseline(ctx, "ci-cpu", "case-00", 5) // nights 2..6
		if err != nil {
			t.Fatal(err)
		}
		if got := five.SpeedAgainst(at(1.5)); !strings.Contains(got, "4 of its 5 nights ran at another speed than this host's, or one too noisy to tell (results.SpeedBand: the same only within ±10%; this host runs the calibration at 2.00x-2.00x theirs)") {
			t.Errorf("a host twice as fast as 4 of 5 nights: %q", got)
		}
		four, err := s.Baseline(ctx, "ci-cpu", "case-00", 7)
		if err != nil {
			t.Fatal(err)
		}
		if got := four.SpeedAgainst(at(3)); !strings.Contains(got, "1 of its 7 nights ran at another speed") {
			t.Errorf("this host against 7 nights, one of a host twice as fast, one unknown: %q", got)
		}
		b, err := s.Baseline(ctx, "ci-cpu", "case-00", 5)
		if err != nil {
			t.Fatal(err)
		}
		b.Speeds = b.Speeds[:4]
		b.Nights = b.Nights[:4]
		if got := b.SpeedAgainst(at(3.05)); got != "" {
			t.Errorf("nights of this host's speed: %q, want none", got)
		}
		b.Speeds[0] = nil
		if got := b.SpeedAgainst(at(3)); !strings.Contains(got, "1 of its 4 nights were recorded without their host's speed") {
			t.Errorf("a night without calibration: %q", got)
		}
		if got := b.SpeedAgainst(nil); got != "this host's speed was not measured" {
			t.Errorf("no calibration here: %q", got)
		}
	})
}
