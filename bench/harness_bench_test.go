package bench_test

import (
	"encoding/json"
	"os/exec"
	"testing"

	"github.com/gcjitter/gcjitter/bench"
	"github.com/gcjitter/gcjitter/internal/testpython"
)

// BenchmarkHarness measures what the worker's instrumentation costs, on the
// none model with no garbage, next to a bare Python loop doing the same
// (see BENCHMARKS.md). Run with: make bench (or go test -run '^$' -bench
// Harness -benchtime 1x ./bench).
//
// Reported per step or per event:
//
//	empty-step-ns      the duration the harness reports for a step that does
//	                   nothing: an upper bound of the instrumentation inside
//	                   the timed region (two clock reads, hooks, the empty call)
//	bare-call-ns       the same empty step called in a bare loop
//	timed-extra-ns     empty-step-ns - bare-call-ns: instrumentation alone
//	loop-extra-ns      all per-step harness work (record formatting and
//	                   writing, outside the timed region) beyond a bare loop
//	gc-event-extra-ns  cost the recorder adds to one collection
//	empty-step/bare-call, gc-event/bare-gc0: the same as ratios
func BenchmarkHarness(b *testing.B) {
	py := testpython.Torch(b)
	const steps = 200_000
	for b.Loop() {
		script, err := bench.WriteWorker(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		out, err := exec.Command(py, script, "--measure-overhead", "200000").Output()
		if err != nil {
			b.Fatalf("measure-overhead: %v", err)
		}
		var bare struct {
			BareLoopNS   float64 `json:"bare_loop_ns"`
			BareStepNS   float64 `json:"bare_step_ns"`
			BareGC0NS    float64 `json:"bare_gc0_ns"`
			RecordedGC0N float64 `json:"recorded_gc0_ns"`
		}
		if err := json.Unmarshal(out, &bare); err != nil {
			b.Fatal(err)
		}

		cfg := bench.DefaultConfig()
		cfg.Model, cfg.Device, cfg.Work, cfg.Steps, cfg.Warmup = "none", "cpu", 0, steps, 0
		s := testpython.MustComplete(b, testpython.RunWorker(b, py, cfg, "0"))
		var sum float64
		for _, st := range s.Steps {
			sum += float64(st.DurationNS)
		}
		emptyStep := sum / float64(len(s.Steps))
		wallPerStep := float64(s.End.WallNS) / float64(len(s.Steps))

		b.ReportMetric(emptyStep, "empty-step-ns")
		b.ReportMetric(bare.BareStepNS, "bare-call-ns")
		b.ReportMetric(emptyStep-bare.BareStepNS, "timed-extra-ns")
		b.ReportMetric(wallPerStep-bare.BareStepNS, "loop-extra-ns")
		b.ReportMetric(bare.RecordedGC0N-bare.BareGC0NS, "gc-event-extra-ns")
		b.ReportMetric(emptyStep/bare.BareStepNS, "empty-step/bare-call")
		b.ReportMetric(bare.RecordedGC0N/bare.BareGC0NS, "gc-event/bare-gc0")
		b.ReportMetric(0, "ns/op")
	}
}
