package stats

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gcjitter/gcjitter/bench"
)

// memRun summarises n measured steps (after warm warm-up steps) whose RSS
// climbs 100 MB over the first 45 steps (the heap filling), then is
// base + slope*i plus a collector's sawtooth of the given amplitude and
// period and a few large jumps, none on the device.
func memRun(rng *rand.Rand, warm, n int, slope, saw float64, period int) RunSummary {
	var sm Summarizer
	for i := range warm + n {
		v := int64(5 << 30) // warm-up at a level the slope must not see
		if i >= warm {
			k := i - warm
			y := 300e6 + 100e6*min(float64(k), 45)/45 + slope*float64(k) + saw*float64(k%period)/float64(period) + rng.NormFloat64()*1e5
			if rng.IntN(100) == 0 {
				y += 50e6 // an arena mapped, a page-in
			}
			v = int64(y)
		}
		sm.Add(&bench.Step{Index: i, Warmup: i < warm, DurationNS: 1e6, RSS: &v})
	}
	return sm.Result(SpikeRule{})
}

func TestRSSGrowthIsTheTrendNotTheSawtooth(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name        string
		n           int
		slope, saw  float64 // bytes per step; sawtooth amplitude
		wantPerK    float64
		tolPerKStep float64
	}{
		// The shape of ascend-gpt-periodic-gc's default: a climb, then a
		// sawtooth of full collections. Theil-Sen over all steps reads
		// 102 MiB per 1000 steps here, over the second half 15.
		{"flat sawtooth", 270, 0, 35e6, 0, 1 << 20},
		{"flat sawtooth, longer", 600, 0, 40e6, 0, 1 << 20},
		{"ramp", 600, 3e6, 0, 3e9, 30e6},
		{"ramp with sawtooth", 600, 1e6, 20e6, 1e9, 40e6},
		// Thinned: 20,000 steps keep at most 400 points.
		{"long ramp, thinned", 20000, 2e4, 5e6, 2e7, 2e6},
	} {
		r := memRun(rng, 50, tc.n, tc.slope, tc.saw, 50)
		if r.RSS == nil || r.RSS.Samples != tc.n {
			t.Fatalf("%s: RSS summary %+v, want %d samples", tc.name, r.RSS, tc.n)
		}
		if got := r.RSS.Growth; math.Abs(got-tc.wantPerK) > tc.tolPerKStep {
			t.Errorf("%s: growth %s per 1000 steps, want %s ± %s", tc.name, Bytes(got), Bytes(tc.wantPerK), Bytes(tc.tolPerKStep))
		}
		if r.RSS.Peak < 300e6 || r.RSS.Peak >= 5<<30 {
			t.Errorf("%s: peak %s: must be over measured steps only", tc.name, Bytes(r.RSS.Peak))
		}
		if r.DevMem != nil {
			t.Errorf("%s: device memory %+v on a run without it", tc.name, r.DevMem)
		}
	}
}

func TestMemoryMetricsAbsentWhenNotRecorded(t *testing.T) {
	var sm Summarizer
	for i := range 10 {
		sm.Add(&bench.Step{Index: i, DurationNS: 1e6})
	}
	r := sm.Result(SpikeRule{})
	for _, name := range []string{"rss-peak", "rss-growth", "dev-mem-peak", "dev-mem-growth"} {
		m, _ := MetricByName(name)
		if v, ok := m.Measured(r); ok {
			t.Errorf("%s = %v on a run that recorded no memory, want not measured", name, v)
		}
	}
	dev := int64(5 << 20)
	rss := int64(100 << 20)
	sm = Summarizer{}
	sm.Add(&bench.Step{DurationNS: 1e6, RSS: &rss, DeviceMem: &dev})
	r = sm.Result(SpikeRule{})
	if m, _ := MetricByName("dev-mem-peak"); m.Value(r) != float64(dev) {
		t.Errorf("dev-mem-peak = %v, want %v", m.Value(r), dev)
	}
	if m, _ := MetricByName("rss-growth"); !math.IsNaN(m.Value(r)) {
		t.Errorf("rss-growth of one sample = %v, want not measured", m.Value(r))
	}
}

func TestTimeToLimit(t *testing.T) {
	steps, hours := TimeToLimit(1<<30, 2<<30, 16<<30, 100e6) // 1 GiB/kstep from 2 of 16 GiB, 100 ms steps
	if steps != 14000 || math.Abs(hours-14000*0.1/3600) > 1e-9 {
		t.Errorf("TimeToLimit = %v steps, %v h; want 14000 steps, %v h", steps, hours, 14000*0.1/3600)
	}
	for _, g := range []float64{0, -5e6, math.NaN()} {
		if s, h := TimeToLimit(g, 1e9, 16e9, 1e6); !math.IsInf(s, 1) || !math.IsInf(h, 1) {
			t.Errorf("growth %v: %v steps, %v h; want +Inf", g, s, h)
		}
	}
	if s, _ := TimeToLimit(1e6, 20e9, 16e9, 1e6); s != 0 {
		t.Errorf("over the limit already: %v steps, want 0", s)
	}
}

