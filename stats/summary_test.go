package stats

import (
	"math"
	"slices"
	"testing"

	"github.com/gcjitter/gcjitter/bench"
)

func TestQuantileMatchesNumpyType7(t *testing.T) {
	// numpy.quantile([1, 2, 3, 4, 10], [0, .5, .9, .99, 1]) = [1, 3, 7.6, 9.76, 10]
	data := []float64{1, 2, 3, 4, 10}
	for q, want := range map[float64]float64{0: 1, 0.5: 3, 0.9: 7.6, 0.99: 9.76, 1: 10} {
		if got := Quantile(data, q); math.Abs(got-want) > 1e-9 {
			t.Errorf("Quantile(%v) = %v, want %v", q, got, want)
		}
	}
}

func TestSummarizeCountsSpikesAndAttributesThem(t *testing.T) {
	s := &bench.Stream{Steps: []*bench.Step{{Warmup: true, DurationNS: 1e9}}}
	for i := range 100 {
		st := &bench.Step{Index: i + 1, DurationNS: 1000}
		switch {
		case i%20 == 19: // a spike with a full collection in it
			st.DurationNS = 3000
			st.GC = []bench.GCEvent{{Gen: 2, PauseNS: 2000, InStep: true}}
		case i == 50: // a spike without GC
			st.DurationNS = 2500
		case i%10 == 0: // a cheap young collection
			st.GC = []bench.GCEvent{{Gen: 0, PauseNS: 10, InStep: true}}
		}
		s.Steps = append(s.Steps, st)
	}
	r := Summarize(s, DefaultSpikeRule)
	if r.Steps != 100 || r.P50 != 1000 || r.Max != 3000 {
		t.Errorf("steps %d p50 %v max %v: the warm-up step leaked in?", r.Steps, r.P50, r.Max)
	}
	if want := (94*1000 + 5*3000 + 2500.0) / 100; r.Mean != want {
		t.Errorf("mean %v, want %v (the measured steps only)", r.Mean, want)
	}
	if r.Spikes != 6 || r.SpikesWithGC != 5 {
		t.Errorf("spikes %d (with GC %d), want 6 (5)", r.Spikes, r.SpikesWithGC)
	}
	if r.Collections != [3]int{9, 0, 5} || r.MaxPauseNS[2] != 2000 {
		t.Errorf("collections %v max pause %v", r.Collections, r.MaxPauseNS)
	}
	wantShare := (5*2000.0 + 9*10) / (94*1000 + 5*3000 + 2500 - 1000 + 1000)
	if math.Abs(r.GCShare-wantShare) > 1e-3 {
		t.Errorf("GC share %v, want %v", r.GCShare, wantShare)
	}
}

func TestSummarizeGen2AttributionAndUnscheduled(t *testing.T) {
	s := &bench.Stream{}
	for i := range 60 {
		st := &bench.Step{Index: i, DurationNS: 1000}
		switch {
		case i%20 == 19: // scheduled full collection: a spike, not unscheduled
			st.DurationNS, st.Scheduled = 5000, true
			st.GC = []bench.GCEvent{{Gen: 2, PauseNS: 4000, InStep: true, Manual: true}}
		case i == 30: // an automatic young collection that made a spike
			st.DurationNS = 5000
			st.GC = []bench.GCEvent{{Gen: 0, PauseNS: 4000, InStep: true}}
		case i == 31: // a collection between steps: unscheduled, not in the step
			st.GC = []bench.GCEvent{{Gen: 1, PauseNS: 10, InStep: false}}
		case i == 10 || i == 45 || i == 52 || i == 53: // the host stalls: no collection
			st.DurationNS = 5000
		}
		s.Steps = append(s.Steps, st)
	}
	r := Summarize(s, DefaultSpikeRule)
	if r.Spikes != 8 || r.SpikesWithGC != 4 || r.SpikesWithGen2 != 3 || r.Gen2Steps != 3 {
		t.Errorf("spikes %d, with GC %d, with gen-2 %d, gen-2 steps %d; want 8, 4, 3, 3", r.Spikes, r.SpikesWithGC, r.SpikesWithGen2, r.Gen2Steps)
	}
	if r.Unscheduled != 2 {
		t.Errorf("unscheduled %d, want 2 (the young collection and the one between steps)", r.Unscheduled)
	}
	if r.SpikePeriod != 20 {
		// GC spikes at 19, 30, 39, 59: every 20 steps, with one stray; the
		// four host stalls (no collection) would break the lattice's 2/3.
		t.Errorf("period %v, want 20", r.SpikePeriod)
	}
}

