package stats

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gcjitter/gcjitter/bench"
)

// tailRun is a run of known truth: n steps of 10 ms with 2% noise; the
// slow steps listed take extra ms, of which a collection inside the step
// paused gc ms; every 7th other step holds a 0.05 ms young collection.
func tailRun(n int, slow map[int][2]float64) (durs, pauses []float64) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range n {
		d, p := 10e6*(1+0.02*rng.NormFloat64()), 0.0
		if i%7 == 0 {
			p = 0.05e6
			d += p
		}
		if s, ok := slow[i]; ok {
			d, p = 10e6+s[0]*1e6, s[1]*1e6
		}
		durs, pauses = append(durs, d), append(pauses, p)
	}
	return durs, pauses
}

func TestTailOfKnownTruth(t *testing.T) {
	// 1000 steps: the slowest 1% are the 10 slow ones. Three are +40 ms
	// full collections, seven +40 ms data-loading stalls: GC explains 3/10
	// of the excess (within the noise of the median step).
	slow := map[int][2]float64{}
	for k := range 10 {
		gc := 0.0
		if k < 3 {
			gc = 40
		}
		slow[100*k+3] = [2]float64{40, gc}
	}
	durs, pauses := tailRun(1000, slow)
	tail := TailOf(durs, pauses)
	if tail.Slowest != 10 || tail.WithGC != 3 {
		t.Fatalf("slowest %d with GC %d, want 10 and 3", tail.Slowest, tail.WithGC)
	}
	if math.Abs(tail.Share()-0.3) > 0.01 || tail.Explained() {
		t.Errorf("share %.3f explained %v, want 0.30 and not explained", tail.Share(), tail.Explained())
	}
	if s := tail.String(); !strings.Contains(s, "GC explains 30% of this job's p99 excess (3 of 10 slowest steps held a collection)") ||
		!strings.Contains(s, "its tail is elsewhere") {
		t.Errorf("sentence: %s", s)
	}

	// All ten stalls are collections: GC explains the tail, and nothing
	// says it is elsewhere.
	for k := range 10 {
		slow[100*k+3] = [2]float64{40, 40}
	}
	tail = TailOf(tailRun(1000, slow))
	if math.Abs(tail.Share()-1) > 0.01 || !tail.Explained() || strings.Contains(tail.String(), "elsewhere") {
		t.Errorf("all GC: share %.3f, %s", tail.Share(), tail)
	}

	// A pause counts only up to its step's excess: a 40 ms pause in a step
	// 20 ms over the median explains 20 ms, not 40.
	tail = TailOf([]float64{10, 10, 10, 30}, []float64{0, 0, 0, 40})
	if tail.Slowest != 1 || tail.Excess != 20 || tail.InGC != 20 {
		t.Errorf("capped pause: %+v, want 1 step, excess 20, in GC 20", tail)
	}
}

func TestTailOfOnlyTheSlowest(t *testing.T) {
	// 250 steps: the slowest 1% is 3 steps (rounded up). The young
	// collections of the ordinary steps are not in the tail: GC explains
	// nothing of it.
	slow := map[int][2]float64{10: {30, 0}, 20: {31, 0}, 30: {32, 0}, 40: {5, 5}}
	tail := TailOf(tailRun(250, slow))
	if tail.Slowest != 3 || tail.WithGC != 0 || tail.InGC != 0 {
		t.Errorf("%+v: want the 3 stalls and no collection", tail)
	}
	if got := tail.Excess / 1e6; math.Abs(got-93) > 1 {
		t.Errorf("excess %.2f ms, want 93 (30+31+32 over the median)", got)
	}
	// Pooled with a run whose tail is all GC, of equal excess: half.
	pooled := tail.Add(TailGC{Slowest: 3, WithGC: 3, Excess: tail.Excess, InGC: tail.Excess})
	if pooled.Slowest != 6 || pooled.WithGC != 3 || math.Abs(pooled.Share()-0.5) > 1e-9 {
		t.Errorf("pooled %+v share %.3f, want 6 steps, 3 with GC, share 0.5", pooled, pooled.Share())
	}
	// Ties at the cut: as many as the 1% needs, the first ones.
	flat, p := make([]float64, 200), make([]float64, 200)
	for i := range flat {
		flat[i] = 10
	}
	p[1], p[2] = 3, 3
	if tail := TailOf(flat, p); tail.Slowest != 2 || tail.WithGC != 1 || tail.Excess != 0 {
		t.Errorf("ties: %+v, want steps 0 and 1, one with a collection, no excess", tail)
	}
	if (TailGC{}).Share() != 0 || TailOf(nil, nil).Slowest != 0 {
		t.Error("no steps must explain nothing")
	}
}

// TestSummaryTail: a run's summary carries its tail, from the in-step
// pauses only (a collection between steps is not in any step's time).
func TestSummaryTail(t *testing.T) {
	var sm Summarizer
	for i := range 300 {
		st := &bench.Step{Index: i, DurationNS: 10e6}
		switch i {
		case 50: // a 30 ms stall holding a 30 ms full collection
			st.DurationNS, st.GC = 40e6, []bench.GCEvent{{Gen: 2, PauseNS: 30e6, InStep: true}}
		case 150, 250: // 30 ms stalls; one has a collection before the step began
			st.DurationNS = 40e6
			if i == 250 {
				st.GC = []bench.GCEvent{{Gen: 2, PauseNS: 30e6}}
			}
		}
		sm.Add(st)
	}
	tail := sm.Result(DefaultSpikeRule).Tail
	if tail == nil || tail.Slowest != 3 || tail.WithGC != 1 || math.Abs(tail.Share()-1.0/3) > 1e-9 {
		t.Errorf("tail %+v, want 3 slowest steps, 1 with an in-step collection, a third of the excess", tail)
	}
}