func TestBytes(t *testing.T) {
	for b, want := range map[float64]string{2.9 * (1 << 30): "2.9 GiB", 12 << 20: "12 MiB", -3.5 * (1 << 20): "-3.5 MiB", 16 << 30: "16 GiB", 512: "512 B", 300 << 20: "300 MiB"} {
		if got := Bytes(b); got != want {
			t.Errorf("Bytes(%v) = %q, want %q", b, got, want)
		}
	}
}

// leakRun is one run of known truth for memory growth: RSS climbs as the
// heap fills, then saws with a full collection every 40 steps (30 MB
// teeth at a random phase), its troughs settle upwards once by up to 20
// MB in three runs of ten (as manual:50's did on ascend-gpt-periodic-gc:
// 431 -> 452 MiB), with 0.5 MB noise, plus a planted leak of leak bytes
// per step.
func leakRun(rng *rand.Rand, steps int, leak float64) RunSummary {
	var sm Summarizer
	phase := rng.IntN(40)
	settleAt, settle := steps, 0.0
	if rng.IntN(10) < 3 {
		settleAt, settle = steps/2+rng.IntN(steps/2), 20e6*rng.Float64()
	}
	for i := range steps {
		y := 250e6 + 100e6*min(float64(i), 45)/45 + 30e6*float64((i+phase)%40)/40 + 0.5e6*rng.NormFloat64() + leak*float64(i)
		if i >= settleAt {
			y += settle
		}
		v := int64(y)
		sm.Add(&bench.Step{Index: i, DurationNS: 1e6, RSS: &v})
	}
	return sm.Result(DefaultSpikeRule)
}

// The planted leak of 64 KiB per step (64 MiB per 1000 steps, four times
// the absolute floor) is regressed, and an A/A is not, at nightly size
// (5+5 runs of 2000 steps): rss-growth is a primary metric, tested like
// the others. Shorter runs raise few false alarms (at most 1 in 40), but detect it
// less often: a trough that settles by 20 MB within a 135-step half run
// can read up to 140 MiB per 1000 steps (docs/compare.md gives the rates).
func TestPlantedLeakIsRegressedAndAANot(t *testing.T) {
	if !IsPrimary("rss-growth", nil) {
		t.Fatal("rss-growth is not primary: a leak would be reported, never judged")
	}
	rng := rand.New(rand.NewPCG(31, 32))
	const trials = 200
	for _, sz := range []struct {
		runs, steps int
		nightly     bool
	}{{5, 2000, true}, {3, 500, false}, {2, 270, false}} {
		regressed := func(leak float64) int {
			n := 0
			for range trials {
				var old, new []RunSummary
				for range sz.runs {
					old = append(old, leakRun(rng, sz.steps, 0))
					new = append(new, leakRun(rng, sz.steps, leak))
				}
				rows := Compare(MetricPairs("b", old, new), Options{})
				if r := rowOf(rows, "rss-growth"); r != nil && r.Verdict == Regressed {
					n++
				}
			}
			return n
		}
		aa, planted := regressed(0), regressed(64<<10)
		t.Logf("%d+%d runs of %d steps: A/A regressed in %d of %d, planted leak in %d of %d", sz.runs, sz.runs, sz.steps, aa, trials, planted, trials)
		// 19 of 20 each way, with room for the trials' own sampling.
		if aa > trials/40 {
			t.Errorf("%d+%d runs of %d steps: A/A regressed in %d of %d trials, want at most %d", sz.runs, sz.runs, sz.steps, aa, trials, trials/40)
		}
		if sz.nightly && planted < trials-trials/40 {
			t.Errorf("%d+%d runs of %d steps: the planted leak regressed in %d of %d trials, want at least %d", sz.runs, sz.runs, sz.steps, planted, trials, trials-trials/40)
		}
	}
}

// classRun is a run of known memory truth: RSS fills for 45 steps, then
// saws with a collection every period steps (teeth of saw bytes at a
// random phase) over a floor growing leak bytes a step, with 0.5 MB of
// noise and, in one run of three, a trough that settles up by up to 8 MB
// once.
func classRun(rng *rand.Rand, steps, period int, saw, leak float64) *Mem {
	var sm Summarizer
	phase := rng.IntN(period)
	settleAt, settle := steps, 0.0
	if rng.IntN(3) == 0 {
		settleAt, settle = rng.IntN(steps), 8e6*rng.Float64()
	}
	for i := range steps {
		y := 300e6 + 100e6*min(float64(i), 45)/45 + saw*float64((i+phase)%period)/float64(period) + 0.5e6*rng.NormFloat64() + leak*float64(i)
		if i >= settleAt {
			y += settle
		}
		v := int64(y)
		sm.Add(&bench.Step{Index: i, DurationNS: 1e6, RSS: &v})
	}
	return sm.Result(SpikeRule{}).RSS
}