func TestPeriodToleratesStraySpikes(t *testing.T) {
	for _, c := range []struct {
		spikes []int
		want   float64
	}{
		{[]int{38, 77, 116, 155, 193}, 39},         // the ascend case's gen-2 steps
		{[]int{38, 77, 100, 116, 155, 193}, 39},    // plus one noise spike
		{[]int{5, 38, 77, 100, 116, 155, 193}, 39}, // plus two
		{[]int{3, 50, 52, 90, 170, 171}, 0},        // no regularity
		{[]int{10, 20}, 0},                         // too few
		{[]int{0, 40, 80, 121, 159, 200}, 40},      // jitter of a step
	} {
		if got := period(c.spikes); got != c.want {
			t.Errorf("period(%v) = %v, want %v", c.spikes, got, c.want)
		}
	}
}

// P99NoGen2 is the p99 of the steps without a full collection: a stall in
// 3% of them shows there even where full collections (every 40th step, 5x
// the step) make the run's p99; a young collection does not take a step
// out of it; a run without full collections has none (p99 is it).
func TestSummarizeP99NoGen2(t *testing.T) {
	s := &bench.Stream{}
	var other []float64
	for i := range 400 {
		st := &bench.Step{Index: i, DurationNS: 1000 + int64(i%7)}
		switch {
		case i%40 == 20:
			st.DurationNS = 5000
			st.GC = []bench.GCEvent{{Gen: 2, PauseNS: 4000, InStep: true}}
		case i%33 == 5: // a stall, 12 of 400 steps
			st.DurationNS = 2500
		case i%10 == 3:
			st.GC = []bench.GCEvent{{Gen: 0, PauseNS: 10, InStep: true}}
		}
		if i%40 != 20 {
			other = append(other, float64(st.DurationNS))
		}
		s.Steps = append(s.Steps, st)
	}
	r := Summarize(s, DefaultSpikeRule)
	SortFloat64s(other)
	if want := Quantile(other, 0.99); r.P99NoGen2 != want || want != 2500 {
		t.Errorf("p99 without full collections %v, want %v (the stalls)", r.P99NoGen2, want)
	}
	if r.P99 != 5000 {
		t.Errorf("p99 %v, want the full collections' 5000", r.P99)
	}
	for _, st := range s.Steps {
		st.GC = nil
	}
	if r := Summarize(s, DefaultSpikeRule); r.P99NoGen2 != 0 {
		t.Errorf("no full collection: %v, want 0 (p99 is the same thing)", r.P99NoGen2)
	}
}

// RelTail on known truth: docs/compare.md's worked example, a host that
// runs a whole run slower, and collect-every-step.
func TestRelTailKnownTruth(t *testing.T) {
	var durs, fullPause []float64
	var fullAt []int
	for block, base := range []float64{20, 25} {
		for i := range RelBlock {
			d := base
			if i == 10 {
				d = 5 * base // a full collection of 4 typical steps
				fullAt, fullPause = append(fullAt, block*RelBlock+i), append(fullPause, 4*base)
			}
			durs = append(durs, d)
		}
	}
	sorted := slices.Clone(durs)
	SortFloat64s(sorted)
	rel := RelTail(durs, fullAt, fullPause, 0.99)
	t.Logf("docs/compare.md's example: p99-rel %.2f, raw p99 %.2f ms", rel, Quantile(sorted, 0.99))
	if math.Abs(rel-5) > 1e-9 {
		t.Errorf("p99-rel %v, want 5: both long steps are 5 local steps", rel)
	}
	if raw := Quantile(sorted, 0.99); !(raw > 100 && raw < 125) {
		t.Errorf("raw p99 %v, want between the two blocks' long steps", raw)
	}
	// The whole run 30% slower: the same tail in local steps.
	slow := slices.Clone(durs)
	slowPause := slices.Clone(fullPause)
	for i := range slow {
		slow[i] *= 1.3
	}
	for i := range slowPause {
		slowPause[i] *= 1.3
	}
	if got := RelTail(slow, fullAt, slowPause, 0.99); math.Abs(got-rel) > 1e-9 {
		t.Errorf("a uniformly slower run reads %v, want %v", got, rel)
	}
	// Every step a full collection (collect-every-step): the yardstick is
	// the step less its pause, so a pause 20% longer reads about
	// 1 + 0.2 x pause/step.
	var every, everyPause []float64
	var everyAt []int
	for i := range 100 {
		every, everyAt, everyPause = append(every, 10+float64(i%5)*0.01), append(everyAt, i), append(everyPause, 5)
	}
	base := RelTail(every, everyAt, everyPause, 0.99)
	longer := slices.Clone(every)
	longerPause := slices.Clone(everyPause)
	for i := range longer {
		longer[i]++
		longerPause[i]++
	}
	if got := RelTail(longer, everyAt, longerPause, 0.99); !(got > base*1.05) {
		t.Errorf("collect-every-step: pauses 20%% longer read %v against %v", got, base)
	}
	if !math.IsNaN(RelTail(nil, nil, nil, 0.99)) {
		t.Error("no steps: want NaN")
	}
}
