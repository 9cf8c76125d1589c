package stats

import (
	"math/rand/v2"
	"testing"

	"github.com/gcjitter/gcjitter/bench"
)

// customerStream is a run of known truth shaped like the Ascend customer's
// job: a full collection every period steps whose pause is pauseFrac of
// the step (2770 -> 2900 ms is +4.7%), normal step noise of noiseFrac, a
// young collection every third step, and host stalls (no collection, +5% to
// +50%) on stallRate of the steps. It returns which steps are gen-2 steps
// and which are stalls.
func customerStream(rng *rand.Rand, steps, period int, pauseFrac, noiseFrac, stallRate, step float64) (s *bench.Stream, gen2, stall []bool) {
	s = &bench.Stream{}
	gen2, stall = make([]bool, steps), make([]bool, steps)
	phase := rng.IntN(period)
	for i := range steps {
		d := step * (1 + noiseFrac*rng.NormFloat64())
		st := &bench.Step{Index: i}
		if i%3 == 0 {
			p := 0.0005 * step
			d += p
			st.GC = append(st.GC, bench.GCEvent{Gen: 0, PauseNS: int64(p), InStep: true})
		}
		if i%period == phase {
			p := pauseFrac * step
			d += p
			st.GC = append(st.GC, bench.GCEvent{Gen: 2, PauseNS: int64(p), InStep: true})
			gen2[i] = true
		} else if rng.Float64() < stallRate {
			d += step * (0.05 + 0.45*rng.Float64())
			stall[i] = true
		}
		st.DurationNS = int64(d)
		s.Steps = append(s.Steps, st)
	}
	return s, gen2, stall
}

// TestSpikeRuleFindsCustomerPausesUnderNoise: periodic +4.7% pauses are
// found (>= 95% of them, pooled over 200 seeded runs per noise level) at
// 0.25-1% step noise, with at most 1% of ordinary steps flagged and no host
// stall blamed on the collector, on a fast host and a slow one alike.
func TestSpikeRuleFindsCustomerPausesUnderNoise(t *testing.T) {
	for _, noise := range []float64{0.0025, 0.005, 0.01} {
		for _, step := range []float64{20e6, 2770e6} {
			rng := rand.New(rand.NewPCG(uint64(noise*1e4), uint64(step)))
			var gen2Steps, found, ordinary, flagged, stalls, stallsBlamed, periodic int
			const trials = 200
			for range trials {
				s, gen2, stall := customerStream(rng, 400, 39, 0.047, noise, 0.01, step)
				r := Summarize(s, DefaultSpikeRule)
				gen2Steps += r.Gen2Steps
				found += r.SpikesWithGen2
				if r.SpikePeriod == 39 {
					periodic++
				}
				// Per step: which of the ordinary steps the rule flagged.
				base := Baseline{Typical: r.Typical, Spread: r.Spread}
				lim := DefaultSpikeRule.Limits(base)
				for i, st := range s.Steps {
					pause := 0.0
					for _, e := range st.GC {
						pause += float64(e.PauseNS)
					}
					spike, gc := lim.Classify(float64(st.DurationNS)-r.Typical, pause)
					switch {
					case gen2[i]:
					case stall[i]:
						stalls++
						if gc {
							stallsBlamed++
						}
					default:
						ordinary++
						if spike {
							flagged++
						}
					}
				}
			}
			foundShare := float64(found) / float64(gen2Steps)
			flaggedShare := float64(flagged) / float64(ordinary)
			t.Logf("noise %.2f%%, step %.0f ms: gen-2 pauses found %.1f%%, ordinary steps flagged %.3f%%, stalls blamed on GC %d of %d, period found %d of %d",
				100*noise, step/1e6, 100*foundShare, 100*flaggedShare, stallsBlamed, stalls, periodic, trials)
			if foundShare < 0.95 {
				t.Errorf("noise %.2f%% step %.0f ms: found %.1f%% of the +4.7%% pauses, want >= 95%%", 100*noise, step/1e6, 100*foundShare)
			}
			if flaggedShare > 0.01 {
				t.Errorf("noise %.2f%% step %.0f ms: %.2f%% of ordinary steps flagged, want <= 1%%", 100*noise, step/1e6, 100*flaggedShare)
			}
			if stallsBlamed > 0 {
				t.Errorf("noise %.2f%% step %.0f ms: %d host stalls blamed on the collector", 100*noise, step/1e6, stallsBlamed)
			}
			if periodic < trials*95/100 {
				t.Errorf("noise %.2f%% step %.0f ms: period 39 found in %d of %d runs, want >= 95%%", 100*noise, step/1e6, periodic, trials)
			}
		}
	}
}

