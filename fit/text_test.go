package fit

import (
	"strings"
	"testing"

	"github.com/gcjitter/gcjitter/stats"
)

// TestWriteTextAndCheck pins what gcjitter fit prints: the fit's summary,
// and -check's table with a figure beyond its tolerance counted, an
// undecided pause, and the tail GC does not explain.
func TestWriteTextAndCheck(t *testing.T) {
	target := Schedule{Steps: 1000, StreamSteps: 1000, Gen: [3]int{20, 2, 4}, Gaps: []int{250, 250, 250},
		Gen2PauseNS: []float64{40e6, 40e6, 40e6, 40e6}, P50: 10e6, P99: 50e6,
		Tail: stats.TailGC{Slowest: 10, WithGC: 2, Excess: 400e6, InGC: 40e6}}
	r := &Result{Target: target, Trials: make([]Trial, 3), Story: []string{"garbage: from the young rate"}, Steps: 1000}
	var b strings.Builder
	r.WriteText(&b, "job-fit.yaml", "traced", "traced/trace/fit-1")
	got := Schedule{Steps: 3000, StreamSteps: 1000, Gen: [3]int{90, 6, 12}, Gaps: []int{250}, RunPauses: []float64{20e6, 80e6},
		Gen2PauseNS: []float64{40e6}, P50: 10e6, P99: 20e6}
	if n := r.WriteCheck(&b, "job-fit.yaml", got); n != 1 {
		t.Errorf("WriteCheck counted %d figures beyond, want 1 (gen-0)", n)
	}
	want := `job-fit.yaml: fitted from traced (3 trials, streams in traced/trace/fit-1)
  garbage: from the young rate
  GC explains 10% of this job's p99 excess (2 of 10 slowest steps held a collection); its tail is elsewhere (data loading, evaluation, checkpoints, the host)
  the case reproduces the job's GC schedule, not its tail
  variant default: reproduces the traced GC schedule
  variant disabled: no collection at all: the most any policy can take off the step times
  variant threshold:700,10,1000: a raised gen-2 threshold: fewer full collections
  variant freeze: the heap built before the loop moved out of the full collections' walk
  variant manual:250: a full collection every 250 steps at a step boundary (the traced period, to the ten), none in between

check: job-fit.yaml's default variant (3 runs of 1000 steps, the traced run's size) against the trace
GC explains 10% of this job's p99 excess (2 of 10 slowest steps held a collection); its tail is elsewhere (data loading, evaluation, checkpoints, the host)
                figure         traced     reproduced         change                                                                            tolerance
          gen-2 period  250.000 steps  250.000 steps          +0.0%                                                                                 ±15%
  gen-2 pause (median)      40.000 ms      40.000 ms          +0.0%  undecided: the 2 runs of the fitted case paused 20.0-80.0 ms, wider apart than ±30%
  gen-0 per 1000 steps        20.000         30.000   +50.0% beyond                                                                    ±20% or 1 per run
  gen-1 per 1000 steps         2.000          2.000           +0.0%                                                                    ±20% or 1 per run
  gen-2 per 1000 steps         4.000          4.000           +0.0%                                                                    ±20% or 1 per run
              p50 step      10.000 ms      10.000 ms          +0.0%                                                                                    -
              p99 step      50.000 ms      20.000 ms         -60.0%                                                                                    -
p99 is not reproduced: the traced tail is not GC's
1 figures beyond their tolerance
`
	if s := b.String(); s != want {
		t.Errorf("fit's text:\n%s\nwant:\n%s", s, want)
	}
}
