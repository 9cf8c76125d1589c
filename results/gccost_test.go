package results

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gcjitter/gcjitter/bench"
	"github.com/gcjitter/gcjitter/stats"
)

// gcCostManifest is a one-variant session whose timed run paused pause ns
// over 4 full collections with a typical step of typical ns, and whose
// census run saw each full collection walk 100,000 objects.
func gcCostManifest(pause, typical float64) *Manifest {
	timed := stats.RunSummary{Steps: 400, Typical: typical, Collections: [3]int{300, 30, 4}, PauseNS: [3]float64{1e6, 2e6, pause}}
	census := timed
	census.Walked = [3]int64{3_000_000, 4_000_000, 400_000}
	return &Manifest{
		Schema: ManifestSchema,
		Cases:  []Case{{Name: "c", Steps: 400, Runs: 1}},
		Runs:   []*Run{{Case: "c", Variant: "default", Status: StatusOK, Summary: &timed}},
		Census: []*Run{{Case: "c", Variant: "default", Status: StatusOK, Summary: &census}},
	}
}

// The GC cost is the full collections' mean pause per object walked over
// the run's typical step: a collector 20% slower moves it +20%, a host
// twice as slow (pauses and steps alike) does not, and without a census
// there is none. It survives the manifest's round trip (derived again on
// reading).
func TestGCCost(t *testing.T) {
	cost := func(m *Manifest) float64 {
		m.AttachWork()
		return stats.GCCost(*m.Runs[0].Summary)
	}
	base := cost(gcCostManifest(40e6, 10e6))
	if want := 1e6 * 40e6 / 4 / 100_000 / 10e6; math.Abs(base-want) > 1e-9 {
		t.Fatalf("gc-cost %v, want %v", base, want)
	}
	if slower := cost(gcCostManifest(48e6, 10e6)); math.Abs(slower/base-1.2) > 1e-9 {
		t.Errorf("a collector 20%% slower: gc-cost x%.3f, want x1.2", slower/base)
	}
	if halfSpeed := cost(gcCostManifest(80e6, 20e6)); math.Abs(halfSpeed/base-1) > 1e-9 {
		t.Errorf("a host twice as slow: gc-cost x%.3f, want unchanged", halfSpeed/base)
	}
	noCensus := gcCostManifest(40e6, 10e6)
	noCensus.Census = nil
	if v := cost(noCensus); !math.IsNaN(v) {
		t.Errorf("without a census: gc-cost %v, want none", v)
	}

	dir := t.TempDir()
	if err := WriteManifest(dir, gcCostManifest(40e6, 10e6)); err != nil {
		t.Fatal(err)
	}
	back, err := ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	if v := stats.GCCost(*back.Runs[0].Summary); math.Abs(v-base) > 1e-9 {
		t.Errorf("gc-cost after the manifest's round trip %v, want %v", v, base)
	}
}

// collectEveryStep is a run where every step of work ns holds a full
// collection of pause ns (resnet-gc-collect-every-step), with run-to-run
// jitter on the work.
func collectEveryStep(work, pause float64, rng *rand.Rand) stats.RunSummary {
	var sm stats.Summarizer
	for i := range 200 {
		w := work * (1 + 0.01*rng.NormFloat64())
		sm.Add(&bench.Step{Index: i, DurationNS: int64(w + pause), GC: []bench.GCEvent{{Gen: 2, PauseNS: int64(pause), InStep: true, Manual: true}}, Scheduled: true})
	}
	r := sm.Result(stats.SpikeRule{})
	r.FullWalk = 100_000
	return r
}

// Where every step holds a full collection, the GC cost's yardstick is the
// step without its pause: a collector 20% slower reads +20% (the median
// step, pauses included, read about +11% when the pause is half the step),
// and a step 20% faster moves the yardstick only.
func TestGCCostYardstickCollectEveryStep(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	base := stats.GCCost(collectEveryStep(10e6, 10e6, rng))
	slower := stats.GCCost(collectEveryStep(10e6, 12e6, rng))
	if got := slower/base - 1; math.Abs(got-0.2) > 0.01 {
		t.Errorf("every full collection 20%% slower: gc-cost %+.1f%%, want +20%%", 100*got)
	}
	r := collectEveryStep(10e6, 10e6, rng)
	if math.Abs(r.Yardstick/10e6-1) > 0.01 || math.Abs(r.Typical/20e6-1) > 0.01 {
		t.Errorf("yardstick %.3g, typical %.3g: want the step without its pause (10 ms), the median step (20 ms)", r.Yardstick, r.Typical)
	}
}
