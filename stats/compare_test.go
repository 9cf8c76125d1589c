package stats

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gcjitter/gcjitter/bench"
)

// runGen makes one synthetic run of known truth: AR(1) step times around a
// per-run level (runs differ, as processes do), optional periodic spikes
// with a gen-2 collection at a random phase, an optional extra tail, and
// an optional shift of every step.
type runGen struct {
	steps    int
	phi, sd  float64 // AR(1) coefficient and marginal relative sd
	runSD    float64 // relative sd of a run's level
	period   int     // spikes every period steps (0: none)
	spike    float64 // relative height of a periodic spike
	tailFrac float64 // fraction of steps that get tailAdd more
	tailAdd  float64
	shift    float64
}

func (g runGen) stream(rng *rand.Rand) *bench.Stream {
	const base = 40e6
	level := base * (1 + g.runSD*rng.NormFloat64()) * (1 + g.shift)
	innov := g.sd * math.Sqrt(1-g.phi*g.phi)
	phase := 0
	if g.period > 0 {
		phase = rng.IntN(g.period)
	}
	s := &bench.Stream{Steps: make([]*bench.Step, g.steps)}
	e := g.sd * rng.NormFloat64()
	for i := range g.steps {
		e = g.phi*e + innov*rng.NormFloat64()
		d := level * (1 + e)
		st := &bench.Step{Index: i}
		if i%3 == 0 {
			st.GC = append(st.GC, bench.GCEvent{Gen: 0, PauseNS: 50e3, InStep: true})
		}
		if g.period > 0 && i%g.period == phase {
			d += level * g.spike
			st.GC = append(st.GC, bench.GCEvent{Gen: 2, PauseNS: int64(level * g.spike), InStep: true})
		}
		if g.tailFrac > 0 && rng.Float64() < g.tailFrac {
			d += level * g.tailAdd
		}
		st.DurationNS = int64(d)
		s.Steps[i] = st
	}
	return s
}

// trial compares runs x steps of old against new on every metric and
// returns the verdict per metric.
func trial(rng *rand.Rand, runs int, old, new runGen) map[string]Verdict {
	var olds, news []RunSummary
	for range runs {
		olds = append(olds, Summarize(old.stream(rng), DefaultSpikeFactor))
		news = append(news, Summarize(new.stream(rng), DefaultSpikeFactor))
	}
	rows := Compare(MetricPairs("b", olds, news), Options{})
	out := map[string]Verdict{}
	for _, r := range rows {
		out[r.Metric] = r.Verdict
	}
	return out
}

var (
	noisy    = runGen{steps: 2000, phi: 0.8, sd: 0.05, runSD: 0.01}
	periodic = runGen{steps: 2000, phi: 0.8, sd: 0.05, runSD: 0.01, period: 40, spike: 0.2}
)

func TestAAFalseRegressions(t *testing.T) {
	for name, g := range map[string]runGen{"autocorrelated": noisy, "periodic spikes": periodic} {
		t.Run(name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			const trials = 200
			falseAlarms := 0
			for range trials {
				for m, v := range trial(rng, 10, g, g) {
					if v == Regressed || v == Improved {
						falseAlarms++
						t.Logf("A/A: %s %s", m, v)
						break
					}
				}
			}
			t.Logf("A/A %s: %d of %d trials with a false verdict", name, falseAlarms, trials)
			if rate := float64(falseAlarms) / trials; rate > 0.05 {
				t.Errorf("A/A: %d of %d trials had a regressed or improved verdict (%.1f%%), want at most 5%%", falseAlarms, trials, 100*rate)
			}
		})
	}
}

func TestTailOnlyRegressionIsCaughtOnP99(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	tail := noisy
	tail.tailFrac, tail.tailAdd = 0.02, 0.30
	const trials = 200
	caught, medianFooled := 0, 0
	for range trials {
		v := trial(rng, 10, noisy, tail)
		if v["p99"] == Regressed {
			caught++
		}
		if v["p50"] != Same && v["p50"] != Unknown {
			medianFooled++
		}
	}
	t.Logf("tail-only: p99 regressed in %d of %d trials; median fooled in %d", caught, trials, medianFooled)
	if rate := float64(caught) / trials; rate < 0.95 {
		t.Errorf("2%% of steps +30%%: p99 regressed in %d of %d trials (%.1f%%), want at least 95%%", caught, trials, 100*rate)
	}
	if medianFooled > 0 {
		t.Errorf("2%% of steps +30%%: the median's verdict was regressed/improved in %d of %d trials", medianFooled, trials)
	}
}

func TestMedianShiftIsDetected(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	shifted := periodic
	shifted.shift = 0.10
	const trials = 200
	caught := 0
	for range trials {
		if trial(rng, 10, periodic, shifted)["p50"] == Regressed {
			caught++
		}
	}
	t.Logf("+10%% median: p50 regressed in %d of %d trials", caught, trials)
	if rate := float64(caught) / trials; rate < 0.95 {
		t.Errorf("+10%% median: p50 regressed in %d of %d trials (%.1f%%), want at least 95%%", caught, trials, 100*rate)
	}
}