// TestSpikeRuleIsHostSpeedInvariant: the same run on a host twice as slow
// (every step and pause doubled) has the same spikes; a factor rule does
// not (it measures the pause against the step, so it fires on one host
// and not the other when the compute scales and the pause does not).
func TestSpikeRuleIsHostSpeedInvariant(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	s, _, _ := customerStream(rng, 400, 39, 0.047, 0.005, 0.01, 40e6)
	slow := &bench.Stream{}
	for _, st := range s.Steps {
		c := *st
		c.DurationNS *= 2
		c.GC = nil
		for _, e := range st.GC {
			e.PauseNS *= 2
			c.GC = append(c.GC, e)
		}
		slow.Steps = append(slow.Steps, &c)
	}
	a, b := Summarize(s, DefaultSpikeRule), Summarize(slow, DefaultSpikeRule)
	if a.Spikes != b.Spikes || a.SpikesWithGen2 != b.SpikesWithGen2 || a.SpikePeriod != b.SpikePeriod || a.Gen2Excess != b.Gen2Excess {
		t.Errorf("fast host: spikes %d gen-2 %d period %v excess %v; slow: %d %d %v %v",
			a.Spikes, a.SpikesWithGen2, a.SpikePeriod, a.Gen2Excess, b.Spikes, b.SpikesWithGen2, b.SpikePeriod, b.Gen2Excess)
	}
	if a.SpikesWithGen2 < a.Gen2Steps*9/10 {
		t.Errorf("found %d of %d gen-2 steps", a.SpikesWithGen2, a.Gen2Steps)
	}
	if f := Summarize(s, SpikeRule{Factor: 4}); f.SpikesWithGen2 != 0 {
		t.Errorf("a 4x factor found %d +4.7%% pauses; the test's premise is wrong", f.SpikesWithGen2)
	}
}

// TestGen2Excess: the shift of the full-collection steps over the others
// is measured relative to the typical step, and the within-run test tells
// a real shift from none.
func TestGen2Excess(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	s, _, _ := customerStream(rng, 400, 39, 0.047, 0.005, 0, 2770e6)
	r := Summarize(s, DefaultSpikeRule)
	if r.Gen2Excess < 0.04 || r.Gen2Excess > 0.055 || r.Gen2ExcessP > 1e-4 {
		t.Errorf("gen-2 excess %.4f (p %.2g), want ~0.047 and p < 1e-4", r.Gen2Excess, r.Gen2ExcessP)
	}
	// Pauses of 0 (a full collection of an empty heap): no excess.
	falsePositives := 0
	for range 200 {
		s, _, _ := customerStream(rng, 400, 39, 0, 0.005, 0, 2770e6)
		if r := Summarize(s, DefaultSpikeRule); r.Gen2ExcessP < 0.05 {
			falsePositives++
		}
	}
	if falsePositives > 200*8/100 {
		t.Errorf("within-run test: %d of 200 null runs at p < 0.05, want about 10", falsePositives)
	}
}

// TestFactorRuleOverride: an explicit factor is the old rule, exactly.
func TestFactorRuleOverride(t *testing.T) {
	s := &bench.Stream{}
	for i := range 100 {
		st := &bench.Step{Index: i, DurationNS: 1000}
		if i%10 == 0 {
			st.DurationNS = 1600 // over 1.5x, under 2x
		}
		s.Steps = append(s.Steps, st)
	}
	if r := Summarize(s, SpikeRule{Factor: 1.5}); r.Spikes != 10 {
		t.Errorf("factor 1.5: %d spikes, want 10", r.Spikes)
	}
	if r := Summarize(s, SpikeRule{Factor: 2}); r.Spikes != 0 {
		t.Errorf("factor 2: %d spikes, want 0", r.Spikes)
	}
}

// TestPeriodOfFullCollectionsAmongYoungSpikes: on quiet steps (a device
// wait) young collections make GC spikes at irregular steps; the full
// collections' lattice is still the run's period.
func TestPeriodOfFullCollectionsAmongYoungSpikes(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	s := &bench.Stream{}
	for i := range 170 {
		st := &bench.Step{Index: i, DurationNS: int64(191e6 * (1 + 0.001*rng.NormFloat64()))}
		switch {
		case i%41 == 20:
			st.DurationNS += 10e6
			st.GC = []bench.GCEvent{{Gen: 2, PauseNS: 10e6, InStep: true}}
		case rng.Float64() < 0.05: // a 1 ms young collection
			st.DurationNS += 1e6
			st.GC = []bench.GCEvent{{Gen: 1, PauseNS: 1e6, InStep: true}}
		}
		s.Steps = append(s.Steps, st)
	}
	r := Summarize(s, DefaultSpikeRule)
	if r.SpikesWithGC <= r.SpikesWithGen2 {
		t.Fatalf("GC spikes %d, of them full %d: the young spikes the test needs are missing", r.SpikesWithGC, r.SpikesWithGen2)
	}
	if r.SpikePeriod != 41 {
		t.Errorf("period %v, want 41 (the full collections')", r.SpikePeriod)
	}
}