// TestMemClassKnownTruth: over many runs of known truth, bounded heaps are
// rarely called growing and leaks never bounded; the growth interval
// covers a leak's true slope; runs too short to tell are undecided with
// the steps that would tell.
func TestMemClassKnownTruth(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	const trials = 400
	count := func(steps func() int, saw float64, leak float64) (grows, bounded, covered int) {
		for range trials {
			m := classRun(rng, steps(), 20+rng.IntN(60), saw, leak)
			switch m.Class {
			case MemGrows:
				grows++
			case MemBounded:
				bounded++
			}
			if m.GrowthLo <= 1000*leak && 1000*leak <= m.GrowthHi {
				covered++
			}
		}
		return grows, bounded, covered
	}
	decisive := func() int { return 800 + rng.IntN(1200) }
	g, b, _ := count(decisive, 30e6, 0)
	t.Logf("bounded heaps, 800-2000 steps: %d grows, %d bounded, %d undecided of %d", g, b, trials-g-b, trials)
	if g > trials/50 || b < trials*3/4 {
		t.Errorf("bounded heaps: %d of %d called growing (want at most 2%%), %d bounded (want at least 75%%)", g, trials, b)
	}
	// 32 MiB per 1000 steps: 4 MiB over a 125-step quarter at the least.
	g, b, c := count(decisive, 30e6, 32<<10)
	t.Logf("leaks of 32 MiB/kstep, 800-2000 steps: %d grows, %d bounded, interval covers the truth in %d of %d", g, b, c, trials)
	if b > 0 || g < trials*95/100 || c < trials*80/100 {
		t.Errorf("leaks: %d of %d bounded (want 0), %d grows (want at least 95%%), interval covers the truth in %d (want at least 80%%)", b, trials, g, c)
	}
	// 8 MiB per 1000 steps, the slowest that runs out of 16 GiB within an
	// 8-hour job of 10 ms steps: 1-4 MiB over a quarter, near the noise,
	// so one run in 40 reads bounded (10 of 400 here); a policy's runs
	// pooled (PoolMem: half bounded and none growing) are rarer still, and
	// advise never picked one (TestAdviseKnownTruth).
	g, b, c = count(decisive, 30e6, 8<<10)
	t.Logf("leaks of 8 MiB/kstep, 800-2000 steps: %d grows, %d bounded, interval covers the truth in %d of %d", g, b, c, trials)
	if b > trials/20 || c < trials*80/100 {
		t.Errorf("slow leaks: %d of %d bounded (want at most 5%%), interval covers the truth in %d (want at least 80%%)", b, trials, c)
	}
	for _, leak := range []float64{0, 32 << 10} {
		for range 50 {
			steps := 100 + rng.IntN(MinStepsGrowth-100)
			if m := classRun(rng, steps, 39, 30e6, leak); m.Class != MemUndecided || m.StepsNeeded < MinStepsGrowth {
				t.Fatalf("a run of %d steps (leak %v) is %s (needs %d steps), want undecided needing at least %d", steps, leak, m.Class, m.StepsNeeded, MinStepsGrowth)
			}
		}
	}
}

// TestMemJSON: a run too short for an interval writes a summary JSON can
// hold (NaN as null) and reads it back as NaN; a full one round-trips.
func TestMemJSON(t *testing.T) {
	for _, m := range []Mem{
		{Peak: 1e8, Growth: math.NaN(), Samples: 1, GrowthLo: math.NaN(), GrowthHi: math.NaN(), Class: MemUndecided, StepsNeeded: 500},
		{Peak: 1e8, Growth: 3e6, Samples: 800, GrowthLo: 2e6, GrowthHi: 4e6, Class: MemGrows, Resolution: 5e6},
	} {
		data, err := json.Marshal(RunSummary{RSS: &m})
		if err != nil {
			t.Fatalf("%+v: %v", m, err)
		}
		var back RunSummary
		if err := json.Unmarshal(data, &back); err != nil {
			t.Fatalf("%s: %v", data, err)
		}
		same := func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }
		g := back.RSS
		if g == nil || !same(g.Growth, m.Growth) || !same(g.GrowthLo, m.GrowthLo) || !same(g.GrowthHi, m.GrowthHi) || g.Class != m.Class || g.StepsNeeded != m.StepsNeeded || g.Peak != m.Peak || g.Resolution != m.Resolution {
			t.Errorf("round trip of %+v through %s gave %+v", m, data, g)
		}
	}
}
